"""Document headers: key fields of a document prefixed to every chunk (the paper's Ver.1).

The fields are named per document set in config (`[headers] fields`). A value comes from the
first source that has it: Markdown front matter (or the file's own metadata), a named group of
`filename_pattern`, a regex over the first page or slide, and, with `llm = true`, the LLM reading
the first page (answers cached per first page and field list, so re-ingesting costs nothing); a
missing Title falls back to the document's first heading, then the file name. The fields reach
embeddings, BM25, the reranker and the LLM through LlamaIndex's metadata templates; locations and
ids never reach the embedding text. `enabled = false` turns the prefix off (Ver.0) but keeps the
fields as metadata.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath

import yaml
from llama_index.core import Document

from rag.replies import parse_json_object
from rag.settings import HeaderSettings

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)


def front_matter(text: str) -> tuple[dict, str]:
    """(fields, body) of a Markdown text; malformed front matter is kept as text."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text
    try:
        fields = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError:
        return {}, text
    if not isinstance(fields, dict):
        return {}, text
    return fields, text[match.end():]


def extract_header(
    doc_id: str,
    fields: dict,
    first_page: str,
    first_heading: str | None,
    cfg: HeaderSettings,
    ask_llm: Callable[[str, list[str]], dict[str, str]] | None = None,
) -> dict[str, str]:
    known = {str(k).lower(): v for k, v in fields.items() if v not in (None, "")}
    stem = PurePosixPath(doc_id).stem
    by_filename = {}
    if cfg.filename_pattern and (match := re.search(cfg.filename_pattern, stem)):
        by_filename = {k.replace("_", " ").lower(): v for k, v in match.groupdict().items() if v}
    header = {}
    for name in cfg.fields:
        key = name.lower()
        value = known.get(key) or by_filename.get(key)
        if value is None and name in cfg.patterns and (match := re.search(cfg.patterns[name], first_page)):
            value = match.group(1)
        if value is not None:
            header[name] = " ".join(str(value).split())
    missing = [name for name in cfg.fields if name not in header]
    if missing and ask_llm is not None:
        header |= {k: v for k, v in ask_llm(first_page, missing).items() if k in missing}
    if "title" in {n.lower() for n in cfg.fields} and not any(k.lower() == "title" for k in header):
        title = next(n for n in cfg.fields if n.lower() == "title")
        header[title] = " ".join((first_heading or stem).split())
    return {name: header[name] for name in cfg.fields if name in header}


class LLMHeaderExtractor:
    """Asks the LLM for header fields as strict JSON; answers are cached on disk by a hash of
    the first page and the field names. A malformed reply is retried once, then gives nothing."""

    def __init__(self, complete: Callable[[str], str], prompt: str, cache_file: Path, max_chars: int = 2000):
        self.complete = complete
        self.prompt = prompt
        self.cache_file = cache_file
        self.max_chars = max_chars
        self.cache: dict[str, dict[str, str]] = (
            json.loads(cache_file.read_text(encoding="utf-8")) if cache_file.exists() else {}
        )

    def __call__(self, first_page: str, fields: list[str]) -> dict[str, str]:
        text = first_page[: self.max_chars]
        key = hashlib.sha256(json.dumps([text, fields], ensure_ascii=False).encode()).hexdigest()
        if key not in self.cache:
            self.cache[key] = self._ask(text, fields)
            self.cache_file.parent.mkdir(parents=True, exist_ok=True)
            self.cache_file.write_text(json.dumps(self.cache, ensure_ascii=False, indent=1), encoding="utf-8")
        return self.cache[key]

    def _ask(self, text: str, fields: list[str]) -> dict[str, str]:
        prompt = self.prompt.format(fields=", ".join(json.dumps(f) for f in fields), text=text)
        for _attempt in range(2):
            parsed = parse_json_object(self.complete(prompt))
            if parsed is not None:
                return {f: " ".join(str(parsed[f]).split())
                        for f in fields if parsed.get(f) not in (None, "", "null")}
        return {}


def apply_header(document: Document, header: dict[str, str], cfg: HeaderSettings) -> Document:
    """Put the header into the document's metadata, visible to the embedding only when enabled."""
    document.metadata.update(header)
    document.excluded_embed_metadata_keys = [] if cfg.enabled else list(header)
    document.excluded_llm_metadata_keys = []
    return document
