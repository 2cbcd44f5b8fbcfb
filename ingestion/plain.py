"""Our own readers, for what Docling does not read: plain text (paragraphs) and JSON (a list of
records -> a table; other values -> `path: value` lines, one block per top-level key)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ingestion.document import Block, ConvertedDocument, DocumentLoadError
from ingestion.encoding import decode
from ingestion.tables import markdown_table
from rag.settings import IngestSettings


def paragraphs(text: str) -> list[str]:
    """The text's paragraphs: parted by blank lines."""
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def read_text(path: Path, doc_id: str, fmt: str, cfg: IngestSettings) -> ConvertedDocument:
    return ConvertedDocument(doc_id, fmt, [Block(p) for p in paragraphs(decode(path.read_bytes()))])


def read_json(path: Path, doc_id: str, fmt: str, cfg: IngestSettings) -> ConvertedDocument:
    try:
        data = json.loads(decode(path.read_bytes()))
    except json.JSONDecodeError as error:
        raise DocumentLoadError(f"invalid JSON at line {error.lineno}: {error.msg}") from error
    blocks: list[Block] = []
    if _records(data):
        blocks.append(Block(_records_table(data), "table", table_id="#/json"))
    elif isinstance(data, dict):
        for key, value in data.items():
            if _records(value):
                blocks.append(Block(_records_table(value), "table", section=(str(key),), table_id=f"#/{key}"))
            else:
                lines = [f"{path}: {leaf}" for path, leaf in _flatten(value, str(key))]
                blocks.append(Block("\n".join(lines), section=(str(key),)))
    else:
        blocks.append(Block("\n".join(f"{p}: {v}" for p, v in _flatten(data, "$"))))
    return ConvertedDocument(doc_id, fmt, blocks)


def _records(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(row, dict) for row in value)


def _flatten(value: Any, path: str):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _flatten(inner, f"{path}.{key}")
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _flatten(inner, f"{path}[{index}]")
    else:
        yield path, value


def _records_table(rows: list[dict]) -> str:
    columns = list(dict.fromkeys(key for row in rows for key in row))

    def cell(value: Any) -> str:
        return str(value if not isinstance(value, (dict, list)) else json.dumps(value, ensure_ascii=False))

    return markdown_table(columns, [[cell(row.get(c, "")) for c in columns] for row in rows])
