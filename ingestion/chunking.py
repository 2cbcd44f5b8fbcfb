"""Chunking helpers around LlamaIndex's node parsers."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from llama_index.core.schema import BaseNode, TransformComponent

_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


class SectionMetadata(TransformComponent):
    """Turn MarkdownNodeParser's `header_path` plus the node's own heading into `section`,
    the section path a citation shows (e.g. "Results > Frontal impact"), and drop nodes that
    hold nothing but a heading (the heading lives on in their children's section path)."""

    def __call__(self, nodes: list[BaseNode], **kwargs: Any) -> list[BaseNode]:
        kept = []
        for node in nodes:
            lines = node.get_content().strip().split("\n", 1)
            heading = _HEADING.match(lines[0])
            if heading and (len(lines) == 1 or not lines[1].strip()):
                continue
            # Parsers share one metadata dict between sibling nodes: give each its own.
            metadata = dict(node.metadata)
            path = [p for p in metadata.pop("header_path", "").split("/") if p]
            if heading:
                path.append(heading.group(1))
            if path:
                metadata["section"] = " > ".join(path)
            node.metadata = metadata
            node.excluded_embed_metadata_keys = sorted({*node.excluded_embed_metadata_keys, "section"})
            kept.append(node)
        return kept


class StableIds(TransformComponent):
    """Chunk ids from the source document's content hash and the chunk's position in it.

    Re-ingesting an unchanged file gives the same ids (upserts replace instead of duplicating);
    a changed file gets new ids. Runs last, on the final chunks, because the node parsers'
    `id_func` only sees the position within one split call.
    """

    def __call__(self, nodes: list[BaseNode], **kwargs: Any) -> list[BaseNode]:
        positions: dict[str, int] = {}
        for node in nodes:
            source = node.source_node
            doc_id = source.node_id if source else node.node_id
            seed = f"{doc_id}:{source.hash if source else node.hash}".encode()
            position = positions[doc_id] = positions.get(doc_id, -1) + 1
            node.id_ = f"{hashlib.sha1(seed).hexdigest()[:16]}-{position}"
        return nodes
