"""Gold evidence matching (docs/FORMATS.md, "QA item").

A retrieved chunk satisfies an evidence item when its document matches and every field the item
gives holds: the page lies in the chunk's page span, the slide is the chunk's slide, the section
is one of the chunk's section-path components, the text (whitespace- and case-normalised) is
contained in the chunk, the chunk id is equal.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def satisfies(evidence: dict[str, Any], chunk_text: str, metadata: dict[str, Any], chunk_id: str = "") -> bool:
    if evidence.get("doc") and evidence["doc"] != metadata.get("doc"):
        return False
    if evidence.get("chunk_id") and evidence["chunk_id"] != chunk_id:
        return False
    if evidence.get("page") is not None:
        first, last = metadata.get("page"), metadata.get("page_end", metadata.get("page"))
        if first is None or not first <= evidence["page"] <= (last if last is not None else first):
            return False
    if evidence.get("slide") is not None and evidence["slide"] != metadata.get("slide"):
        return False
    if evidence.get("section"):
        paths = (metadata.get("sections") or metadata.get("section") or "").split("\n")
        parts = {normalise(part) for path in paths for part in path.split(" > ")}
        if normalise(evidence["section"]) not in parts:
            return False
    if evidence.get("text") and normalise(evidence["text"]) not in normalise(chunk_text):
        return False
    return True


def load_jsonl(path: Path, required: tuple[str, ...], what: str) -> list[dict[str, Any]]:
    """Read a JSON Lines file of objects that each have the `required` keys; a malformed line,
    or a file with none, is a ValueError naming the file and line."""
    items = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 text") from error
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number}: not JSON ({error.msg})") from error
        if not isinstance(item, dict):
            raise ValueError(f"{path}:{number}: a {what} must be a JSON object, not a {type(item).__name__}")
        missing = [key for key in required if key not in item]
        if missing:
            raise ValueError(f"{path}:{number}: the {what} has no {', '.join(missing)}")
        items.append(item)
    if not items:
        raise ValueError(f"{path}: no {what}s in the file")
    return items


def load_qa(path: Path) -> list[dict[str, Any]]:
    """Read a QA file (JSON Lines, one question per line with its id and evidence)."""
    return load_jsonl(path, ("id", "question"), "question")
