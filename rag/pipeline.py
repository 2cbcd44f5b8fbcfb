"""The answer pipeline, top to bottom: retrieve (dense + BM25, fused) -> rerank -> write the
context (the chunks' relevant sentences and rows within a token budget) -> generate -> match
references.

`RagPipeline.answer(question)` returns the Answer object of docs/FORMATS.md; `ragqa ask --json`, the
UI and the evaluators all read that one shape.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from llama_index.core.llms import LLM
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode
from llama_index.core.vector_stores.types import MetadataFilters

from rag.context import ContextBuilder
from rag.models import build_embedding, build_llm, build_rewriting_llm, token_counter
from rag.postprocessors import build_reranker
from rag.references import ReferenceMatcher, Segment
from rag.rewrite import QuestionRewriter, corpus_language, script_language
from rag.retrieval import check_filters, hybrid_retriever, lexical_index, lexical_version, metadata_filters
from rag.scoring import build_scorer, encoder_beside, reuse_stored_vectors
from rag.support import support_scorer
from rag.settings import Settings
from rag.store import collection, stored_nodes

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
    translated_question: str | None = None  # the question in the corpus's language, when it was asked in the other
    refused_by: str | None = None  # which gate refused: retrieval (nothing relevant), model (it declined), references (nothing supported)

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
        "page_end": meta.get("page_end"),  # a chunk may run over pages
        "slide": meta.get("slide"),
        "section": meta.get("section"),
        "ocr": bool(meta.get("ocr")),  # the text was read from a picture or a scan: it may hold misreadings
        "text": node.node.get_content(metadata_mode=MetadataMode.NONE),
        "score": round(float(node.score or 0.0), 4),
    }


def segment_entry(segment: Segment, sources: list[dict[str, Any]]) -> dict[str, Any]:
    """A matched segment as the Answer carries it: its references located like its sources."""
    return {
        "text": segment.text,
        "sentences": segment.sentences,
        "supported": segment.supported,
        "references": [
            {key: sources[ref.chunk][key] for key in ("ref", "chunk_id", "doc", "page", "page_end", "slide", "section", "ocr")}
            | {"score": round(ref.score, 4)}
            for ref in segment.references
        ],
    }


class RagPipeline:
    def __init__(self, settings: Settings, llm: LLM | None = None):
        self.settings = settings
        embedding = build_embedding(settings)
        self.llm = llm or build_llm(settings)
        self.embedding = embedding
        self.retriever = hybrid_retriever(settings, embedding, self.llm)
        self._has_lexical = lexical_index(settings).exists()
        self.scorer = build_scorer(settings, embedding)
        # The store's vectors are the bi-encoder's: the learned ranker reads their cosines.
        self.encoder = encoder_beside(self.scorer, settings, embedding)
        self.reranker = build_reranker(settings, self.encoder, self.scorer, settings.retrieval.top_k)
        self.matcher = ReferenceMatcher.from_settings(settings.references, support_scorer(settings, self.encoder))
        self.collection = collection(settings)
        self.prompt = settings.prompt_file.read_text(encoding="utf-8")
        self.rewriter = QuestionRewriter(
            llm or build_rewriting_llm(settings), settings.condense_prompt_file.read_text(encoding="utf-8"),
            settings.translate_prompt_file.read_text(encoding="utf-8"), settings.history_turns,
        )
        self._corpus_language: tuple[int | None, str | None] = (None, None)  # (store version, language)
        self.count_tokens = token_counter(self.llm)
        self.context = ContextBuilder(self.encoder, self.count_tokens, list(settings.headers.fields),
                                      settings.context.tables, settings.context.rank_weight)

    def answer(
        self,
        question: str,
        on_token: Callable[[str], None] | None = None,
        docs: list[str] | None = None,
        where: dict[str, str] | None = None,
        history: Sequence[tuple[str, str]] = (),
        threshold: float | None = None,
        top_n: int | None = None,
        top_k: int | None = None,
    ) -> Answer:
        """Answer from all documents, or only from `docs` (document ids as ingested) and from
        documents whose header fields equal `where`'s values. With the chat's earlier
        (question, answer) turns in `history`, the question is first rewritten to stand alone.
        `threshold`, `top_n` and `top_k` override the references' support threshold, the chunks
        retrieved and the chunks kept after reranking, for this answer."""
        cfg = self.settings
        check_question(question)
        if docs or where:
            check_filters(cfg, docs or [], where or {})
        asked, started = question, time.perf_counter()
        question = self.rewriter.standalone(question, history)
        self._check_length(question)
        timings: dict[str, float] = {"condense": round((time.perf_counter() - started) * 1000, 1)} if history else {}
        clock = time.perf_counter()

        def lap(stage: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            timings[stage] = round((now - clock) * 1000, 1)
            clock = now

        retriever = self.current_retriever(metadata_filters(docs, where), top_n)
        reranker = self.reranker if top_k in (None, self.reranker.top_n) else self.reranker.model_copy(update={"top_n": top_k})
        translated = self._translated(question)
        if translated:
            lap("translate")
        retrieved = retriever.retrieve(QueryBundle(question))
        if translated:  # both questions' candidates, ranked by the translation
            known = {n.node.node_id for n in retrieved}
            retrieved += [n for n in retriever.retrieve(QueryBundle(translated)) if n.node.node_id not in known]
        search = translated or question
        reuse_stored_vectors(self.encoder, self.collection, retrieved)
        lap("retrieve")
        top = reranker.postprocess_nodes(retrieved, query_bundle=QueryBundle(search))
        lap("rerank")
        kinds = {"scorer": self.matcher.scorer.kind, "reranker": self.reranker.scorer_kind,
                 "standalone_question": question if question != asked else None, "translated_question": translated}

        def refused(gate: str, segments: list | None = None, sources: list | None = None) -> Answer:
            """The refusal; when no sentence the model wrote was supported, its draft stays in
            the segments (all marked unsupported) so readers see what was held back."""
            return Answer(asked, cfg.refusal, False, segments or [], sources or [], timings, refused_by=gate, **kinds)

        if not top or self._relevance(search, top) < cfg.retrieval.min_score:
            timings.update(context=0.0, generate=0.0, match=0.0)
            return refused("retrieval")

        context, top = self.context.build(search, top, self._budget(question))
        lap("context")
        prompt = self._prompt(question, context, self.language(asked))  # answered in the asker's language
        text = self._generate(prompt, on_token, timings, started) if top else ""
        lap("generate")
        if is_refusal(text, cfg.refusal):
            timings["match"] = 0.0
            return refused("model")

        sources = [source_entry(i + 1, node) for i, node in enumerate(top)]
        segments = self._match(text, top, sources, threshold)
        lap("match")
        if not any(segment["supported"] for segment in segments):
            # Not one sentence is backed by a source: a hallucination, not an answer.
            return refused("references", segments, sources)
        return Answer(asked, text, True, segments, sources, timings, **kinds)

    def rematch(self, answer: Answer, threshold: float) -> Answer:
        """`answer` with its references found again at another support threshold: only the
        matcher runs. A refusal by retrieval or by the model has nothing to match."""
        if answer.refused_by not in (None, "references") or not answer.segments:
            return answer
        clock = time.perf_counter()
        draft = " ".join(segment["text"] for segment in answer.segments)
        segments = self._match(draft, self._stored(answer.sources), answer.sources, threshold)
        timings = answer.timings_ms | {"match": round((time.perf_counter() - clock) * 1000, 1)}
        if not any(segment["supported"] for segment in segments):
            return replace(answer, answer=self.settings.refusal, answerable=False, segments=segments,
                           timings_ms=timings, refused_by="references")
        return replace(answer, answer=draft if answer.refused_by else answer.answer, answerable=True,
                       segments=segments, timings_ms=timings, refused_by=None)

    def _stored(self, sources: list[dict[str, Any]]) -> list[NodeWithScore]:
        """The cited chunks as the store holds them (with their header, as the matcher reads
        them); a chunk deleted since keeps the text the answer showed."""
        stored = {n.node_id: n for n in stored_nodes(self.collection, ids=[s["chunk_id"] for s in sources])}
        return [NodeWithScore(node=stored.get(s["chunk_id"]) or TextNode(text=s["text"], metadata={"doc": s["doc"]}),
                              score=s["score"]) for s in sources]

    def _relevance(self, question: str, top: list[NodeWithScore]) -> float:
        """The refusal gate's measure: the best calibrated e5 relevance among the kept chunks. The
        ranker's score says which candidate is likeliest the one, not whether any is on topic."""
        texts = [node.node.get_content(metadata_mode=MetadataMode.EMBED) for node in top]
        return max(self.encoder([(question, text) for text in texts]))

    def _translated(self, question: str) -> str | None:
        """The question in the corpus's language, when translation is on and they differ."""
        if not self.settings.translate_questions:
            return None
        version = lexical_version(self.settings)
        if self._corpus_language[0] != version or version is None:
            # A sample of the store tells its language; read again only when the store changed.
            sample = self.collection.get(limit=500, include=["documents"])["documents"] or []
            self._corpus_language = (version, corpus_language(sample))
        language = self._corpus_language[1]
        if language is None or script_language(question) == language:
            return None
        return self.rewriter.translate(question, language)

    def current_retriever(self, filters: MetadataFilters | None = None, top_n: int | None = None) -> BaseRetriever:
        """Hybrid retrieval over the store as it is now. The lexical index is read live; only a
        pipeline built before anything was indexed (dense alone) gains its BM25 channel here."""
        if lexical_index(self.settings).exists() != self._has_lexical:
            self._has_lexical = not self._has_lexical
            self.retriever = hybrid_retriever(self.settings, self.embedding, self.llm)
        if filters is None and top_n in (None, self.settings.retrieval.top_n):
            return self.retriever
        return hybrid_retriever(self.settings, self.embedding, self.llm, top_n=top_n, filters=filters)

    def _prompt(self, question: str, context: str, language: str = "") -> str:
        # What varies comes last: llama.cpp reuses the evaluated prefix of the previous prompt.
        return self.prompt.format(context=context, question=question, refusal=self.settings.refusal,
                                  language=language or self.language(question))

    def language(self, question: str) -> str:
        """The answer's language: the configured one, or the question's."""
        configured = self.settings.answer_language
        if configured.lower() != "auto":
            return configured
        return script_language(question)

    def _budget(self, question: str) -> int:
        """Evidence tokens: the configured budget, or what the window leaves if that is less."""
        # Less a few tokens: the context's first and last tokens may merge with the prompt's.
        room = self._window - self.count_tokens(self._prompt(question, "")) - 8
        return min(self.settings.context.budget(self.settings.llm.backend), room)

    @property
    def _window(self) -> int:
        """Tokens the prompt may take: the model's window less the answer and the chat template."""
        cfg = self.settings.llm
        return cfg.n_ctx - cfg.max_new_tokens - _TEMPLATE_TOKENS

    def _check_length(self, question: str) -> None:
        """A question that leaves no room for context is refused before any work."""
        if self.count_tokens(self._prompt(question, "")) >= self._window:
            room = self._window - self.count_tokens(self._prompt("", ""))
            raise QuestionError(
                f"the question is too long: {self.count_tokens(question)} tokens, and the model's window of "
                f"{self.settings.llm.n_ctx} (llm.n_ctx) leaves room for at most {max(room, 0)}: shorten it"
            )

    def _generate(self, prompt: str, on_token: Callable[[str], None] | None, timings: dict[str, float], started: float) -> str:
        """The LLM's reply, streamed to `on_token`; records the time to its first token."""
        parts: list[str] = []
        # Closing the stream when on_token raises (an abandoned answer) stops the decoding.
        with closing(self.llm.stream_complete(prompt)) as stream:
            for chunk in stream:
                if not parts:
                    timings["first_token"] = round((time.perf_counter() - started) * 1000, 1)
                parts.append(chunk.delta or "")
                if on_token is not None:
                    on_token(chunk.delta or "")
        return "".join(parts).strip()

    def _match(self, text: str, top: list[NodeWithScore], sources: list[dict], threshold: float | None = None) -> list[dict[str, Any]]:
        return [segment_entry(segment, sources) for segment in self.matcher.run(text, top, threshold)]


def is_refusal(text: str, refusal: str) -> bool:
    def norm(s: str) -> str:
        return re.sub(r"\W+", " ", s).strip().lower()

    return not text or norm(refusal) in norm(text)[: len(norm(refusal)) + 40]
