"""Index documents: files -> LlamaIndex Documents -> header-prefixed chunks -> embeddings -> Chroma.

The LlamaIndex `IngestionPipeline` with a persisted docstore makes ingestion incremental: an
unchanged file costs nothing, a changed file replaces its chunks. Chunk ids are stable
(document hash + position), never random. A file that cannot be read is reported with its
reason and the others go on; nothing already indexed is touched by a failure.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from llama_index.core.ingestion import DocstoreStrategy, IngestionPipeline
from llama_index.core.node_parser import MarkdownNodeParser, SentenceSplitter
from llama_index.core.storage.docstore import SimpleDocumentStore
from tqdm.auto import tqdm

from ingestion.chunking import SectionMetadata, StableIds
from ingestion.headers import apply_header
from ingestion.convert import SUPPORTED_SUFFIXES, DocumentLoadError, load_document
from rag.models import build_embedding
from rag.settings import Settings
from rag.store import reset as reset_store
from rag.store import vector_store

DOCSTORE_FILE = "docstore.json"


@dataclass
class IngestReport:
    files: int = 0
    indexed: int = 0
    unchanged: int = 0
    chunks: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        lines = [
            f"{self.files} files: {self.indexed} indexed ({self.chunks} chunks), "
            f"{self.unchanged} unchanged, {len(self.failed)} failed, in {self.seconds:.1f} s"
        ]
        lines += [f"FAILED {f['file']}: {f['reason']}" for f in self.failed]
        return "\n".join(lines)


def discover(paths: list[Path]) -> list[tuple[Path, str]]:
    """(file, doc id) pairs; the doc id is the path relative to the folder given."""
    found = []
    for path in paths:
        if path.is_dir():
            for file in sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")):
                found.append((file, file.relative_to(path).as_posix()))
        else:
            found.append((path, path.name))
    return found


def build_pipeline(settings: Settings) -> IngestionPipeline:
    cfg = settings.chunking
    docstore_path = settings.docstore_dir / DOCSTORE_FILE
    docstore = (
        SimpleDocumentStore.from_persist_path(str(docstore_path))
        if docstore_path.exists()
        else SimpleDocumentStore()
    )
    return IngestionPipeline(
        transformations=[
            MarkdownNodeParser(),
            SectionMetadata(),
            # Sizes are in characters: the tokenizer is `list`, one token per character.
            SentenceSplitter(
                chunk_size=cfg.chunk_size, chunk_overlap=cfg.chunk_overlap,
                tokenizer=list, paragraph_separator="\n\n",
            ),
            StableIds(),
            build_embedding(settings),
        ],
        vector_store=vector_store(settings),
        docstore=docstore,
        docstore_strategy=DocstoreStrategy.UPSERTS,
        # The docstore already skips unchanged files; a transformation cache would also replay
        # stale chunks after a change to the chunking code or settings.
        disable_cache=True,
    )


def ingest(paths: list[Path], settings: Settings, reset: bool = False, progress: bool = True) -> IngestReport:
    started = time.perf_counter()
    if reset:
        reset_store(settings)
        shutil.rmtree(settings.docstore_dir, ignore_errors=True)
    report = IngestReport()
    documents = []
    for file, doc_id in tqdm(discover(paths), desc="read", unit="file", disable=not progress):
        report.files += 1
        if file.suffix.lower() not in SUPPORTED_SUFFIXES:
            report.failed.append({"file": str(file), "reason": f"unsupported file type '{file.suffix}'"})
            continue
        try:
            document = load_document(file, doc_id)
        except DocumentLoadError as error:
            report.failed.append({"file": str(file), "reason": str(error)})
            continue
        apply_header(document, settings.chunking)
        documents.append(document)

    pipeline = build_pipeline(settings)
    for document in tqdm(documents, desc="index", unit="file", disable=not progress):
        # One document per run: a crash loses at most the file in hand, and progress is per file.
        nodes = pipeline.run(documents=[document], show_progress=False)
        if nodes:
            report.indexed += 1
            report.chunks += len(nodes)
        else:
            report.unchanged += 1
        pipeline.persist(str(settings.docstore_dir))
    report.seconds = round(time.perf_counter() - started, 2)
    _write_report(report, settings)
    return report


def _write_report(report: IngestReport, settings: Settings) -> None:
    settings.reports_dir.mkdir(parents=True, exist_ok=True)
    (settings.reports_dir / "last_ingest.json").write_text(json.dumps(asdict(report), indent=1))
