"""Index documents: files -> converted blocks -> header-prefixed chunks -> embeddings -> Chroma.

The LlamaIndex `IngestionPipeline` with a persisted docstore makes ingestion incremental: an
unchanged file costs nothing, a changed file replaces exactly its chunks, and `prune` removes
the chunks of files that are gone. Files are indexed one at a time and the docstore is written
atomically after each, so a run killed half way leaves a consistent store that the next run
completes. A file that cannot be read is reported with its reason; the others go on and nothing
already indexed is touched. Files are converted ahead, in worker processes (ingestion/parallel.py),
while this process embeds; the lexical index follows the docstore document by document
(rag/lexical.py).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from llama_index.core.ingestion import DocstoreStrategy, IngestionPipeline
from llama_index.core.storage.docstore import SimpleDocumentStore
from llama_index.core.vector_stores.types import BasePydanticVectorStore
from tqdm.auto import tqdm

from ingestion.chunking import BlockChunker, LocatedDocument
from ingestion.parallel import conversions
from ingestion.headers import LLMHeaderExtractor, apply_header, extract_header
from ingestion.sources import SourceRegistry, discover
from rag.models import build_embedding
from rag.retrieval import sync_lexical
from rag.settings import Settings
from rag.store import reset as reset_store
from rag.store import collection, vector_store, writer_lock

DOCSTORE_FILE = "docstore.json"
SOURCES_FILE = "sources.json"
Progress = Callable[[int, int, str], None]  # (files done, files in all, current file)


@dataclass
class IngestReport:
    files: int = 0
    indexed: int = 0
    unchanged: int = 0
    pruned: int = 0
    chunks: int = 0
    pages: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)  # doc ids that already held another version
    doc_ids: dict[str, str] = field(default_factory=dict)  # file -> doc id
    seconds: float = 0.0
    convert_seconds: float = 0.0
    index_seconds: float = 0.0
    prune: bool = False

    def summary(self) -> str:
        parts = [f"{self.indexed} indexed ({self.chunks} chunks)", f"{self.unchanged} unchanged"]
        if self.prune:
            parts.append(f"{self.pruned} pruned")
        parts.append(f"{len(self.failed)} failed")
        lines = [f"{self.files} file{'' if self.files == 1 else 's'}: {', '.join(parts)}, in {self.seconds:.1f} s"]
        lines += [f"FAILED {f['file']}: {f['reason']}" for f in self.failed]
        return "\n".join(lines)


def _load_docstore(path: Path) -> SimpleDocumentStore:
    if not path.exists():
        return SimpleDocumentStore()
    try:
        return SimpleDocumentStore.from_persist_path(str(path))
    except (ValueError, OSError) as error:
        raise RuntimeError(f"the docstore {path} is unreadable ({error}): run `ragqa ingest --reset`") from error


def _save_docstore(docstore: SimpleDocumentStore, path: Path) -> None:
    """Write then rename, so a kill mid-write never leaves a truncated docstore."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    docstore.persist(persist_path=str(partial))
    os.replace(partial, path)


def build_pipeline(settings: Settings, docstore: SimpleDocumentStore) -> IngestionPipeline:
    return IngestionPipeline(
        transformations=[
            BlockChunker(chunk_size=settings.chunking.chunk_size, chunk_overlap=settings.chunking.chunk_overlap),
            build_embedding(settings),
        ],
        vector_store=vector_store(settings),
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
) -> IngestReport:
    """Index `paths` (files or folders). One writer per store: a second one gets StoreBusyError."""
    with writer_lock(settings):
        return _ingest(paths, settings, reset, prune, progress, on_progress)


def _ingest(
    paths: list[Path], settings: Settings, reset: bool, prune: bool, progress: bool, on_progress: Progress | None
) -> IngestReport:
    started = time.perf_counter()
    if reset:
        reset_store(settings)
        shutil.rmtree(settings.docstore_dir, ignore_errors=True)
    docstore_path = settings.docstore_dir / DOCSTORE_FILE
    docstore = _load_docstore(docstore_path)
    sources = SourceRegistry.load(settings.docstore_dir / SOURCES_FILE)
    pipeline = build_pipeline(settings, docstore)
    report = IngestReport(prune=prune)
    files = discover(paths)
    jobs = [(file, sources.assign(file, natural_id)) for file, natural_id in files]
    bar = tqdm(jobs, desc="ingest", unit="file", disable=not progress)
    chunk_bar = tqdm(desc="chunks", unit="chunk", disable=not progress)
    seen: set[str] = set()
    ask_llm = _header_llm(settings) if settings.headers.llm else None
    for done, ((file, doc_id), conversion) in enumerate(zip(bar, conversions(jobs, settings.ingest))):
        report.files += 1
        report.doc_ids[str(file)] = doc_id
        seen.add(doc_id)
        if on_progress:
            on_progress(done, len(files), doc_id)
        bar.set_postfix_str(doc_id[-40:])
        if conversion.document is None:
            report.failed.append({"file": str(file), "reason": conversion.reason})
            continue
        report.convert_seconds += conversion.seconds
        converted = conversion.document
        document = LocatedDocument.from_converted(converted)
        first_heading = next((b.text.lstrip("# ") for b in converted.blocks if b.kind in ("title", "heading")), None)
        header = extract_header(
            doc_id, converted.fields, converted.first_page_text, first_heading, settings.headers, ask_llm
        )
        apply_header(document, header, settings.headers)

        clock = time.perf_counter()
        previous = docstore.get_document_hash(doc_id)
        if previous is None:
            # Chunks a killed run left behind without recording the file: remove, then redo.
            pipeline.vector_store.delete(doc_id)
        # The docstore keeps hashes and metadata, not the text: written after every file, it
        # must stay small at a hundred thousand chunks (Chroma holds the text).
        nodes = pipeline.run(documents=[document], show_progress=False, store_doc_text=False)
        report.index_seconds += time.perf_counter() - clock
        if nodes:
            report.indexed += 1
            report.chunks += len(nodes)
            report.pages += len({n.metadata.get("page") or n.metadata.get("slide") for n in nodes} - {None})
            if previous is not None:
                report.replaced.append(doc_id)
            chunk_bar.update(len(nodes))
            # The registry first: an id recorded for a file the docstore lacks is harmless.
            sources.stamp(doc_id)
            sources.save()
            _save_docstore(docstore, docstore_path)
        else:
            report.unchanged += 1
    chunk_bar.close()
    if prune:
        report.pruned = _prune(pipeline, docstore, sources, seen)
        _save_docstore(docstore, docstore_path)
        sources.save()
    # Also catches up a run killed between writing the store and updating the lexical index.
    sync_lexical(settings, document_hashes(docstore))
    if on_progress:
        on_progress(len(files), len(files), "")
    report.seconds = round(time.perf_counter() - started, 2)
    report.convert_seconds = round(report.convert_seconds, 2)
    report.index_seconds = round(report.index_seconds, 2)
    _write_report(report, settings)
    return report


