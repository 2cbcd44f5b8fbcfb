"""Our own readers, for what Docling does not read: plain text (paragraphs) and JSON (a list of
records -> a table whose columns are the records' key paths; other values -> `path: value` lines,
one block per top-level key).

>>> list(_flatten({"route": {"via": None, "legs": 2}, "scope": ["LDS", "BRS"]}, "$"))
[('$.route.via', ''), ('$.route.legs', 2), ('$.scope', 'LDS, BRS')]
"""

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
    """(key path, leaf) pairs; a list of plain values is one leaf, as a reader would say it, and a
    null is blank, so that it reads as a blank cell and never as the word "None"."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _flatten(inner, f"{path}.{key}")
    elif isinstance(value, list) and not any(isinstance(inner, (dict, list)) for inner in value):
        yield path, ", ".join("" if inner is None else str(inner) for inner in value)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _flatten(inner, f"{path}[{index}]")
    else:
        yield path, "" if value is None else value


def _records_table(rows: list[dict]) -> str:
    """Nested objects spread into columns named by their key paths ("cargo.weights.gross_kg"), so
    that each leaf is a cell a question can name, never a JSON blob in one cell."""
    flat = [{path: str(leaf) for key, value in row.items() for path, leaf in _flatten(value, str(key))}
            for row in rows]
    columns = list(dict.fromkeys(key for row in flat for key in row))
    return markdown_table(columns, [[row.get(c, "") for c in columns] for row in flat])
