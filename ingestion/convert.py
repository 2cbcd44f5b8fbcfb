"""Files -> `ConvertedDocument` (`ingestion/document.py`): Markdown blocks, each with its location
(page or slide, section path, table id, character offsets), or a `DocumentLoadError` that says
why not. This module only picks the reader by the file's suffix (`READERS`):

- `ingestion/pdf.py`: PDF (text layer, OCR of scanned pages, headings; `ingest.pdf_strategy`);
- `ingestion/docling_reader.py`: DOCX, PPTX, XLSX, HTML, Markdown, CSV, through Docling;
- `ingestion/plain.py`: plain text and JSON, which Docling does not read.

To add a format, write a reader module with a function `(path, doc_id, fmt, cfg) ->
ConvertedDocument` and add its suffix to `READERS`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from ingestion import docling_reader, pdf, plain
from ingestion.document import ConvertedDocument, DocumentLoadError, check_file_size, check_text_size
from rag.settings import IngestSettings

logger = logging.getLogger(__name__)

Reader = Callable[[Path, str, str, IngestSettings], ConvertedDocument]
READERS: dict[str, tuple[str, Reader]] = {  # suffix -> (format, reader)
    ".pdf": ("pdf", pdf.read),
    ".docx": ("docx", docling_reader.read),
    ".pptx": ("pptx", docling_reader.read),
    ".xlsx": ("xlsx", docling_reader.read),
    ".html": ("html", docling_reader.read),
    ".htm": ("html", docling_reader.read),
    ".md": ("md", docling_reader.read),
    ".markdown": ("md", docling_reader.read),
    ".csv": ("csv", docling_reader.read),
    ".txt": ("txt", plain.read_text),
    ".json": ("json", plain.read_json),
}
SUPPORTED_SUFFIXES = set(READERS)


def check_file(path: Path, cfg: IngestSettings) -> str:
    """The file's format, after the checks that need no reading (a known type, not empty, within
    `max_file_mb`); raises DocumentLoadError with the reason. The UI runs it before copying an
    upload."""
    suffix = path.suffix.lower()
    if suffix not in READERS:
        kinds = ", ".join(sorted(SUPPORTED_SUFFIXES))
        raise DocumentLoadError(f"unsupported file type '{path.suffix or path.name}' (supported: {kinds})")
    check_file_size(path, cfg)
    return READERS[suffix][0]


def convert(path: Path, doc_id: str, cfg: IngestSettings) -> ConvertedDocument:
    """Convert one file; raises DocumentLoadError with the reason when it cannot. A document whose
    text is over `ingest.max_text_chars` is refused."""
    fmt = check_file(path, cfg)
    document = READERS[path.suffix.lower()][1](path, doc_id, fmt, cfg)
    if not document.blocks:
        raise DocumentLoadError("no text could be extracted")
    check_text_size(len(document.markdown), cfg)
    for warning in document.warnings:
        logger.warning("%s: %s", path.name, warning)
    return document