def remove(doc_ids: list[str], settings: Settings) -> list[str]:
    """Delete these documents' chunks from the store and the lexical index; returns the ids
    that were indexed (an unknown id is ignored). A file the UI uploaded is deleted with them:
    storage/uploads holds only what is indexed. The docstore is written last, so a run killed
    half way is completed by the next ingest or remove."""
    with writer_lock(settings):
        docstore_path = settings.docstore_dir / DOCSTORE_FILE
        docstore = _load_docstore(docstore_path)
        sources = SourceRegistry.load(settings.docstore_dir / SOURCES_FILE)
        store = vector_store(settings)
        known = [doc_id for doc_id in doc_ids if docstore.get_document_hash(doc_id) is not None]
        uploads = (settings.storage_dir / "uploads").resolve()
        for doc_id in known:
            source = Path(sources.files.get(doc_id, ""))
            _drop(doc_id, store, docstore, sources)
            if source.parent == uploads:
                source.unlink(missing_ok=True)
        if known:
            sources.save()
            _save_docstore(docstore, docstore_path)
            sync_lexical(settings, document_hashes(docstore))
        return known


@dataclass
class IndexedDocument:
    doc: str
    chunks: int
    indexed: str  # UTC, ISO 8601; "" for a document indexed before times were kept
    source: str  # the file it was read from


def indexed_documents(settings: Settings) -> list[IndexedDocument]:
    """The documents in the store, by id, with their chunk counts."""
    chunks = Counter(meta["doc"] for meta in collection(settings).get(include=["metadatas"])["metadatas"])
    sources = SourceRegistry.load(settings.docstore_dir / SOURCES_FILE)
    return [IndexedDocument(doc, count, sources.indexed.get(doc, ""), sources.files.get(doc, ""))
            for doc, count in sorted(chunks.items())]


def document_hashes(docstore: SimpleDocumentStore) -> dict[str, str]:
    """Every indexed document's id -> its content hash: the store's state."""
    return {doc: content_hash for content_hash, doc in docstore.get_all_document_hashes().items()}


def catch_up_lexical(settings: Settings) -> int:
    """Bring the lexical index level with the docstore (what an ingest run ends with); returns
    how many documents were read again."""
    return sync_lexical(settings, document_hashes(_load_docstore(settings.docstore_dir / DOCSTORE_FILE)))


def _header_llm(settings: Settings) -> LLMHeaderExtractor:
    from rag.models import build_llm

    llm = build_llm(settings)
    return LLMHeaderExtractor(
        lambda prompt: llm.complete(prompt).text,
        settings.headers.llm_prompt_file.read_text(encoding="utf-8"),
        settings.storage_dir / "header_cache.json",
    )


def _prune(
    pipeline: IngestionPipeline, docstore: SimpleDocumentStore, sources: SourceRegistry, seen: set[str]
) -> int:
    """Remove the documents (and their chunks) that were not found in this run."""
    gone = set(docstore.get_all_document_hashes().values()) - seen
    for doc_id in gone:
        _drop(doc_id, pipeline.vector_store, docstore, sources)
    return len(gone)


def _drop(doc_id: str, store: BasePydanticVectorStore, docstore: SimpleDocumentStore, sources: SourceRegistry) -> None:
    store.delete(doc_id)
    docstore.delete_document(doc_id, raise_error=False)  # also drops its hash
    sources.forget(doc_id)


def _write_report(report: IngestReport, settings: Settings) -> None:
    settings.reports_dir.mkdir(parents=True, exist_ok=True)
    (settings.reports_dir / "last_ingest.json").write_text(json.dumps(asdict(report), indent=1))
