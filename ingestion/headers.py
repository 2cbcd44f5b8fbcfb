"""Document headers: key fields of a document prefixed to every chunk (the paper's Ver.1).

The fields are named in config (`chunking.header_fields`); values come from the Markdown front
matter, else (for a title) the first heading or the file name. They reach embeddings, BM25, the
reranker and the LLM through LlamaIndex's metadata templates; ids and paths never reach the
embedding text. `chunking.header = false` turns the prefix off (Ver.0).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

import yaml
from llama_index.core import Document

from rag.settings import ChunkingSettings

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
LOCATION_KEYS = ["doc", "section", "page", "slide"]


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


def header_fields(document: Document, names: list[str], fields: dict, body: str) -> dict[str, str]:
    lowered = {str(k).lower(): v for k, v in fields.items()}
    header = {}
    for name in names:
        value = lowered.get(name.lower())
        if value is None and name.lower() == "title":
            heading = _HEADING.search(body)
            value = heading.group(1) if heading else PurePosixPath(document.doc_id).stem
        if value is not None:
            header[name] = str(value)
    return header


def apply_header(document: Document, cfg: ChunkingSettings) -> Document:
    fields, body = front_matter(document.text)
    document.set_content(body)
    header = header_fields(document, cfg.header_fields, fields, body)
    document.metadata.update(header)
    embedded = list(header) if cfg.header else []
    document.excluded_embed_metadata_keys = [
        key for key in [*LOCATION_KEYS, *header] if key not in embedded
    ]
    document.excluded_llm_metadata_keys = []
    return document
