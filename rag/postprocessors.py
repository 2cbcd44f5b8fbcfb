"""The rerank stage as LlamaIndex postprocessors, built once by `build_rerank_stage`. As
LlamaIndex's rerankers do, each owns its inputs: given the retrieved nodes and the query, it reads
the candidates' vectors from the store itself."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

from rag.lexical import LexicalScores
from rag.scoring import BiEncoderScorer, CrossEncoderScorer, Scorer, bi_encoder
from rag.settings import Settings
from rag.store import Store, stored_vectors


def best(nodes: list[NodeWithScore], scores: Sequence[float], top_n: int) -> list[NodeWithScore]:
    """The `top_n` nodes by their new scores, best first, carrying those scores."""
    ranked = sorted(zip(nodes, scores), key=lambda pair: pair[1], reverse=True)
    return [NodeWithScore(node=n.node, score=float(s)) for n, s in ranked[:top_n]]


class StoredVectorsRerank(BaseNodePostprocessor):
    """Keep the best `top_n` nodes by `scores`. The candidates' vectors come from the store into
    the bi-encoder first: it, and the refusal gate, context and matcher reading it after, embed
    only the query and the answer (and chunks an ingest running beside has just replaced)."""

    top_n: int = Field(default=5, description="Number of nodes to keep.")
    scorer_kind: str = Field(default="", description="Which model ranks: ltr, bi-encoder or cross-encoder.")
    _encoder: BiEncoderScorer = PrivateAttr()
    _chunks: Any = PrivateAttr()  # the Chroma collection holding the vectors

    def __init__(self, encoder: BiEncoderScorer, chunks: Any, top_n: int = 5, **kwargs: Any) -> None:
        super().__init__(top_n=top_n, **kwargs)
        self._encoder, self._chunks = encoder, chunks

    @property
    def encoder(self) -> BiEncoderScorer:
        """The bi-encoder whose vectors the store holds, the candidates' among them."""
        return self._encoder

    def candidates(self, nodes: list[NodeWithScore]) -> list[str]:
        """The nodes' texts as embedded (header included), their stored vectors handed to the encoder."""
        texts = [n.node.get_content(metadata_mode=MetadataMode.EMBED) for n in nodes]
        vectors = stored_vectors(self._chunks, [n.node.node_id for n in nodes]) if nodes else {}
        for node, text in zip(nodes, texts):
            if node.node.node_id in vectors:
                self._encoder.remember(text, vectors[node.node.node_id])
        return texts

    def scores(self, nodes: list[NodeWithScore], query: str) -> Sequence[float]:
        raise NotImplementedError

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        if query_bundle is None:
            raise ValueError(f"{self.class_name()} needs the query")
        if not nodes:
            return []
        return best(nodes, self.scores(nodes, query_bundle.query_str), self.top_n)


class ScorerRerank(StoredVectorsRerank):
    """Rerank nodes by a calibrated (query, chunk) scorer alone, in one batched call; the scorer
    sees the chunk as it was embedded (header included)."""

    _scorer: Any = PrivateAttr()

    def __init__(self, scorer: Scorer, encoder: BiEncoderScorer, chunks: Any, top_n: int = 5,
                 **kwargs: Any) -> None:
        super().__init__(encoder, chunks, top_n=top_n, scorer_kind=scorer.kind, **kwargs)
        self._scorer = scorer

    @classmethod
    def class_name(cls) -> str:
        return "ScorerRerank"

    @property
    def scorer(self) -> Scorer:
        return self._scorer

    def scores(self, nodes: list[NodeWithScore], query: str) -> Sequence[float]:
        return self._scorer([(query, text) for text in self.candidates(nodes)])


