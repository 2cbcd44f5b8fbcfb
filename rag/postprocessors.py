"""Node postprocessors of the retrieval pipeline."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

Scorer = Callable[[Sequence[tuple[str, str]]], list[float]]


class ScorerRerank(BaseNodePostprocessor):
    """Rerank nodes by a calibrated (query, chunk) scorer and keep the best `top_n`.

    The scorer sees the chunk as it was embedded (header included), in one batched call.
    """

    top_n: int = Field(default=5, description="Number of nodes to keep.")
    scorer_kind: str = Field(default="", description="Which scorer ranks: cross- or bi-encoder.")
    _scorer: Any = PrivateAttr()

    def __init__(self, scorer: Scorer, top_n: int = 5, **kwargs: Any) -> None:
        super().__init__(top_n=top_n, scorer_kind=getattr(scorer, "kind", "custom"), **kwargs)
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
        scores = self._scorer([(query_bundle.query_str, text) for text in texts])
        ranked = sorted(zip(nodes, scores), key=lambda pair: pair[1], reverse=True)
        return [NodeWithScore(node=n.node, score=s) for n, s in ranked[: self.top_n]]
