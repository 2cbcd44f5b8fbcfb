"""Hybrid retrieval: dense (Chroma) and BM25 (rag/lexical.py) fused by reciprocal rank
(LlamaIndex's QueryFusionRetriever), top n. Both channels see the chunk as embedded: header
prefix included. Ingestion keeps the lexical index level with the store document by document.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from llama_index.core import VectorStoreIndex
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.llms import LLM
from llama_index.core.retrievers import BaseRetriever, QueryFusionRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters

from rag.lexical import LexicalIndex, LexicalRetriever
from rag.settings import Settings
from rag.store import Store, collection, document_ids, stored_nodes, vector_store


def metadata_filters(
    docs: list[str] | None = None, where: dict[str, str] | None = None
) -> MetadataFilters | None:
    """Restrict retrieval to these documents (ids as ingested) and to chunks whose header fields
    equal the given values (e.g. {"Region": "Europe"}), all conditions together; None when there
    is no condition."""
    filters = [MetadataFilter(key="doc", value=list(docs), operator=FilterOperator.IN)] if docs else []
    filters += [MetadataFilter(key=key, value=value, operator=FilterOperator.EQ)
                for key, value in (where or {}).items()]
    return MetadataFilters(filters=filters) if filters else None


def parse_where(conditions: list[str]) -> dict[str, str]:
    """`FIELD=VALUE` strings (CLI, UI) -> {field: value}; a malformed one is a ValueError."""
    where = {}
    for condition in conditions:
        key, sep, value = condition.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"filter {condition!r} is not FIELD=VALUE (e.g. Region=Europe)")
        if key.strip().startswith("$"):  # Chroma would read $and, $or, $contains as operators
            raise ValueError(f"filter {condition!r}: a header field name cannot start with '$'")
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
            known = (f"its values: {', '.join(values[:10])}" if values
                     else f"no document has a header field {key!r}")
            raise FilterError(f"no indexed document has {key}={value} ({known})")
    conditions = ([{"doc": {"$in": list(docs)}}] if docs else []) + [{k: v} for k, v in where.items()]
    if len(conditions) > 1 and not matches({"$and": conditions}):
        raise FilterError("no indexed document matches all the filters together")


def dense_retriever(
    settings: Settings, embedding: BaseEmbedding, similarity_top_k: int | None = None,
    filters: MetadataFilters | None = None,
) -> BaseRetriever:
    index = VectorStoreIndex.from_vector_store(vector_store(settings), embed_model=embedding)
    top_k = similarity_top_k or settings.retrieval.retrieve_k
    return index.as_retriever(similarity_top_k=top_k, filters=filters)


def lexical_index(settings: Settings) -> LexicalIndex:
    return Store(settings).lexical


def sync_lexical(store: Store, hashes: Mapping[str, str]) -> int:
    """Bring the lexical index level with the docstore (document id -> content hash): only the
    documents added, changed or removed since are read; returns how many."""
    chunks = store.collection
    return store.lexical.sync(hashes, lambda doc: stored_nodes(chunks, where={"doc": doc}))


def lexical_version(index: LexicalIndex) -> int | None:
    """Grows with every change of the lexical index; None before anything was indexed."""
    return index.version() if index.exists() else None


def bm25_retriever(
    settings: Settings, similarity_top_k: int | None = None, filters: MetadataFilters | None = None
) -> BaseRetriever | None:
    """BM25 over the lexical index, or None before anything was indexed."""
    index = lexical_index(settings)
    if not index.exists():
        return None
    return LexicalRetriever(index, similarity_top_k or settings.retrieval.retrieve_k, filters)


def retrieved(retriever: BaseRetriever, queries: Sequence[str]) -> list[NodeWithScore]:
    """Each query's candidates (the question as asked, its translation), each chunk once."""
    found: dict[str, NodeWithScore] = {}
    for query in queries:
        for node in retriever.retrieve(QueryBundle(query)):
            found.setdefault(node.node.node_id, node)
    return list(found.values())


def hybrid_retriever(
    settings: Settings,
    embedding: BaseEmbedding,
    llm: LLM,
    similarity_top_k: int | None = None,
    filters: MetadataFilters | None = None,
) -> BaseRetriever:
    """Dense + BM25 by reciprocal rank fusion; dense alone when there is no BM25 index yet.
    Metadata filters reach both channels."""
    similarity_top_k = similarity_top_k or settings.retrieval.retrieve_k
    dense = dense_retriever(settings, embedding, similarity_top_k, filters)
    sparse = bm25_retriever(settings, similarity_top_k, filters)
    if sparse is None:
        return dense
    return QueryFusionRetriever(
        [dense, sparse],
        llm=llm,  # never called: num_queries=1 generates no extra queries
        mode="reciprocal_rerank",
        similarity_top_k=similarity_top_k,
        num_queries=1,
        use_async=False,
    )
