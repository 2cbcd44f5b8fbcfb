"""What every reader returns: a `ConvertedDocument` of located `Block`s, or a `DocumentLoadError`
that says why not; and the size checks that refuse a file before or after reading it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag.settings import IngestSettings


class DocumentLoadError(ValueError):
    """The file cannot be ingested; the message says why, in one line."""


@dataclass
class Block:
    text: str
    kind: str = "text"  # title | heading | text | list | table
    page: int | None = None
    slide: int | None = None
    section: tuple[str, ...] = ()
    table_id: str | None = None
    start: int = 0  # offsets into ConvertedDocument.markdown
    end: int = 0
    ocr: bool = False  # read from a picture or a scanned page, not from the file's text


@dataclass
class ConvertedDocument:
    doc_id: str
    format: str
    blocks: list[Block]
    fields: dict[str, Any] = field(default_factory=dict)  # front matter or file metadata
    markdown: str = ""
    warnings: list[str] = field(default_factory=list)  # what was indexed, but not as the file means it

    def __post_init__(self) -> None:
        self.blocks = [b for b in self.blocks if b.text.strip()]
        parts, offset = [], 0
        for block in self.blocks:
            block.start, block.end = offset, offset + len(block.text)
            parts.append(block.text)
            offset = block.end + 2
        self.markdown = "\n\n".join(parts)

    @property
    def first_page_text(self) -> str:
        """Text of the first page or slide (the whole text if it has none), for header regexes."""
        first = [b.text for b in self.blocks if (b.page or b.slide or 1) == 1]
        return "\n".join(first)


def check_file_size(path: Path, cfg: IngestSettings) -> None:
    """Refuse an empty file, or one over `max_file_mb`."""
    size = path.stat().st_size
    if size == 0:
        raise DocumentLoadError("the file is empty")
    if size > cfg.max_file_mb * 1024 * 1024:
        raise DocumentLoadError(f"the file is {size / 2**20:.1f} MB, over the {cfg.max_file_mb} MB limit")


def check_text_size(chars: int, cfg: IngestSettings) -> None:
    """Refuse a document too long to index as one: chunking is linear, but its embedding would
    hold the store's writer for many minutes (docs/BENCHMARKS.md, "Chunking scale")."""
    if chars > cfg.max_text_chars:
        raise DocumentLoadError(
            f"{chars:,} characters of text, over the limit of {cfg.max_text_chars:,} for one document "
            "(ingest.max_text_chars): split the file into smaller ones"
        )


def check_cells(cells: int, cfg: IngestSettings) -> None:
    """Refuse a table Docling would reject after minutes and gigabytes, in one accurate line."""
    if cells > cfg.max_table_cells:
        raise DocumentLoadError(
            f"{cells:,} table cells, over the limit of {cfg.max_table_cells:,} (ingest.max_table_cells): "
            "split the file into smaller ones"
        )
