"""Files -> LlamaIndex Documents, with the reason when a file cannot be read.

This first version reads Markdown and plain text; Docling conversion of the other formats
plugs in here.
"""

from __future__ import annotations

from pathlib import Path

from llama_index.core import Document

SUPPORTED_SUFFIXES = {".md", ".markdown", ".txt"}
MAX_BYTES = 50 * 1024 * 1024


class DocumentLoadError(ValueError):
    """The file cannot be ingested; the message says why."""


def load_document(path: Path, doc_id: str) -> Document:
    size = path.stat().st_size
    if size == 0:
        raise DocumentLoadError("the file is empty")
    if size > MAX_BYTES:
        raise DocumentLoadError(f"the file is {size:,} bytes, over the {MAX_BYTES:,} byte limit")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise DocumentLoadError(f"not UTF-8 text (byte {error.start}): convert it to UTF-8") from error
    if "\x00" in text:
        raise DocumentLoadError("binary content in a text file")
    if not text.strip():
        raise DocumentLoadError("the file has no text")
    return Document(id_=doc_id, text=text, metadata={"doc": doc_id})
