"""Relevance scorers: (query-like text, passage) pairs -> calibrated scores in [0, 1].

The bi-encoder gives the refusal gate its measure and the learned ranker its cosine feature; with
`rerank.method = "bi-encoder"` it ranks alone, its cosine mapped through a logistic so that its
narrow cosine band spreads over [0, 1] (a model tuned by `ragqa train retriever` carries its own
fitted logistic). With `rerank.method = "cross-encoder"` a CrossEncoder from `ragqa train
reranker --cross-encoder` ranks instead. The reference matcher has its own scorer, the
learned support model over the same bi-encoder (rag/support.py).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
from llama_index.core.embeddings import BaseEmbedding

from rag.logistic import logistic
from rag.settings import Settings

Pair = tuple[str, str]
CALIBRATION_FILE = "ragqa_calibration.json"  # written beside a tuned embedding model


class Scorer(Protocol):
    """What the reranker, the refusal gate and the reference matcher ask of a model: (text,
    passage) pairs -> calibrated scores in [0, 1], one per pair, all pairs in one call (a model
    batches them). Implemented by BiEncoderScorer, CrossEncoderScorer, rag/support.LearnedSupport
    and rag/verifier.LLMVerifier."""

    kind: str  # names the model in an Answer (`scorer`, `reranker`) and in evaluation reports

    def __call__(self, pairs: Sequence[Pair]) -> list[float]: ...


class SupportScorer(Protocol):
    """The reference matcher's scorer: (segment, chunk) pairs -> P(the chunk states the segment),
    reading the question `asked` so that its words said back are not held against the answer.
    Implemented by rag/support.LearnedSupport and rag/verifier.LLMVerifier."""

    kind: str

    def __call__(self, pairs: Sequence[Pair], asked: str = "") -> list[float]: ...


class BiEncoderScorer:
    """Cosine of e5 query and passage embeddings, calibrated; embeddings cached by text."""

    kind = "bi-encoder"

    def __init__(self, embedding: BaseEmbedding, center: float, scale: float, cache_size: int = 4096):
        self.embedding = embedding
        self.center = center
        self.scale = scale
        self._cache: OrderedDict[tuple[bool, str], np.ndarray] = OrderedDict()
        self._cache_size = cache_size

    def calibrate(self, cosine: np.ndarray) -> np.ndarray:
        return logistic((cosine - self.center) / self.scale)

    def embed(self, texts: Sequence[str], query: bool) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if (query, t) not in self._cache))
        if missing:
            if query:
                # LlamaIndex has no public batched query embedding; HuggingFaceEmbedding's
                # `_embed` is one batched encode with the query prompt (3x faster for answers).
                batched = getattr(self.embedding, "_embed", None)
                vectors = (
                    batched(missing, prompt_name="query")
                    if batched
                    else [self.embedding.get_query_embedding(t) for t in missing]
                )
            else:
                vectors = self.embedding.get_text_embedding_batch(missing)
            for text, vector in zip(missing, vectors):
                self._cache[(query, text)] = np.asarray(vector, dtype=np.float32)
        for text in texts:
            self._cache.move_to_end((query, text))
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return np.stack([self._cache[(query, t)] for t in texts]) if texts else np.zeros((0, 1))

    def remember(self, text: str, vector: Sequence[float]) -> None:
        """Reuse a passage vector the store already holds instead of embedding it again."""
        self._cache[(False, text)] = np.asarray(vector, dtype=np.float32)

    def __call__(self, pairs: Sequence[Pair]) -> list[float]:
        if not pairs:
            return []
        queries = self.embed([a for a, _ in pairs], query=True)
        passages = self.embed([b for _, b in pairs], query=False)
        cosine = np.einsum("ij,ij->i", queries, passages)
        return self.calibrate(cosine).tolist()


class CrossEncoderScorer:
    """A fine-tuned sentence-transformers CrossEncoder; its sigmoid output is already in [0, 1]."""

    kind = "cross-encoder"

    def __init__(self, path: Path, batch_size: int = 32):
        from sentence_transformers import CrossEncoder

        self.model = CrossEncoder(str(path), device="cpu")
        self.batch_size = batch_size

    def __call__(self, pairs: Sequence[Pair]) -> list[float]:
        if not pairs:
            return []
        scores = self.model.predict(list(pairs), batch_size=self.batch_size, show_progress_bar=False)
        return [float(s) if 0.0 <= s <= 1.0 else float(logistic(s)) for s in scores]


def bi_encoder(settings: Settings, embedding: BaseEmbedding) -> BiEncoderScorer:
    """The calibrated e5 cosine; a model from `ragqa train retriever` carries its own fit."""
    calibration = {"center": settings.rerank.cosine_center, "scale": settings.rerank.cosine_scale}
    fitted = settings.embedding_path / CALIBRATION_FILE
    if fitted.is_file():
        calibration = json.loads(fitted.read_text(encoding="utf-8"))
    return BiEncoderScorer(embedding, calibration["center"], calibration["scale"])
