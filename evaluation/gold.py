"""Gold evidence matching (DESIGN.md, "QA file format").

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


def load_qa(path: Path) -> list[dict[str, Any]]:
    """Read a QA file (JSON Lines); a malformed line is reported with its number."""
    items = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not JSON ({error.msg})") from error
    return items
