"""The four stores a writer keeps in agreement across kills: Chroma (the chunks), the docstore
(each document's content hash), the source registry (id -> file) and the lexical index.

They are separate files, so no one transaction covers them. Instead:

- Work that removes is journaled: a reset, or the ids a remove or prune is about to drop, is
  written to `storage/pending.json` first, and the next writer finishes it before its own (each
  step can be done twice).
- A writer that starts checks the stores against each other: cheaply (Chroma's chunk count and
  the docstore's hashes against the lexical index's) and, when those differ or the previous
  writer did not finish (rag.store.writer_lock tells), document by document from Chroma's
  metadata. A document the docstore claims but Chroma lost (or holds only part of) is forgotten
  and read again from its file by the next ingest; chunks no document record claims are deleted.
  The lexical index follows the docstore (rag.retrieval.sync_lexical).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from llama_index.core.storage.docstore import SimpleDocumentStore

from rag.files import replaced_file, write_text_atomically
from rag.registry import SourceRegistry
from rag.store import Store, chunk_ids, document_hashes

BATCH = 50  # documents dropped per Chroma call and lexical transaction


def save_docstore(docstore: SimpleDocumentStore, path: Path) -> None:
    """Write then rename, so a kill mid-write never leaves a truncated docstore."""
    with replaced_file(path) as partial:
        docstore.persist(persist_path=str(partial))


class Pending:
    """The journal, `storage/pending.json`: {"reset": true}, {"drop": [ids]} and {"restore":
    {id: file}} (documents Chroma lost, to be read again by the next ingest)."""

    def __init__(self, store: Store):
        self.path = store.pending_file

    def read(self) -> dict:
        if not self.path.is_file():
            return {}
        try:  # written whole or not at all (rag/files.py): only an edit by hand breaks it
            return json.loads(self.path.read_text(encoding="utf-8"))
        except ValueError as error:
            raise RuntimeError(f"the journal {self.path} is unreadable ({error}): "
                               "run `ragqa ingest --reset`") from error

    def write(self, **work) -> None:
        write_text_atomically(self.path, json.dumps(self.read() | work, ensure_ascii=False))

    def done(self, key: str) -> None:
        left = {k: v for k, v in self.read().items() if k != key}
        if left:
            write_text_atomically(self.path, json.dumps(left, ensure_ascii=False))
        else:
            self.path.unlink(missing_ok=True)


def reset(store: Store) -> None:
    """Empty the store: Chroma, the lexical index, the docstore and registry (journaled)."""
    pending = Pending(store)
    pending.write(reset=True)
    store.drop_collection()
    store.lexical.clear()
    shutil.rmtree(store.docstore_dir, ignore_errors=True)
    pending.done("reset")
    pending.done("restore")


@dataclass
class Writer:
    """A writer's hold on the store (taken inside rag.store.writer_lock by `open_writer`)."""

    store: Store
    docstore: SimpleDocumentStore
    sources: SourceRegistry
    restore: dict[str, str] = field(default_factory=dict)  # doc id -> file: lost, to be read again

    def hashes(self) -> dict[str, str]:
        return document_hashes(self.docstore)

    def save(self) -> None:
        # The registry first: an id recorded for a file the docstore lacks is harmless.
        self.sources.save()
        save_docstore(self.docstore, self.store.docstore_file)

    def drop(self, doc_ids: Collection[str]) -> None:
        """Remove these documents from every store, and the copy of those the UI uploaded
        (storage/uploads holds only what is indexed); a kill half way is finished by the next
        writer."""
        if not doc_ids:
            return
        pending = Pending(self.store)
        pending.write(drop=sorted(doc_ids))
        uploads = self.store.uploads_dir.resolve()
        for batch in _batches(sorted(doc_ids)):
            self._delete_chunks(batch)
            for doc in batch:
                source = Path(self.sources.files.get(doc, ""))
                self.docstore.delete_document(doc, raise_error=False)  # also drops its hash
                self.sources.forget(doc)
                if source.parent == uploads:
                    source.unlink(missing_ok=True)
        self.save()
        pending.done("drop")

    def restored(self) -> None:
        """The lost documents were read again (or their files are gone)."""
        self.restore = {}
        Pending(self.store).done("restore")

    def _delete_chunks(self, docs: list[str]) -> None:
        # BM25 first: a reader never finds through it a chunk Chroma no longer has.
        self.store.lexical.delete(*docs)
        self.store.collection.delete(where={"doc": {"$in": docs}})

    def reconcile(self, thorough: bool) -> None:
        """Make the docstore, the registry and Chroma agree (see the module's docstring)."""
        recorded = self.hashes()
        lexical, chunks = self.store.lexical, self.store.collection
        held = lexical.hashes()
        if not thorough and recorded == held and chunks.count() == lexical.count():
            return
        in_lexical = lexical.chunk_ids()
        in_chroma = chunk_ids(chunks, known={i: doc for doc, ids in in_lexical.items() for i in ids})
        # Lost, or not the chunks that were recorded (the index holds those the docstore's hash was read at).
        damaged = {doc for doc in recorded if doc not in in_chroma
                   or (held.get(doc) == recorded[doc] and in_lexical.get(doc) != in_chroma[doc])}
        unclaimed = set(in_chroma) - set(recorded)
        stale = set(held) - set(recorded)
        for batch in _batches(sorted(damaged | unclaimed | stale)):
            self._delete_chunks(batch)
        if not damaged and not set(self.sources.indexed) - set(recorded):
            return
        lost = {doc: self.sources.files[doc] for doc in damaged if doc in self.sources.files}
        Pending(self.store).write(restore=self.restore | lost)
        self.restore |= lost
        for doc in damaged:
            self.docstore.delete_document(doc, raise_error=False)
        for doc in set(self.sources.indexed) - (set(recorded) - damaged):
            self.sources.unstamp(doc)
        self.save()


def open_writer(store: Store, interrupted: bool) -> Writer:
    """The store as the last writer meant to leave it: its journaled work finished, the stores
    reconciled (document by document when it was `interrupted`)."""
    if Pending(store).read().get("reset"):
        reset(store)
    pending = Pending(store).read()
    writer = Writer(store, store.docstore(), store.registry(), dict(pending.get("restore", {})))
    if pending.get("drop"):
        writer.drop(pending["drop"])
    writer.reconcile(thorough=interrupted or bool(pending))
    return writer


def _batches(items: list[str]) -> Iterable[list[str]]:
    for start in range(0, len(items), BATCH):
        yield items[start:start + BATCH]
