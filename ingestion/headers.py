"""Document headers: key fields of a document prefixed to every chunk (the paper's Ver.1).

The fields are named per document set in config (`[headers] fields`). A value comes from the
first source that has it: Markdown front matter (or the file's own metadata), a named group of
`filename_pattern`, a regex over the first page or slide; a missing Title falls back to the
document's first heading, then the file name. The fields reach embeddings, BM25, the reranker and
the LLM through LlamaIndex's metadata templates; locations and ids never reach the embedding
text. `enabled = false` turns the prefix off (Ver.0) but keeps the fields as metadata.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

import yaml
from llama_index.core import Document

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
    doc_id: str, fields: dict, first_page: str, first_heading: str | None, cfg: HeaderSettings
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
        if value is None and key == "title":
            value = first_heading or stem
        if value is not None:
            header[name] = " ".join(str(value).split())
    return header


def apply_header(document: Document, header: dict[str, str], cfg: HeaderSettings) -> Document:
    """Put the header into the document's metadata, visible to the embedding only when enabled."""
    document.metadata.update(header)
    document.excluded_embed_metadata_keys = [] if cfg.enabled else list(header)
    document.excluded_llm_metadata_keys = []
    return document