class FeatureRerank(StoredVectorsRerank):
    """Rerank nodes by the learned ranker (rag/ranking.py) over what retrieval already knows of
    each chunk: its e5 cosine to the query, its BM25 score, the query's wording and numbers in
    it, and header values the query names. Scores are the ranker's P(relevant)."""

    header_fields: list[str] = Field(default_factory=list, description="Metadata keys of the header.")
    scorer_kind: str = Field(default="ltr", description="Which model ranks.")
    _lexical: Any = PrivateAttr()
    _ranker: Any = PrivateAttr()

    def __init__(self, encoder: BiEncoderScorer, chunks: Any, lexical: LexicalScores, ranker: Any,
                 top_n: int = 5, **kwargs: Any) -> None:
        super().__init__(encoder, chunks, top_n=top_n, **kwargs)
        self._lexical, self._ranker = lexical, ranker

    @classmethod
    def class_name(cls) -> str:
        return "FeatureRerank"

    @property
    def ranker(self) -> Any:
        return self._ranker

    def features(self, nodes: list[NodeWithScore], query: str):
        from rag.ranking import features

        texts = self.candidates(nodes)
        vectors = self._encoder.embed(texts, query=False)
        cosines = vectors @ self._encoder.embed([query], query=True)[0]
        bm25 = self._lexical(query, [n.node.node_id for n in nodes])
        fields = self.header_fields
        headers = [[str(n.node.metadata[f]) for f in fields if n.node.metadata.get(f)] for n in nodes]
        return features(query, texts, cosines, bm25, headers)

    def scores(self, nodes: list[NodeWithScore], query: str) -> Sequence[float]:
        return self._ranker(self.features(nodes, query))


def build_rerank_stage(
    settings: Settings, store: Store, embedding: BaseEmbedding, top_n: int | None = None,
    method: str | None = None,
) -> StoredVectorsRerank:
    """The rerank stage `rerank.method` (or `method`) names, keeping `top_n` (retrieval.keep_k):
    the learned ranker, or the bi-encoder or the CrossEncoder alone. Its `encoder` is the
    bi-encoder whose vectors the store holds; the CrossEncoder is loaded only when it ranks."""
    method = method or settings.rerank.method
    encoder = bi_encoder(settings, embedding)
    top_n = top_n or settings.retrieval.keep_k
    if method == "ltr":  # the store's refit choice, else ranker_file (rag/ranking.py)
        from rag.ranking import ranker_in_use

        ranker, _ = ranker_in_use(settings.rerank.ranker_file, store.refit_file, settings.rerank.refit)
        return FeatureRerank(encoder, store.collection, LexicalScores(store.lexical), ranker, top_n=top_n,
                             header_fields=list(settings.headers.fields))
    if method == "bi-encoder":
        return ScorerRerank(encoder, encoder, store.collection, top_n=top_n)
    path = settings.rerank.cross_encoder_path
    if not path or not Path(path).is_dir():
        raise FileNotFoundError(f"rerank.cross_encoder_path {path!r} is not a CrossEncoder folder")
    return ScorerRerank(CrossEncoderScorer(Path(path)), encoder, store.collection, top_n=top_n)


def best_ranked(reranker: BaseNodePostprocessor, nodes: list[NodeWithScore],
                queries: Sequence[str]) -> tuple[list[NodeWithScore], str]:
    """The reranker's top chunks when each is scored by the better of the questions (the question
    as asked and its translation), and the question that ranked the best chunk highest."""
    best: dict[str, NodeWithScore] = {}
    leader, search = float("-inf"), queries[0]
    for query in queries:
        ranked = reranker.postprocess_nodes(nodes, query_bundle=QueryBundle(query))
        if ranked and (ranked[0].score or 0.0) > leader:
            leader, search = ranked[0].score or 0.0, query
        for node in ranked:
            if node.node.node_id not in best or (node.score or 0.0) > (best[node.node.node_id].score or 0.0):
                best[node.node.node_id] = node
    top = sorted(best.values(), key=lambda node: node.score or 0.0, reverse=True)
    return top[: reranker.top_n], search
