"""Index documents: files -> converted blocks -> header-prefixed chunks -> embeddings -> Chroma.

The LlamaIndex `IngestionPipeline` with a persisted docstore makes ingestion incremental: an
unchanged file costs nothing, a changed file replaces exactly its chunks, and `prune` removes
the chunks of files that are gone. Files are indexed one at a time; the docstore is written
atomically after each and the lexical index (rag/lexical.py) follows it document by document.
A run killed half way is completed by the next one: removals are journaled and every writer
first checks the stores against each other (ingestion/integrity.py). A file that cannot be read
is reported with its reason; the others go on and nothing already indexed is touched; a file
with the same bytes as one indexed is indexed once. Files are converted ahead, in worker
processes (ingestion/parallel.py), while this process embeds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from llama_index.core.ingestion import DocstoreStrategy, IngestionPipeline
from llama_index.core.schema import BaseNode
from llama_index.core.storage.docstore import SimpleDocumentStore
from tqdm.auto import tqdm

from ingestion.chunking import BlockChunker, LocatedDocument
from ingestion.currency import apply_currency, currency_of
from ingestion.document import ConvertedDocument
from ingestion.headers import LLMHeaderExtractor, apply_header, extract_header
from ingestion.integrity import Writer, open_writer
from ingestion.integrity import reset as reset_store
from ingestion.parallel import conversions
from ingestion.sources import broken_link, walk
from rag.currency import Currency
from rag.models import build_embedding
from rag.retrieval import sync_lexical
from rag.settings import Settings
from rag.store import Store, chunk_ids, store_access, writer_lock

Progress = Callable[[int, int, str], None]  # (files done, files in all, current file)
PRUNE_ASK_OVER = 3  # a prune removing more documents than this, and most of the store, needs `confirm`


class PruneRefusedError(RuntimeError):
    """A prune would remove most of the store and was not confirmed."""


@dataclass
class IngestReport:
    files: int = 0
    indexed: int = 0
    unchanged: int = 0
    pruned: int = 0
    chunks: int = 0
    pages: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    duplicates: list[dict[str, str]] = field(default_factory=list)  # {"file", "doc", "same_as"}: not indexed
    replaced: list[str] = field(default_factory=list)  # doc ids that already held another version
    doc_ids: dict[str, str] = field(default_factory=dict)  # file -> doc id
    restored: list[str] = field(default_factory=list)  # doc ids the store had lost, read again
    seconds: float = 0.0
    convert_seconds: float = 0.0
    index_seconds: float = 0.0
    prune: bool = False

    def summary(self) -> str:
        parts = [f"{self.indexed} indexed ({self.chunks} chunks)", f"{self.unchanged} unchanged"]
        if self.duplicates:
            parts.append(f"{len(self.duplicates)} duplicate{'' if len(self.duplicates) == 1 else 's'}")
        if self.prune:
            parts.append(f"{self.pruned} pruned")
        parts.append(f"{len(self.failed)} failed")
        files = f"{self.files} file{'' if self.files == 1 else 's'}"
        lines = [f"{files}: {', '.join(parts)}, in {self.seconds:.1f} s"]
        if self.restored:
            lines.append(f"restored {len(self.restored)} document(s) an interrupted run had lost: "
                         + ", ".join(self.restored[:5]) + (" ..." if len(self.restored) > 5 else ""))
        lines += [f"DUPLICATE {d['file']}: same content as {d['same_as']}, not indexed twice"
                  for d in self.duplicates]
        lines += [f"FAILED {f['file']}: {f['reason']}" for f in self.failed]
        return "\n".join(lines)


def build_pipeline(store: Store, docstore: SimpleDocumentStore) -> IngestionPipeline:
    settings = store.settings
    return IngestionPipeline(
        transformations=[
            BlockChunker(chunk_size=settings.chunking.chunk_size,
                         chunk_overlap=settings.chunking.chunk_overlap),
            build_embedding(settings),
        ],
        vector_store=store.vector_store(),
        docstore=docstore,
        docstore_strategy=DocstoreStrategy.UPSERTS,
        # The docstore already skips unchanged files; a transformation cache would also replay
        # stale chunks after a change to the chunking code or settings.
        disable_cache=True,
    )


def ingest(
    paths: list[Path],
    settings: Settings,
    reset: bool = False,
    prune: bool = False,
    progress: bool = True,
    on_progress: Progress | None = None,
    confirm: bool = False,
) -> IngestReport:
    """Index `paths` (files or folders). One writer per store: a second one gets StoreBusyError.
    A prune that would remove most of a store (more than PRUNE_ASK_OVER documents) raises
    PruneRefusedError, before anything is done, unless `confirm`. A full disk or a read-only
    store raises StoreError."""
    store = Store(settings)
    with writer_lock(store) as lock, store_access(store, "write"):
        return _ingest(paths, store, reset, prune, progress, on_progress, lock.interrupted, confirm)


def _ingest(
    paths: list[Path], store: Store, reset: bool, prune: bool, progress: bool, on_progress: Progress | None,
    interrupted: bool, confirm: bool,
) -> IngestReport:
    started = time.perf_counter()
    settings = store.settings
    found = walk(paths)
    if reset:
        reset_store(store)
    writer = open_writer(store, interrupted)
    docstore, sources = writer.docstore, writer.sources
    jobs = [(file, sources.assign(file, natural_id)) for file, natural_id in found.files]
    listed = {doc_id for _, doc_id in jobs}
    lost = [(Path(file), sources.assign(Path(file), doc)) for doc, file in writer.restore.items()
            if doc not in listed and Path(file).is_file()]
    jobs += lost
    indexed = writer.hashes()
    gone = (set(indexed) - {doc_id for _, doc_id in jobs}) if prune else set()
    _check_prune(gone, len(indexed), confirm)
    pipeline = build_pipeline(store, docstore)
    report = IngestReport(prune=prune, restored=[doc for _, doc in jobs if doc in writer.restore])
    report.failed += [{"file": str(link), "reason": broken_link(link)} for link in found.broken]
    report.files += len(found.broken)
    bar = tqdm(jobs, desc="ingest", unit="file", disable=not progress)
    chunk_bar = tqdm(desc="chunks", unit="chunk", disable=not progress)
    # Which document holds each file content indexed (one being pruned holds none).
    owners = {digest: doc for doc, digest in sources.digests.items() if doc in indexed and doc not in gone}
    digests_recorded = False
    ask_llm = _header_llm(store) if settings.headers.llm else None
    for done, ((file, doc_id), conversion) in enumerate(zip(bar, conversions(jobs, settings.ingest))):
        report.files += 1
        report.doc_ids[str(file)] = doc_id
        if on_progress:
            on_progress(done, len(jobs), doc_id)
        bar.set_postfix_str(doc_id[-40:])
        if conversion.document is None:
            report.failed.append({"file": str(file), "reason": conversion.reason})
            continue
        owner = owners.setdefault(conversion.digest, doc_id)
        if owner != doc_id:
            # The same bytes under another name: indexed once, or each would be cited twice.
            report.duplicates.append({"file": str(file), "doc": doc_id, "same_as": owner})
            if docstore.get_document_hash(doc_id) is not None:  # it held other content before
                writer.drop([doc_id])
            continue
        report.convert_seconds += conversion.seconds
        clock = time.perf_counter()
        nodes, previous = _index(conversion.document, writer, pipeline, settings, ask_llm)
        report.index_seconds += time.perf_counter() - clock
        before = sources.digests.get(doc_id)
        if before != conversion.digest:
            if owners.get(before) == doc_id:  # it no longer holds that content
                del owners[before]
            sources.digests[doc_id] = conversion.digest
            digests_recorded = True
        if not nodes:
            report.unchanged += 1
            continue
        report.indexed += 1
        report.chunks += len(nodes)
        report.pages += len({n.metadata.get("page") or n.metadata.get("slide") for n in nodes} - {None})
        if previous is not None:
            report.replaced.append(doc_id)
        chunk_bar.update(len(nodes))
        sources.stamp(doc_id)
        writer.save()
        store.lexical.put(doc_id, docstore.get_document_hash(doc_id), nodes)
    chunk_bar.close()
    writer.restored()
    if digests_recorded:  # of files indexed before digests were kept, or unchanged in their text
        writer.save()
    if prune:
        writer.drop(gone)
        report.pruned = len(gone)
    # Also catches up a run killed between writing the store and updating the lexical index.
    sync_lexical(store, writer.hashes())
    if on_progress:
        on_progress(len(jobs), len(jobs), "")
    report.seconds = round(time.perf_counter() - started, 2)
    report.convert_seconds = round(report.convert_seconds, 2)
    report.index_seconds = round(report.index_seconds, 2)
    _write_report(report, settings)
    return report


def _index(
    converted: ConvertedDocument, writer: Writer, pipeline: IngestionPipeline, settings: Settings,
    ask_llm: LLMHeaderExtractor | None,
) -> tuple[list[BaseNode], str | None]:
    """Chunk, embed and store one converted file: (the new chunks, none when it is unchanged;
    the content hash it had before)."""
    document = LocatedDocument.from_converted(converted)
    headings = [b.text.lstrip("# ") for b in converted.blocks if b.kind in ("title", "heading")]
    first_heading = headings[0] if headings else None
    header = extract_header(converted.doc_id, converted.fields, converted.first_page_text, first_heading,
                            settings.headers, ask_llm)
    apply_header(document, header, settings.headers)
    apply_currency(document, currency_of(converted.doc_id, converted.blocks, converted.fields, header,
                                         settings.currency))
    previous = writer.docstore.get_document_hash(converted.doc_id)
    # The docstore keeps hashes and metadata, not the text: written after every file, it
    # must stay small at a hundred thousand chunks (Chroma holds the text).
    return pipeline.run(documents=[document], show_progress=False, store_doc_text=False), previous


def _check_prune(gone: set[str], indexed: int, confirm: bool) -> None:
    if not confirm and len(gone) > PRUNE_ASK_OVER and 2 * len(gone) > indexed:
        raise PruneRefusedError(
            f"--prune would remove {len(gone)} of the {indexed} indexed documents (those not found under the "
            "paths given): add --yes to go ahead"
        )


def remove(doc_ids: list[str], settings: Settings) -> list[str]:
    """Delete these documents' chunks from the store and the lexical index; returns the ids
    that were indexed (an unknown id is ignored). A file the UI uploaded is deleted with them:
    storage/uploads holds only what is indexed. A run killed half way is finished by the next
    writer (ingestion/integrity.py)."""
    store = Store(settings)
    with writer_lock(store) as lock, store_access(store, "write"):
        writer = open_writer(store, lock.interrupted)
        known = [doc_id for doc_id in dict.fromkeys(doc_ids)
                 if writer.docstore.get_document_hash(doc_id) is not None]
        writer.drop(known)
        sync_lexical(store, writer.hashes())
        return known


@dataclass
class IndexedDocument:
    doc: str
    chunks: int
    indexed: str  # UTC, ISO 8601; "" for a document indexed before times were kept
    source: str  # the file it was read from
    title: str = ""
    currency: Currency = field(default_factory=Currency)  # as read at ingest (ingestion/currency.py)


def indexed_documents(settings: Settings) -> list[IndexedDocument]:
    """The documents in the store, by id, with their chunk counts, titles and currency (every
    chunk holds its document's, so one chunk each is read). Chunks no document record claims (a
    write a full disk refused half way, a killed run's) are left out: the next writer deletes them
    (ingestion/integrity.py)."""
    store = Store(settings)
    with store_access(store, "read"):
        chunks = chunk_ids(store.collection, known=store.lexical.chunk_documents())
        sources = store.registry()
        recorded = store.hashes()
        chunks = {doc: ids for doc, ids in sorted(chunks.items()) if doc in recorded}
        first = [min(ids) for ids in chunks.values()]
        # Chroma's get with no ids would read every chunk.
        got = store.collection.get(ids=first, include=["metadatas"]) if first else {"metadatas": []}
    metadata = {meta["doc"]: meta for meta in got["metadatas"]}
    return [IndexedDocument(doc, len(ids), sources.indexed.get(doc, ""), sources.files.get(doc, ""),
                            _title(metadata.get(doc, {})), Currency.from_metadata(metadata.get(doc, {})))
            for doc, ids in chunks.items()]


def _title(meta: dict) -> str:
    return str(next((v for k, v in meta.items() if k.lower() == "title"), ""))


def catch_up_lexical(settings: Settings) -> int:
    """Bring the lexical index level with the docstore (what an ingest run ends with); returns
    how many documents were read again."""
    store = Store(settings)
    return sync_lexical(store, store.hashes())


def _header_llm(store: Store) -> LLMHeaderExtractor:
    from rag.models import build_llm

    llm = build_llm(store.settings)
    return LLMHeaderExtractor(
        lambda prompt: llm.complete(prompt).text,
        store.settings.headers.llm_prompt_file.read_text(encoding="utf-8"),
        store.header_cache_file,
    )


def _write_report(report: IngestReport, settings: Settings) -> None:
    settings.reports_dir.mkdir(parents=True, exist_ok=True)
    (settings.reports_dir / "last_ingest.json").write_text(json.dumps(asdict(report), indent=1))
