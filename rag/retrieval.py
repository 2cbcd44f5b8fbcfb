"""Hybrid retrieval: dense (Chroma) and BM25 fused by reciprocal rank (LlamaIndex's
QueryFusionRetriever), top n. Both channels see the chunk as embedded: header prefix included.

The BM25 index is rebuilt from the store after every ingest run that changed it and persisted
under storage/bm25, so asking never tokenises the corpus.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from functools import lru_cache

import bm25s

from llama_index.core import VectorStoreIndex
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.llms import LLM
from llama_index.core.retrievers import BaseRetriever, QueryFusionRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters
from llama_index.retrievers.bm25 import BM25Retriever

from rag.files import replaced_folder
from rag.settings import Settings
from rag.store import all_nodes, collection, document_ids, vector_store

BM25_DIR = "bm25"
BM25_VERSION = "ragqa_store_version"


class MatchingBM25Retriever(BM25Retriever):
    """BM25 that returns only chunks with a positive score: bm25s fills its top k with
    zero-score chunks, including those a filter's weight mask zeroed out."""

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [node for node in super()._retrieve(query_bundle) if (node.score or 0.0) > 0.0]


def metadata_filters(docs: list[str] | None = None, where: dict[str, str] | None = None) -> MetadataFilters | None:
    """Restrict retrieval to these documents (ids as ingested) and to chunks whose header fields
    equal the given values (e.g. {"Region": "Europe"}), all conditions together; None when there
    is no condition."""
    filters = [MetadataFilter(key="doc", value=list(docs), operator=FilterOperator.IN)] if docs else []
    filters += [MetadataFilter(key=key, value=value, operator=FilterOperator.EQ) for key, value in (where or {}).items()]
    return MetadataFilters(filters=filters) if filters else None


def parse_where(conditions: list[str]) -> dict[str, str]:
    """`FIELD=VALUE` strings (CLI, UI) -> {field: value}; a malformed one is a ValueError."""
    where = {}
    for condition in conditions:
        key, sep, value = condition.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"filter {condition!r} is not FIELD=VALUE (e.g. Region=Europe)")
        where[key.strip()] = value.strip()
    return where


class FilterError(ValueError):
    """A document or header filter that no indexed chunk matches; the message says which and
    what would match."""


def check_filters(settings: Settings, docs: list[str], where: dict[str, str]) -> None:
    """Raise FilterError when a filter matches nothing, so the user hears "no such document"
    instead of the refusal an empty retrieval gives."""
    chunks = collection(settings)

    def matches(condition: dict) -> bool:
        return bool(chunks.get(where=condition, limit=1, include=[])["ids"])

    unknown = [doc for doc in docs if not matches({"doc": doc})]
    if unknown:
        ids = document_ids(chunks)
        hints = []
        for doc in unknown:
            near = [i for i in ids if i.endswith("/" + doc) or i.lower() == doc.lower()]
            hints.append(f"{doc!r}" + (f" (did you mean {', '.join(map(repr, near[:5]))}?)" if near else ""))
        raise FilterError(f"no indexed document has the id {', '.join(hints)}")
    for key, value in where.items():
        if not matches({key: value}):
            values = sorted({str(m[key]) for m in chunks.get(include=["metadatas"])["metadatas"] if key in m})
            known = f"its values: {', '.join(values[:10])}" if values else f"no document has a header field {key!r}"
            raise FilterError(f"no indexed document has {key}={value} ({known})")
    conditions = ([{"doc": {"$in": list(docs)}}] if docs else []) + [{k: v} for k, v in where.items()]
    if len(conditions) > 1 and not matches({"$and": conditions}):
        raise FilterError("no indexed document matches all the filters together")


def dense_retriever(
    settings: Settings, embedding: BaseEmbedding, top_n: int | None = None, filters: MetadataFilters | None = None
) -> BaseRetriever:
    index = VectorStoreIndex.from_vector_store(vector_store(settings), embed_model=embedding)
    return index.as_retriever(similarity_top_k=top_n or settings.retrieval.top_n, filters=filters)


