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
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def satisfies(evidence: dict[str, Any], chunk_text: str, metadata: dict[str, Any],
              chunk_id: str = "") -> bool:
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


class Evidence(BaseModel):
    """An evidence item of a QA item, typed as docs/schemas/qa_item.schema.json (JSON types:
    no coercion, so "3" is no page)."""

    model_config = ConfigDict(strict=True, extra="allow")

    doc: str | None = None
    page: int | None = None
    slide: int | None = None
    section: str | None = None
    text: str | None = None
    chunk_id: str | None = None
    required: bool = True

    @model_validator(mode="after")
    def _located(self) -> Evidence:
        # An item with neither would be satisfied by every chunk.
        if not self.doc and not self.chunk_id:
            raise ValueError("an evidence item needs its doc or its chunk_id")
        return self


class QAItem(BaseModel):
    """A QA item's fields that the evaluators and trainers read; others are kept as they are."""

    model_config = ConfigDict(strict=True, extra="allow")

    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    answer: str | None = None
    answerable: bool = True
    # The question's kind, free text: a fork names its own kinds; the answer metrics group by it.
    type: str | None = Field(default=None, min_length=1)
    evidence: list[Evidence] = []
    history: list[Annotated[str, Field(min_length=1)]] = []


def load_jsonl(
    path: Path, required: tuple[str, ...], what: str, schema: type[BaseModel] | None = None,
    unique: str | None = None,
) -> list[dict[str, Any]]:
    """Read a JSON Lines file of objects that each have the `required` keys (and fit `schema`,
    with no two sharing their `unique` key); a malformed line, or a file with none, is a
    ValueError naming the file and line."""
    items, seen = [], {}
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
        if schema is not None:
            try:
                schema.model_validate(item)
            except ValidationError as error:
                raise ValueError(f"{path}:{number}: {_problems(error)} (docs/FORMATS.md)") from None
        if unique is not None:
            if item[unique] in seen:
                raise ValueError(f"{path}:{number}: {unique} {item[unique]!r} "
                                 f"is already on line {seen[item[unique]]}")
            seen[item[unique]] = number
        items.append(item)
    if not items:
        raise ValueError(f"{path}: no {what}s in the file")
    return items


def _problems(error: ValidationError) -> str:
    """`evidence[0].page: reason; ...`"""
    def where(loc: tuple) -> str:
        text = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
        return text.lstrip(".") or "the item"

    return "; ".join(f"{where(e['loc'])}: {e['msg'].removeprefix('Value error, ')}" for e in error.errors())


def load_qa(path: Path) -> list[dict[str, Any]]:
    """Read a QA file (JSON Lines, one question per line with its id and evidence; ids unique)."""
    return load_jsonl(path, ("id", "question"), "question", QAItem, unique="id")
