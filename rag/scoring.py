"""Relevance scorers: (query-like text, passage) pairs -> calibrated scores in [0, 1].

The relevance scorer gives the refusal gate its measure and the learned ranker its cosine
feature; with `scoring.reranker = "scorer"` it ranks alone. Until `ragqa train reranker
--cross-encoder` has produced a cross-encoder, the bi-encoder's cosine plays its role, mapped
through a logistic so that its narrow cosine band spreads over [0, 1]; a model tuned by `ragqa
train retriever` carries its own fitted logistic. The reference matcher has its own scorer, the
learned support model over the same bi-encoder (rag/support.py).
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.schema import MetadataMode, NodeWithScore

from rag.settings import Settings
from rag.store import stored_vectors

Pair = tuple[str, str]
CALIBRATION_FILE = "ragqa_calibration.json"  # written beside a tuned embedding model


class Scorer(Protocol):
    """What the reranker, the refusal gate and the reference matcher ask of a model: (text,
    passage) pairs -> calibrated scores in [0, 1], one per pair, all pairs in one call (a model
    batches them). Implemented by BiEncoderScorer, CrossEncoderScorer, rag/support.LearnedSupport
    and rag/verifier.LLMVerifier."""

    kind: str  # names the model in an Answer (`scorer`, `reranker`) and in evaluation reports

    def __call__(self, pairs: Sequence[Pair]) -> list[float]: ...


def logistic(x):
    """1 / (1 + e^-x): the calibrated scores, the ranker's and the support model's output."""
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=float)))


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


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def trigrams(text: str) -> set[str]:
    """Character 3-grams of the lower-cased words: language-agnostic (Korean particles and
    English inflections change a word's end, not most of its trigrams)."""
    words = " ".join(re.findall(r"\w+", text.lower()))
    return {words[i : i + 3] for i in range(len(words) - 2)}


@lru_cache(maxsize=4096)
def _wording(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """Trigrams and numbers of a text; cached, as each chunk meets every segment of an answer."""
    return frozenset(trigrams(text)), frozenset(_NUMBER.findall(text))


_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_LATIN = re.compile(r"[A-Za-z]")


def hangul_script(text: str, letters_per_syllable: int = 1) -> bool:
    """Written mostly in Hangul (Korean) rather than Latin letters, a syllable counted as
    `letters_per_syllable` letters (1: as the support model was fitted; a syllable holds about
    three letters' worth)."""
    return letters_per_syllable * len(_HANGUL.findall(text)) > len(_LATIN.findall(text))


def across_scripts(segment: str, chunk: str) -> bool:
    """Whether the segment may be a translation of the chunk's text: it is in the other script,
    or it is in Latin letters and the chunk is partly in Hangul (a partly translated page, whose
    Latin letters outnumber its syllables while much of it is Korean: a syllable holds about three
    letters' worth). Korean text routinely carries Latin names and commands, so a Korean segment
    is across only from a chunk mostly in Latin letters."""
    hangul, latin = len(_HANGUL.findall(chunk)), len(_LATIN.findall(chunk))
    return hangul <= latin if hangul_script(segment) else 3 * hangul >= latin


def lexical_support(segment: str, chunk: str) -> float | None:
    """Share of the segment's trigrams that the chunk contains (1.0: every word is there), capped
    by the share of its numbers the chunk contains: one missing figure is a few trigrams among
    many, but a chunk without the figure cannot support the statement.

    Across languages (an English answer from a Korean chunk) words cannot match, so only the
    numbers count; None when there are none: the wording says nothing either way."""
    (grams, numbers), (chunk_grams, chunk_numbers) = _wording(segment), _wording(chunk)
    number_share = len(numbers & chunk_numbers) / len(numbers) if numbers else None
    if across_scripts(segment, chunk):
        return number_share
    if not grams:
        return 0.0
    share = len(grams & chunk_grams) / len(grams)
    return share if number_share is None else min(share, number_share)


def reuse_stored_vectors(encoder: BiEncoderScorer, collection, nodes: Sequence[NodeWithScore]) -> None:
    """Hand the bi-encoder the chunk vectors the store already holds, so reranking and
    reference matching embed only the query and the answer's segments (and those of chunks an
    ingest running beside has just replaced)."""
    if not nodes:
        return
    vectors = stored_vectors(collection, [n.node.node_id for n in nodes])
    for node in nodes:
        if node.node.node_id in vectors:
            encoder.remember(node.node.get_content(metadata_mode=MetadataMode.EMBED), vectors[node.node.node_id])


def bi_encoder(settings: Settings, embedding: BaseEmbedding) -> BiEncoderScorer:
    """The calibrated e5 cosine; a model from `ragqa train retriever` carries its own fit."""
    calibration = {"center": settings.scoring.cosine_center, "scale": settings.scoring.cosine_scale}
    fitted = settings.embedding_path / CALIBRATION_FILE
    if fitted.is_file():
        calibration = json.loads(fitted.read_text(encoding="utf-8"))
    return BiEncoderScorer(embedding, calibration["center"], calibration["scale"])


def encoder_beside(scorer: Scorer, settings: Settings, embedding: BaseEmbedding) -> BiEncoderScorer:
    """The bi-encoder whose vectors the store holds: the relevance scorer itself when it is one
    (one vector cache), else a bi-encoder beside the CrossEncoder."""
    return scorer if isinstance(scorer, BiEncoderScorer) else bi_encoder(settings, embedding)


def build_scorer(settings: Settings, embedding: BaseEmbedding) -> BiEncoderScorer | CrossEncoderScorer:
    """The (text, passage) relevance scorer under the matcher's support: a trained CrossEncoder
    when `scoring.reranker_path` names one, else the bi-encoder."""
    path = settings.scoring.reranker_path
    if path:
        if not Path(path).is_dir():
            raise FileNotFoundError(f"scoring.reranker_path {path} is not a CrossEncoder folder")
        return CrossEncoderScorer(Path(path))
    return bi_encoder(settings, embedding)
