"""Chunking: located blocks -> chunks that keep their document, page span, slide, section path
and table id.

Rules (the paper's, with the PDF study's page anchors):
- a document shorter than the bound stays whole;
- a slide is a chunk;
- a section is a chunk unless it is longer than the bound, then it is packed block by block
  (paragraph boundaries) and a block longer than the bound is split by LlamaIndex's
  SentenceSplitter, with overlap;
- a table is never cut inside a row; a split table repeats its header row.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from itertools import groupby
from typing import Any

from llama_index.core import Document
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.node_parser import NodeParser, SentenceSplitter
from llama_index.core.schema import BaseNode, NodeRelationship, RelatedNodeInfo, TextNode

from ingestion.document import Block, ConvertedDocument

LOCATION_KEYS = ("doc", "page", "page_end", "slide", "section", "sections", "table_id", "ocr")


class LocatedDocument(Document):
    """A LlamaIndex Document that carries its converted blocks to the chunker."""

    _converted: ConvertedDocument | None = PrivateAttr(default=None)

    @classmethod
    def from_converted(cls, converted: ConvertedDocument) -> LocatedDocument:
        document = cls(id_=converted.doc_id, text=converted.markdown, metadata={"doc": converted.doc_id})
        document._converted = converted
        return document

    @property
    def converted(self) -> ConvertedDocument:
        if self._converted is None:
            raise ValueError(f"{self.doc_id}: no converted blocks attached")
        return self._converted


class BlockChunker(NodeParser):
    """Chunk LocatedDocuments along their blocks (see the module docstring for the rules)."""

    chunk_size: int = Field(default=900, description="Upper bound of a chunk in characters.")
    chunk_overlap: int = Field(default=150, description="Overlap when a long block is split.")
    _splitter: SentenceSplitter = PrivateAttr()

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # `list` as tokenizer: one token per character, so sizes are in characters.
        self._splitter = SentenceSplitter(
            chunk_size=self.chunk_size, chunk_overlap=self.chunk_overlap, tokenizer=list
        )

    @classmethod
    def class_name(cls) -> str:
        return "BlockChunker"

    def _parse_nodes(
        self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any
    ) -> list[BaseNode]:
        chunks: list[BaseNode] = []
        for document in nodes:
            if not isinstance(document, LocatedDocument):
                raise TypeError(f"BlockChunker needs LocatedDocuments, got {type(document).__name__}")
            groups = self.group(document.converted.blocks)
            # Hashed once: `document.hash` reads the whole text, and so does each call of
            # `as_related_node_info()` (once per chunk, it made chunking quadratic in the size).
            source = document.as_related_node_info()
            seed = hashlib.sha1(f"{document.doc_id}:{source.hash}".encode()).hexdigest()[:16]
            for position, group in enumerate(groups):
                chunks.append(self._node(document, source, group, f"{seed}-{position}"))
        return chunks

    def _postprocess_parsed_nodes(
        self, nodes: list[BaseNode], parent_doc_map: dict[str, Document]
    ) -> list[BaseNode]:
        # Without the documents: NodeParser would look each chunk's text up in its document for
        # character offsets, through the rest of the document where a chunk is no verbatim slice
        # of it (a split table's parts repeat the header), which is quadratic too. Nothing here
        # reads those offsets, and each chunk already holds its document's metadata.
        return super()._postprocess_parsed_nodes(nodes, {})

    # ---------------------------------------------------------------- grouping rules

    def group(self, blocks: list[Block]) -> list[list[Block]]:
        """The blocks of each chunk, in order."""
        if sum(len(b.text) + 2 for b in blocks) <= self.chunk_size and not any(b.slide for b in blocks):
            return [blocks]
        groups: list[list[Block]] = []
        for _key, unit in groupby(blocks, key=lambda b: (b.slide, b.section) if b.slide is None else b.slide):
            unit = list(unit)
            if unit[0].slide is not None:
                groups.append(unit)  # a slide is a chunk, whatever its length
            else:
                groups.extend(self._pack(unit))
        return groups

    def _pack(self, blocks: list[Block]) -> list[list[Block]]:
        packed: list[list[Block]] = []
        current: list[Block] = []
        size = 0
        for block in blocks:
            for piece in self._fit(block):
                if current and size + len(piece.text) + 2 > self.chunk_size:
                    packed.append(current)
                    current, size = [], 0
                current.append(piece)
                size += len(piece.text) + 2
        if current:
            packed.append(current)
        return packed

    def _fit(self, block: Block) -> list[Block]:
        """Split a block that alone exceeds the bound: tables by rows, text by sentences."""
        if len(block.text) <= self.chunk_size:
            return [block]
        if block.kind == "table":
            return [_replace(block, text) for text in split_table(block.text, self.chunk_size)]
        return [_replace(block, text) for text in self._splitter.split_text(block.text)]

    def _node(
        self, document: LocatedDocument, source: RelatedNodeInfo, blocks: list[Block], node_id: str
    ) -> TextNode:
        pages = [b.page for b in blocks if b.page is not None]
        paths = list(dict.fromkeys(" > ".join(b.section) for b in blocks if b.section))
        location: dict[str, Any] = {
            "page": min(pages) if pages else None,
            "page_end": max(pages) if pages else None,
            "slide": blocks[0].slide,
            "section": paths[0] if paths else None,  # where the chunk starts, for citations
            "sections": "\n".join(paths) or None,  # every section path it covers, for gold matching
            "table_id": next((b.table_id for b in blocks if b.table_id), None),
            "ocr": True if any(b.ocr for b in blocks) else None,  # the UI says the text was OCRed
        }
        # Chroma stores flat, non-null metadata only.
        metadata = {**document.metadata, **{k: v for k, v in location.items() if v is not None}}
        return TextNode(
            id_=node_id,
            text="\n\n".join(b.text for b in blocks),
            metadata=metadata,
            excluded_embed_metadata_keys=sorted({*document.excluded_embed_metadata_keys, *LOCATION_KEYS}),
            excluded_llm_metadata_keys=list(document.excluded_llm_metadata_keys),
            relationships={NodeRelationship.SOURCE: source},
        )


def _replace(block: Block, text: str) -> Block:
    return Block(text, block.kind, block.page, block.slide, block.section, block.table_id, ocr=block.ocr)


def split_table(table: str, bound: int) -> list[str]:
    """Split a Markdown table between rows; every part repeats the header and separator rows."""
    lines = table.splitlines()
    header, rows = lines[:2], lines[2:]
    head_size = sum(len(line) + 1 for line in header)
    parts, current, size = [], [], head_size
    for row in rows:
        if current and size + len(row) + 1 > bound:
            parts.append("\n".join(header + current))
            current, size = [], head_size
        current.append(row)
        size += len(row) + 1
    if current or not parts:
        parts.append("\n".join(header + current))
    return parts
