"""The settings' schema as TOML: every key with its default (or an override), its description as
the comment. `ragqa init` writes a fork's config with it, and the shipped ragqa.toml is its
rendering of `SHIPPED` (`python -m rag.settings_toml` writes it again after a schema change)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rag.settings import DEFAULT_CONFIG, Settings

WIDTH = 100  # of a comment; a key whose comment fits beside it within 110 characters keeps it there

# The shipped config: the sample corpus's header fields (data/sample), the rest the defaults.
SHIPPED: dict[str, Any] = {
    "headers": {
        "fields": ["Title", "Test Name", "Region", "State", "Purpose"],
        "filename_pattern": r"(?P<Test_Name>[A-Z]{2}-\d{4}-\d{2})",
        "patterns": {field: rf"(?im)^\W*{field.lower()}\W*[:|]\W*(.+?)\W*$"
                     for field in ("Test Name", "Region", "State", "Purpose")},
    },
}
SHIPPED_NOTES = {
    "": ["ragqa settings. A fork for a new document set edits this file (or a copy passed with --config), "
         "or starts from `ragqa init`. Any key can be overridden by an environment variable "
         "RAGQA_<SECTION>__<KEY>, e.g. RAGQA_LLM__BACKEND=server; top-level keys as RAGQA_<KEY>, e.g. "
         "RAGQA_STORAGE_DIR. Relative paths are relative to this file's folder.",
         "Written by `python -m rag.settings_toml` from the settings' descriptions (rag/settings*.py)."],
}


def render_config(overrides: dict[str, Any], notes: dict[str, list[str]]) -> str:
    """Every key of the settings with its default, or its value in `overrides` (nested by
    section), and its description; `notes` are comment lines at the top ("") or of a section."""
    return _section(Settings, None, overrides, notes, "").rstrip() + "\n"


def shipped_config() -> str:
    return render_config(SHIPPED, SHIPPED_NOTES)


def _section(model: type[BaseModel], defaults: BaseModel | None, overrides: dict[str, Any],
             notes: dict[str, list[str]], name: str) -> str:
    lines = [f"[{name}]"] if name else []
    lines += [line for note in notes.get(name, []) for line in _comment(note)]
    lines += [""] if not name and notes.get("") else []
    lines += _comment(model.__doc__ or "") if name else []
    later = []
    for key, info in model.model_fields.items():
        value = getattr(defaults, key) if defaults else info.get_default(call_default_factory=True)
        path = f"{name}.{key}".strip(".")
        if isinstance(value, BaseModel):
            later.append(_section(type(value), value, overrides.get(key, {}), notes, path))
            continue
        value = overrides.get(key, value)
        if isinstance(value, dict):  # a table of its own: [headers.patterns]
            body = [f"{_key(k)} = {_toml(v)}" for k, v in value.items()]
            later.append("\n".join(_keyed(f"[{path}]", info.description) + body) + "\n\n")
        elif value is None:  # an optional section, e.g. [evaluation.judge_llm]
            lines += _comment(f"[{path}]: {info.description}")
        else:
            lines += _keyed(f"{key} = {_toml(value)}", info.description)
    return "\n".join(lines) + "\n\n" + "".join(later)


def _keyed(line: str, description: str | None) -> list[str]:
    """`line` with its description beside it when that fits, else above it."""
    if not description:
        return [line]
    beside = f"{line}  # {description}"
    return [beside] if len(beside) <= 110 and "\n" not in description else [*_comment(description), line]


def _comment(text: str) -> list[str]:
    return [f"# {line}" for line in textwrap.wrap(" ".join(text.split()), WIDTH - 2)]


def _key(name: str) -> str:
    return name if name and all(c.isascii() and (c.isalnum() or c in "_-") for c in name) else _toml(name)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    text = ("" if value == Path("") else value.as_posix()) if isinstance(value, Path) else str(value)
    # A literal string keeps a regex's backslashes as they are.
    return f"'{text}'" if "'" not in text and "\n" not in text else json.dumps(text, ensure_ascii=False)


if __name__ == "__main__":
    DEFAULT_CONFIG.write_text(shipped_config(), encoding="utf-8")
    print(f"wrote {DEFAULT_CONFIG}")
