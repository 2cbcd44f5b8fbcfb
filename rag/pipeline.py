"""The answer pipeline, top to bottom: retrieve (dense + BM25, fused) -> rerank -> generate ->
match references.

`RagPipeline.answer(question)` returns the Answer object of DESIGN.md; `ragqa ask --json`, the
UI and the evaluators all read that one shape.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from llama_index.core.llms import LLM
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

from rag.models import build_embedding, build_llm
from rag.postprocessors import ScorerRerank
from rag.references import match_references, split_sentences
from rag.retrieval import hybrid_retriever, metadata_filters
from rag.scoring import build_scorer, reuse_stored_vectors, support_scorer
from rag.settings import Settings
from rag.store import collection

_MARKER = re.compile(r"\s*\[\d+(?:\s*[,;-]\s*\d+)*\]")


@dataclass
class Answer:
    question: str
    answer: str
    answerable: bool
    segments: list[dict[str, Any]] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    scorer: str = ""  # which model scored rerank and references: cross-encoder or bi-encoder

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
        self.scorer = build_scorer(settings, embedding)
        self.reranker = ScorerRerank(self.scorer, top_n=settings.retrieval.top_k)
        self.support = support_scorer(settings, self.scorer)
        self.collection = collection(settings)
        self.prompt = settings.prompt_file.read_text(encoding="utf-8")

    def answer(
        self,
        question: str,
        on_token: Callable[[str], None] | None = None,
        docs: list[str] | None = None,
        where: dict[str, str] | None = None,
    ) -> Answer:
        """Answer from all documents, or only from `docs` (document ids as ingested) and from
        documents whose header fields equal `where`'s values."""
        cfg = self.settings
        timings: dict[str, float] = {}
        clock = time.perf_counter()

        def lap(stage: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            timings[stage] = round((now - clock) * 1000, 1)
            clock = now

        query = QueryBundle(question)
        filters = metadata_filters(docs, where)
        retriever = self.retriever if filters is None else hybrid_retriever(
            self.settings, self.embedding, self.llm, filters=filters
        )
        retrieved = retriever.retrieve(query)
        reuse_stored_vectors(self.scorer, self.collection, retrieved)
        lap("retrieve")
        top = self.reranker.postprocess_nodes(retrieved, query_bundle=query)
        lap("rerank")
        refused = Answer(question, cfg.refusal, False, timings_ms=timings, scorer=self.scorer.kind)
        if not top or (top[0].score or 0.0) < cfg.retrieval.min_score:
            timings.update(generate=0.0, match=0.0)
            return refused

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
        return Answer(question, text, True, segments, sources, timings, self.scorer.kind)

    def _generate(self, question: str, top: list[NodeWithScore], on_token: Callable[[str], None] | None) -> str:
        context = "\n\n".join(
            f"[{i + 1}] {node.node.get_content(metadata_mode=MetadataMode.LLM)}"
            for i, node in enumerate(top)
        )
        prompt = self.prompt.format(context=context, question=question, refusal=self.settings.refusal)
        if on_token is None:
            return self.llm.complete(prompt).text.strip()
        parts = []
        for chunk in self.llm.stream_complete(prompt):
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
