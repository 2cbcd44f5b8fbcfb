"""The answer pipeline, top to bottom: retrieve (dense + BM25, fused) -> rerank -> generate ->
match references.

`RagPipeline.answer(question)` returns the Answer object of DESIGN.md; `ragqa ask --json`, the
UI and the evaluators all read that one shape.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import asdict, dataclass, field
from typing import Any

from llama_index.core.llms import LLM
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle
from llama_index.core.vector_stores.types import MetadataFilters

from rag.models import build_embedding, build_llm, token_counter
from rag.postprocessors import FeatureRerank, build_reranker
from rag.references import match_references, split_sentences
from rag.retrieval import LexicalScores, bm25_version, check_filters, hybrid_retriever, metadata_filters
from rag.scoring import build_scorer, encoder_beside, reuse_stored_vectors
from rag.support import support_scorer
from rag.settings import Settings
from rag.store import collection

_MARKER = re.compile(r"\s*\[\d+(?:\s*[,;-]\s*\d+)*\]")
_TEMPLATE_TOKENS = 16  # the chat template's role markers around the prompt


class QuestionError(ValueError):
    """The question cannot be asked as it is (empty, or longer than the model's window)."""


def check_question(question: str) -> None:
    if not question.strip():
        raise QuestionError("the question is empty")


@dataclass
class Answer:
    question: str
    answer: str
    answerable: bool
    segments: list[dict[str, Any]] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    scorer: str = ""  # which model scored the references: learned-support or llm-verifier
    reranker: str = ""  # which model reranked: ltr (learned ranker) or the scorer's kind
    standalone_question: str | None = None  # a chat's follow-up as rewritten for retrieval; None if not

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def source_entry(ref: int, node: NodeWithScore) -> dict[str, Any]:
    """How a chunk is shown and cited: its number in the prompt and its location."""
    meta = node.node.metadata
    return {
        "ref": ref,
        "chunk_id": node.node.node_id,
        "doc": meta.get("doc"),
        "page": meta.get("page"),
        "slide": meta.get("slide"),
        "section": meta.get("section"),
        "text": node.node.get_content(metadata_mode=MetadataMode.NONE),
        "score": round(float(node.score or 0.0), 4),
    }


class RagPipeline:
    def __init__(self, settings: Settings, llm: LLM | None = None):
        self.settings = settings
        embedding = build_embedding(settings)
        self.llm = llm or build_llm(settings)
        self.embedding = embedding
        self.retriever = hybrid_retriever(settings, embedding, self.llm)
        self._lexical_version = bm25_version(settings)
        self.scorer = build_scorer(settings, embedding)
        # The store's vectors are the bi-encoder's: the learned ranker reads their cosines.
        self.encoder = encoder_beside(self.scorer, settings, embedding)
        self.reranker = build_reranker(settings, self.encoder, self.scorer, settings.retrieval.top_k)
        self.support = support_scorer(settings, self.encoder)
        self.collection = collection(settings)
        self.prompt = settings.prompt_file.read_text(encoding="utf-8")
        self.condense_prompt = settings.condense_prompt_file.read_text(encoding="utf-8")
        self.count_tokens = token_counter(self.llm)

    def answer(
        self,
        question: str,
        on_token: Callable[[str], None] | None = None,
        docs: list[str] | None = None,
        where: dict[str, str] | None = None,
        history: Sequence[tuple[str, str]] = (),
    ) -> Answer:
        """Answer from all documents, or only from `docs` (document ids as ingested) and from
        documents whose header fields equal `where`'s values. With the chat's earlier
        (question, answer) turns in `history`, the question is first rewritten to stand alone."""
        cfg = self.settings
        check_question(question)
        if docs or where:
            check_filters(cfg, docs or [], where or {})
        asked, clock = question, time.perf_counter()
        question = self.standalone(question, history)
        self._check_length(question)
        timings: dict[str, float] = {"condense": round((time.perf_counter() - clock) * 1000, 1)} if history else {}
        clock = time.perf_counter()

        def lap(stage: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            timings[stage] = round((now - clock) * 1000, 1)
            clock = now

        query = QueryBundle(question)
        filters = metadata_filters(docs, where)
        retrieved = self.current_retriever(filters).retrieve(query)
        reuse_stored_vectors(self.encoder, self.collection, retrieved)
        lap("retrieve")
        top = self.reranker.postprocess_nodes(retrieved, query_bundle=query)
        lap("rerank")
        kinds = {"scorer": self.support.kind, "reranker": self.reranker.scorer_kind,
                 "standalone_question": question if question != asked else None}
        refused = Answer(asked, cfg.refusal, False, timings_ms=timings, **kinds)
        if not top or self._relevance(question, top) < cfg.retrieval.min_score:
            timings.update(generate=0.0, match=0.0)
            return refused

        top = self._fit(question, top)
        text = self._generate(question, top, on_token)
        lap("generate")
        if is_refusal(text, cfg.refusal):
            timings["match"] = 0.0
            return refused

        sources = [source_entry(i + 1, node) for i, node in enumerate(top)]
        segments = self._match(text, top, sources)
        lap("match")
        if not any(segment["supported"] for segment in segments):
            # Not one sentence is backed by a source: a hallucination, not an answer.
            return refused
        return Answer(asked, text, True, segments, sources, timings, **kinds)

    def standalone(self, question: str, history: Sequence[tuple[str, str]]) -> str:
        """The follow-up `question` rewritten by the LLM into one that stands alone, from the
        last `history_turns` (question, answer) turns (LlamaIndex's condense-question pattern;
        retrieval cannot resolve "and the passenger?"). Unchanged without history, and when the
        rewrite comes back empty."""
        turns = list(history)[-self.settings.history_turns :] if self.settings.history_turns else []
        if not turns:
            return question
        conversation = "\n".join(f"User: {q}\nAssistant: {a}" for q, a in turns)
        reply = self.llm.complete(self.condense_prompt.format(history=conversation, question=question)).text
        lines = [line.strip() for line in reply.strip().splitlines() if line.strip()]
        rewritten = re.sub(r"^(standalone question|question)\s*:\s*", "", lines[0], flags=re.I) if lines else ""
        return rewritten.strip().strip('"') or question

    def _relevance(self, question: str, top: list[NodeWithScore]) -> float:
        """The refusal gate's measure: the best calibrated e5 relevance among the kept chunks. The
        ranker's score says which candidate is likeliest the one, not whether any is on topic."""
        texts = [node.node.get_content(metadata_mode=MetadataMode.EMBED) for node in top]
        return max(self.encoder([(question, text) for text in texts]))

    def current_retriever(self, filters: MetadataFilters | None = None) -> BaseRetriever:
        """Hybrid retrieval over the store as it is now: documents added since the pipeline was
        built (an upload in the UI) rebuilt the BM25 index on disk, which is loaded again."""
        version = bm25_version(self.settings)
        if version != self._lexical_version:
            self._lexical_version = version
            self.retriever = hybrid_retriever(self.settings, self.embedding, self.llm)
            if isinstance(self.reranker, FeatureRerank):
                self.reranker.use_lexical(LexicalScores(self.settings))
        if filters is None:
            return self.retriever
        return hybrid_retriever(self.settings, self.embedding, self.llm, filters=filters)

    def _prompt(self, question: str, top: list[NodeWithScore]) -> str:
        context = "\n\n".join(
            f"[{i + 1}] {node.node.get_content(metadata_mode=MetadataMode.LLM)}"
            for i, node in enumerate(top)
        )
        return self.prompt.format(context=context, question=question, refusal=self.settings.refusal)

    @property
    def _window(self) -> int:
        """Tokens the prompt may take: the model's window less the answer and the chat template."""
        cfg = self.settings.llm
        return cfg.n_ctx - cfg.max_new_tokens - _TEMPLATE_TOKENS

    def _check_length(self, question: str) -> None:
        """A question that leaves no room for context is refused before any work."""
        if self.count_tokens(self._prompt(question, [])) >= self._window:
            room = self._window - self.count_tokens(self._prompt("", []))
            raise QuestionError(
                f"the question is too long: {self.count_tokens(question)} tokens, and the model's window of "
                f"{self.settings.llm.n_ctx} (llm.n_ctx) leaves room for at most {max(room, 0)}: shorten it"
            )

    def _fit(self, question: str, top: list[NodeWithScore]) -> list[NodeWithScore]:
        """The best-ranked chunks that fit the window; the first is cut short if it alone does
        not fit. Without this llama.cpp fails on a long question with a full context."""

        def fits(nodes: list[NodeWithScore]) -> bool:
            return self.count_tokens(self._prompt(question, nodes)) <= self._window

        while len(top) > 1 and not fits(top):
            top = top[:-1]
        while not fits(top) and (text := top[0].node.get_content(metadata_mode=MetadataMode.NONE)):
            node = top[0].node.model_copy()
            node.set_content(text[: int(len(text) * 0.8)])
            top = [NodeWithScore(node=node, score=top[0].score)]
        return top

    def _generate(self, question: str, top: list[NodeWithScore], on_token: Callable[[str], None] | None) -> str:
        prompt = self._prompt(question, top)
        if on_token is None:
            return self.llm.complete(prompt).text.strip()
        parts = []
        # Closing the stream when on_token raises (an abandoned answer) stops the decoding.
        with closing(self.llm.stream_complete(prompt)) as stream:
            for chunk in stream:
                parts.append(chunk.delta or "")
                on_token(chunk.delta or "")
        return "".join(parts).strip()

    def _match(self, text: str, top: list[NodeWithScore], sources: list[dict]) -> list[dict[str, Any]]:
        cfg = self.settings.references
        sentences = split_sentences(text)
        chunks = [node.node.get_content(metadata_mode=MetadataMode.EMBED) for node in top]
        # Citation markers are for readers; they would only add noise to the scorer's input.
        segments = match_references(
            [_MARKER.sub("", s) for s in sentences], chunks, self.support,
            threshold=cfg.threshold, max_span=cfg.max_span, margin=cfg.margin,
            context_bonus=cfg.context_bonus,
        )
        return [
            {
                "text": " ".join(sentences[seg.start : seg.end + 1]),
                "sentences": seg.sentences,
                "supported": seg.supported,
                "references": [
                    {key: sources[ref.chunk][key] for key in ("ref", "chunk_id", "doc", "page", "slide", "section")}
                    | {"score": round(ref.score, 4)}
                    for ref in seg.references
                ],
            }
            for seg in segments
        ]


def is_refusal(text: str, refusal: str) -> bool:
    def norm(s: str) -> str:
        return re.sub(r"\W+", " ", s).strip().lower()

    return not text or norm(refusal) in norm(text)[: len(norm(refusal)) + 40]
