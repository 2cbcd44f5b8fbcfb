"""Node postprocessors of the retrieval pipeline."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

from rag.scoring import Scorer


def best(nodes: list[NodeWithScore], scores: Sequence[float], top_n: int) -> list[NodeWithScore]:
    """The `top_n` nodes by their new scores, best first, carrying those scores."""
    ranked = sorted(zip(nodes, scores), key=lambda pair: pair[1], reverse=True)
    return [NodeWithScore(node=n.node, score=float(s)) for n, s in ranked[:top_n]]


class ScorerRerank(BaseNodePostprocessor):
    """Rerank nodes by a calibrated (query, chunk) scorer and keep the best `top_n`.

    The scorer sees the chunk as it was embedded (header included), in one batched call.
    """

    top_n: int = Field(default=5, description="Number of nodes to keep.")
    scorer_kind: str = Field(default="", description="Which scorer ranks: cross- or bi-encoder.")
    _scorer: Any = PrivateAttr()

    def __init__(self, scorer: Scorer, top_n: int = 5, **kwargs: Any) -> None:
        super().__init__(top_n=top_n, scorer_kind=scorer.kind, **kwargs)
        self._scorer = scorer

    @classmethod
    def class_name(cls) -> str:
        return "ScorerRerank"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        if query_bundle is None:
            raise ValueError("ScorerRerank needs the query")
        if not nodes:
            return []
        texts = [n.node.get_content(metadata_mode=MetadataMode.EMBED) for n in nodes]
        return best(nodes, self._scorer([(query_bundle.query_str, text) for text in texts]), self.top_n)


class FeatureRerank(BaseNodePostprocessor):
    """Rerank nodes by the learned ranker (rag/ranking.py) over what retrieval already knows of
    each chunk: its e5 cosine to the query, its BM25 score, the query's wording and numbers in
    it, and header values the query names. Scores are the ranker's P(relevant)."""

    top_n: int = Field(default=5, description="Number of nodes to keep.")
    header_fields: list[str] = Field(default_factory=list, description="Metadata keys of the document header.")
    scorer_kind: str = Field(default="ltr", description="Which model ranks.")
    _encoder: Any = PrivateAttr()
    _lexical: Any = PrivateAttr()
    _ranker: Any = PrivateAttr()

    def __init__(self, encoder: Any, lexical: Any, ranker: Any, top_n: int = 5, **kwargs: Any) -> None:
        super().__init__(top_n=top_n, **kwargs)
        self._encoder, self._lexical, self._ranker = encoder, lexical, ranker

    @classmethod
    def class_name(cls) -> str:
        return "FeatureRerank"

    def features(self, nodes: list[NodeWithScore], query: str):
        from rag.ranking import features

        texts = [n.node.get_content(metadata_mode=MetadataMode.EMBED) for n in nodes]
        vectors = self._encoder.embed(texts, query=False)
        cosines = vectors @ self._encoder.embed([query], query=True)[0]
        bm25 = self._lexical(query, [n.node.node_id for n in nodes])
        headers = [[str(n.node.metadata[f]) for f in self.header_fields if n.node.metadata.get(f)] for n in nodes]
        return features(query, texts, cosines, bm25, headers)

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        if query_bundle is None:
            raise ValueError("FeatureRerank needs the query")
        if not nodes:
            return []
        return best(nodes, self._ranker(self.features(nodes, query_bundle.query_str)), self.top_n)


def build_reranker(settings: Any, encoder: Any, scorer: Scorer, top_n: int) -> BaseNodePostprocessor:
    """The rerank stage `scoring.reranker` names: the learned ranker (cosines from `encoder`, the
    bi-encoder whose vectors the store holds), or the relevance `scorer` alone."""
    if settings.scoring.reranker == "scorer":
        return ScorerRerank(scorer, top_n=top_n)
    from rag.ranking import LinearRanker
    from rag.retrieval import lexical_scores

    return FeatureRerank(
        encoder, lexical_scores(settings), LinearRanker.load(settings.scoring.ranker_file),
        top_n=top_n, header_fields=list(settings.headers.fields),
    )