def rebuild_bm25(settings: Settings, version: str = "") -> int:
    """(Re)build the BM25 index from every chunk in the store; returns the chunk count.
    `version` names the store state it was built from (see `bm25_version`)."""
    target = settings.storage_dir / BM25_DIR
    nodes = all_nodes(settings)
    if not nodes:
        shutil.rmtree(target, ignore_errors=True)
        return 0
    retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=settings.retrieval.top_n)
    with replaced_folder(target) as partial:  # a failed build leaves the old index
        retriever.persist(str(partial), show_progress=False)
        (partial / BM25_VERSION).write_text(version, encoding="utf-8")
    return len(nodes)


def bm25_version(settings: Settings) -> str | None:
    """The store state the BM25 index was built from; None when there is no index. Ingestion
    compares it with the docstore's, so a run killed between writing the store and rebuilding
    the index is caught up by the next run, even when no file changed since."""
    path = settings.storage_dir / BM25_DIR / BM25_VERSION
    return path.read_text(encoding="utf-8") if path.is_file() else None


@lru_cache(maxsize=4)
def _persisted_bm25(path: str, version: str | None) -> BM25Retriever:
    """The persisted index, read once per store state: the fused retrieval, the reranker's exact
    scores and every filtered question share it (a rebuild writes a new version)."""
    return BM25Retriever.from_persist_dir(path, show_progress=False)


def bm25_retriever(
    settings: Settings, top_n: int | None = None, filters: MetadataFilters | None = None
) -> BaseRetriever | None:
    """The persisted BM25 retriever (filters become its corpus weight mask), or None before
    anything was ingested or when the filters leave no chunk."""
    path = settings.storage_dir / BM25_DIR
    if not path.is_dir():
        return None
    loaded = _persisted_bm25(str(path), bm25_version(settings))
    top = min(top_n or settings.retrieval.top_n, len(loaded.corpus))
    try:
        return (BM25Retriever if filters is None else MatchingBM25Retriever)(
            existing_bm25=loaded.bm25, filters=filters, similarity_top_k=top, stemmer=loaded.stemmer,
            skip_stemming=loaded.skip_stemming, token_pattern=loaded.token_pattern,
        )
    except ValueError:  # every chunk filtered out
        return None


class LexicalScores:
    """BM25 scores of chosen chunks for a query, from the persisted index: the reranker needs the
    score of every candidate, also of those that dense retrieval alone brought."""

    def __init__(self, settings: Settings):
        self.retriever = bm25_retriever(settings)
        corpus = self.retriever.corpus if self.retriever else []
        self.position = {entry["node_id"]: i for i, entry in enumerate(corpus)}

    def __call__(self, query: str, node_ids: Sequence[str]) -> list[float]:
        if self.retriever is None:
            return [0.0] * len(node_ids)
        r = self.retriever
        tokens = bm25s.tokenize(
            query, stemmer=None if r.skip_stemming else r.stemmer, token_pattern=r.token_pattern,
            return_ids=False, show_progress=False,
        )[0]
        known = [t for t in tokens if t in r.bm25.vocab_dict]
        if not known:
            return [0.0] * len(node_ids)
        scores = r.bm25.get_scores(known)
        return [float(scores[self.position[i]]) if i in self.position else 0.0 for i in node_ids]


def hybrid_retriever(
    settings: Settings,
    embedding: BaseEmbedding,
    llm: LLM,
    top_n: int | None = None,
    filters: MetadataFilters | None = None,
) -> BaseRetriever:
    """Dense + BM25 by reciprocal rank fusion; dense alone when there is no BM25 index yet.
    Metadata filters reach both channels."""
    top_n = top_n or settings.retrieval.top_n
    dense = dense_retriever(settings, embedding, top_n, filters)
    sparse = bm25_retriever(settings, top_n, filters)
    if sparse is None:
        return dense
    return QueryFusionRetriever(
        [dense, sparse],
        llm=llm,  # never called: num_queries=1 generates no extra queries
        mode="reciprocal_rerank",
        similarity_top_k=top_n,
        num_queries=1,
        use_async=False,
    )
