"""The store: every file of it under `storage_dir` (named only here), the Chroma collection (on
disk, or a server when `store.chroma_url` is set), the lexical index, the docstore and the source
registry. `Store` is built once and passed down."""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import sqlite3
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from urllib.parse import urlparse

import chromadb
from chromadb.config import Settings as ChromaSettings
from chromadb.errors import ChromaError
from llama_index.core.schema import BaseNode, MetadataMode
from llama_index.core.storage.docstore import SimpleDocumentStore
from llama_index.core.vector_stores.utils import metadata_dict_to_node
from llama_index.vector_stores.chroma import ChromaVectorStore

from rag.lexical import LexicalIndex
from rag.registry import SourceRegistry
from rag.settings import Settings


class Store:
    """One store's paths and the handles on it. The docstore and registry are read from disk
    at each call: another process may have written them since."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.root = root = settings.storage_dir
        self.chroma_dir = root / "chroma"
        self.docstore_dir = root / "docstore"
        self.docstore_file = self.docstore_dir / "docstore.json"
        self.registry_file = self.docstore_dir / "sources.json"
        self.lexical_file = root / "lexical.sqlite"
        self.uploads_dir = root / "uploads"
        self.header_cache_file = root / "header_cache.json"
        self.lock_file = root / "ingest.lock"
        self.pending_file = root / "pending.json"
        self.refit_file = root / "ranker_refit.json"  # the ingest's ranker choice (training/refit.py)
        self.lexical = LexicalIndex(self.lexical_file)

    def clean_paths(self) -> list[Path]:
        """What `make clean-storage` removes: all of the index (a part left behind would answer
        from chunks the others no longer have), its journal, the uploads and the reports."""
        lexical = [self.lexical_file.with_name(self.lexical_file.name + end) for end in ("", "-wal", "-shm")]
        return [self.chroma_dir, self.docstore_dir, *lexical, self.pending_file, self.uploads_dir,
                self.refit_file, self.settings.reports_dir]

    def clean(self) -> None:
        for path in self.clean_paths():
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)

    @cached_property
    def collection(self):
        """Our collection. No embedding function: we always pass our own vectors, and Chroma's
        default one would try to download an ONNX model."""
        return self._client().get_or_create_collection(
            self.settings.store.collection, embedding_function=None, metadata={"hnsw:space": "cosine"}
        )

    def _client(self) -> chromadb.ClientAPI:
        chroma_settings = ChromaSettings(anonymized_telemetry=False)
        url = self.settings.store.chroma_url
        if url:
            parsed = urlparse(url)
            return chromadb.HttpClient(host=parsed.hostname or "127.0.0.1", port=parsed.port or 8000,
                                       ssl=parsed.scheme == "https", settings=chroma_settings)
        with store_access(self, "open"):
            self.chroma_dir.mkdir(parents=True, exist_ok=True)
            return chromadb.PersistentClient(path=str(self.chroma_dir), settings=chroma_settings)

    def vector_store(self) -> ChromaVectorStore:
        return ChromaVectorStore(chroma_collection=self.collection)

    def drop_collection(self) -> None:
        """Drop the collection (`ragqa ingest --reset`, through ingestion.integrity)."""
        client, name = self._client(), self.settings.store.collection
        if name in [c.name if hasattr(c, "name") else c for c in client.list_collections()]:
            client.delete_collection(name)
        self.__dict__.pop("collection", None)  # the next use creates it again

    def docstore(self) -> SimpleDocumentStore:
        """The docstore as last written (hashes and metadata, no text)."""
        try:
            return SimpleDocumentStore.from_persist_path(str(self.docstore_file))
        except FileNotFoundError:  # none yet, or a reset in another process removed it since
            return SimpleDocumentStore()
        except (ValueError, OSError) as error:
            raise RuntimeError(f"the docstore {self.docstore_file} is unreadable ({error}): "
                               "run `ragqa ingest --reset`") from error

    def hashes(self) -> dict[str, str]:
        """Every indexed document's id -> its content hash, as the docstore records them."""
        return document_hashes(self.docstore())

    def registry(self) -> SourceRegistry:
        return SourceRegistry.load(self.registry_file)


def document_hashes(docstore: SimpleDocumentStore) -> dict[str, str]:
    """Every document's id -> its content hash in this docstore: the store's state."""
    return {doc: content_hash for content_hash, doc in docstore.get_all_document_hashes().items()}


def collection(settings: Settings):
    """The collection of the store `settings` name, for a caller without a Store."""
    return Store(settings).collection


def vector_store(settings: Settings) -> ChromaVectorStore:
    return Store(settings).vector_store()


def stored_nodes(chunks, **query) -> list[BaseNode]:
    """The chunks a Chroma `get(**query)` finds (by `ids`, `where`, or all), as nodes."""
    got = chunks.get(include=["documents", "metadatas"], **query)
    return [metadata_dict_to_node(meta, text=text) for meta, text in zip(got["metadatas"], got["documents"])]


def document_texts(chunks, docs: Sequence[str]) -> dict[str, str]:
    """Each document's chunks as stored, joined in no particular order (their text and the
    metadata the embedding reads: the header's fields): what a document says anywhere."""
    if not docs:
        return {}
    texts: dict[str, list[str]] = defaultdict(list)
    for node in stored_nodes(chunks, where={"doc": {"$in": list(docs)}}):
        texts[node.metadata.get("doc")].append(node.get_content(metadata_mode=MetadataMode.EMBED))
    return {doc: "\n\n".join(parts) for doc, parts in texts.items()}


