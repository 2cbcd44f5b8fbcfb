"""The vector store: Chroma on disk by default, a Chroma server when `store.chroma_url` is set."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlparse

import chromadb
from chromadb.config import Settings as ChromaSettings
from llama_index.core.schema import BaseNode
from llama_index.core.vector_stores.utils import metadata_dict_to_node
from llama_index.vector_stores.chroma import ChromaVectorStore

from rag.settings import Settings


def chroma_client(settings: Settings) -> chromadb.ClientAPI:
    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    url = settings.store.chroma_url
    if url:
        parsed = urlparse(url)
        return chromadb.HttpClient(
            host=parsed.hostname or "127.0.0.1",
            port=parsed.port or 8000,
            ssl=parsed.scheme == "https",
            settings=chroma_settings,
        )
    settings.chroma_dir.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(settings.chroma_dir), settings=chroma_settings)


def collection(settings: Settings, client: chromadb.ClientAPI | None = None):
    """Our collection. No embedding function: we always pass our own vectors, and Chroma's
    default one would try to download an ONNX model."""
    client = client or chroma_client(settings)
    return client.get_or_create_collection(
        settings.store.collection, embedding_function=None, metadata={"hnsw:space": "cosine"}
    )


def vector_store(settings: Settings) -> ChromaVectorStore:
    return ChromaVectorStore(chroma_collection=collection(settings))


def stored_nodes(chunks, **query) -> list[BaseNode]:
    """The chunks a Chroma `get(**query)` finds (by `ids`, `where`, or all), as nodes."""
    got = chunks.get(include=["documents", "metadatas"], **query)
    return [metadata_dict_to_node(meta, text=text) for meta, text in zip(got["metadatas"], got["documents"])]


def all_nodes(settings: Settings) -> list[BaseNode]:
    """Every chunk in the store, as nodes (for training: questions, pairs, mining)."""
    return stored_nodes(collection(settings))


def document_ids(chunks) -> list[str]:
    """The ids of the documents a collection holds chunks of, sorted."""
    return sorted({meta["doc"] for meta in chunks.get(include=["metadatas"])["metadatas"]})


def reset(settings: Settings) -> None:
    """Drop the collection (used by `ragqa ingest --reset`)."""
    client = chroma_client(settings)
    if settings.store.collection in [c.name if hasattr(c, "name") else c for c in client.list_collections()]:
        client.delete_collection(settings.store.collection)


class StoreBusyError(RuntimeError):
    """Another process is writing to this store."""


@contextmanager
def writer_lock(settings: Settings) -> Iterator[None]:
    """One writer (ingest, upload, reset) per store at a time: two would each persist their own
    docstore and the last one would drop the other's documents. The lock is the kernel's
    (flock), so a killed writer never leaves it held."""
    settings.storage_dir.mkdir(parents=True, exist_ok=True)
    path = settings.storage_dir / "ingest.lock"
    with open(path, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise StoreBusyError(
                f"another ingest ({holder}) is writing to {settings.storage_dir}: wait for it to finish"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}")
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)