def all_nodes(settings: Settings) -> list[BaseNode]:
    """Every chunk in the store, as nodes (for training: questions, pairs, mining)."""
    return stored_nodes(collection(settings))


def document_ids(chunks) -> list[str]:
    """The ids of the documents a collection holds chunks of, sorted."""
    return sorted(chunk_ids(chunks))


def chunk_ids(chunks, known: Mapping[str, str] | None = None, page: int = 5000) -> dict[str, set[str]]:
    """Document id -> the ids of the chunks the collection holds of it. The ids alone are read
    (0.4 s for 100,000 chunks), and the metadata (20 s) only of the chunks whose document
    `known` (chunk id -> document id: the lexical index's) does not tell; a page at a time."""
    ids: list[str] = []
    for offset in range(0, chunks.count(), 4 * page):
        ids += chunks.get(include=[], limit=4 * page, offset=offset)["ids"]
    known = known or {}
    held: dict[str, set[str]] = defaultdict(set)
    unknown = []
    for chunk_id in ids:
        if chunk_id in known:
            held[known[chunk_id]].add(chunk_id)
        else:
            unknown.append(chunk_id)
    for start in range(0, len(unknown), page):
        got = chunks.get(ids=unknown[start:start + page], include=["metadatas"])
        for chunk_id, meta in zip(got["ids"], got["metadatas"]):
            held[meta["doc"]].add(chunk_id)
    return dict(held)


def stored_vectors(chunks, ids: Sequence[str]) -> dict[str, list[float]]:
    """Chunk id -> its vector, for the ids the collection holds. While a writer replaces
    chunks, Chroma fails a batch holding one it just deleted ("Error finding id"), so such a
    batch is read again an id at a time and the ids that fail are left out, as gone."""
    try:
        got = chunks.get(ids=list(ids), include=["embeddings"])
        return dict(zip(got["ids"], got["embeddings"]))
    except ChromaError:
        vectors = {}
        for chunk_id in ids:
            try:
                got = chunks.get(ids=[chunk_id], include=["embeddings"])
            except ChromaError:
                continue
            vectors.update(zip(got["ids"], got["embeddings"]))
        return vectors


class StoreBusyError(RuntimeError):
    """Another process is writing to this store."""


class StoreError(RuntimeError):
    """The store cannot be read or written (a full disk, a read-only folder); the message is
    one line that names the store and the reason."""


_FAILURES = {  # what the file system, SQLite and Chroma say -> the reason in words
    "it is read-only": ("readonly database", "read-only file system", "permission denied"),
    # Chroma reports a write the disk refused as a compaction that failed, then (the log left
    # unapplied) as logs it cannot apply, until there is space again.
    "the disk is full": ("disk is full", "no space left", "quota exceeded", "error in compaction",
                         "failed to apply logs"),
}


def storage_failure(error: BaseException) -> str | None:
    """The reason, in words, when `error` is the store's file system refusing a read or write;
    None for any other error."""
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        return "the disk is full"
    if isinstance(error, OSError) and error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return "it is read-only"
    if isinstance(error, (OSError, sqlite3.Error, ChromaError)):
        text = str(error).lower()
        return next((reason for reason, signs in _FAILURES.items() if any(sign in text for sign in signs)),
                    None)
    return None


@contextmanager
def store_access(store: Store, doing: str) -> Iterator[None]:
    """Storage failures inside the block become one StoreError naming the store: `doing` is
    what was being done ("open", "write")."""
    try:
        yield
    except StoreError:
        raise
    except Exception as error:
        reason = storage_failure(error)
        if reason is None:
            raise
        raise StoreError(f"cannot {doing} the store {store.root}: {reason} ({error})"
                         .replace("\n", " ")) from error


@dataclass
class WriterLock:
    interrupted: bool  # the previous writer died (killed, or stopped by an error) before it finished


@contextmanager
def writer_lock(store: Store) -> Iterator[WriterLock]:
    """One writer (ingest, upload, reset) per store at a time: two would each persist their own
    docstore and the last one would drop the other's documents. The lock is the kernel's
    (flock), so a killed writer never leaves it held. The lock file names the holder until it
    ends without an error: a name found on taking it says the last writer did not finish, and
    the new one checks the stores against each other (ingestion.integrity)."""
    with store_access(store, "write"):
        store.root.mkdir(parents=True, exist_ok=True)
        # Unbuffered: a write a full disk refused is not tried again when the file is closed.
        handle = os.fdopen(os.open(store.lock_file, os.O_RDWR | os.O_CREAT, 0o644), "r+b", 0)
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().decode(errors="replace").strip() or "another process"
            raise StoreBusyError(
                f"another ingest ({holder}) is writing to {store.root}: wait for it to finish"
            ) from None
        try:
            handle.seek(0)
            lock = WriterLock(interrupted=bool(handle.read().strip()))
            with store_access(store, "write"):  # written over, never emptied: a failure keeps the mark
                handle.seek(0)
                handle.truncate(handle.write(f"pid {os.getpid()}".encode()))
            yield lock
            handle.seek(0)
            handle.truncate()
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
