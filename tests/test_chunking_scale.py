"""Chunking is linear in a document's size (issue 29: 1, 2, 4 MB took 4, 16, 61 s), and a document
too long to index as one is refused in one line."""

from __future__ import annotations

import hashlib
import time

import llama_index.core.schema as schema
import pytest

from ingestion.chunking import BlockChunker, LocatedDocument
from ingestion.convert import convert
from ingestion.document import Block, ConvertedDocument, DocumentLoadError
from rag.settings import IngestSettings


def big_document(rows: int) -> LocatedDocument:
    """A table split into hundreds of parts (each repeats the header, so no part is a slice of
    the document's text) and paragraphs packed into chunks."""
    table = "| run | speed | hic15 | result |\n|---|---|---|---|\n" + "\n".join(
        f"| R-{i:06d} | {40 + i % 30} | {300 + 7 * i} | pass |" for i in range(rows)
    )
    text = [Block(f"Paragraph {i} on the sled test and its dummy readings. " * 4) for i in range(rows // 4)]
    return LocatedDocument.from_converted(ConvertedDocument("big.md", "md", [Block(table, "table"), *text]))


def test_chunking_hashes_the_document_once(monkeypatch):
    """Each chunk's link to its document once hashed the whole text: bytes hashed grew with
    chunks x size."""
    document = big_document(4000)
    hashed = []

    def counting(data: bytes = b""):
        hashed.append(len(data))
        return hashlib.sha256(data)

    monkeypatch.setattr(schema, "sha256", counting)
    nodes = BlockChunker().get_nodes_from_documents([document])
    assert len(nodes) > 300
    # The document once, each chunk about twice (its neighbours' links to it); not once per chunk.
    assert sum(hashed) < 5 * len(document.text), (sum(hashed), len(document.text))


def test_twice_the_size_takes_about_twice_the_time():
    """Not a timing test in the strict sense: the best of three runs, and 3.5x allowed for 2x the
    size (quadratic chunking took 5x; the split table's search alone made it so; linear takes 2x
    to 2.6x on a busy machine)."""
    def seconds(document: LocatedDocument) -> float:
        runs = []
        for _ in range(3):
            start = time.perf_counter()
            BlockChunker().get_nodes_from_documents([document])
            runs.append(time.perf_counter() - start)
        return min(runs)

    small, large = seconds(big_document(15000)), seconds(big_document(30000))
    assert large < 3.5 * small + 0.05, (small, large)


def test_a_document_over_the_text_limit_is_refused_in_one_line(tmp_path):
    page = tmp_path / "export.html"
    page.write_text("<html><body>" + "<p>Sled test run with its dummy readings.</p>" * 3000
                    + "</body></html>",
                    encoding="utf-8")
    limited = IngestSettings(max_text_chars=100_000)
    with pytest.raises(DocumentLoadError, match=r"^114,000 characters of text, "
                       r"over the limit of 100,000 for one "
                       r"document \(ingest.max_text_chars\): split the file into smaller ones$"):
        convert(page, "export.html", limited)
    notes = tmp_path / "notes.txt"
    notes.write_text("A line of notes.\n\n" * 10000, encoding="utf-8")
    with pytest.raises(DocumentLoadError, match="over the limit of 100,000 for one document"):
        convert(notes, "notes.txt", limited)
    assert convert(notes, "notes.txt", IngestSettings()).blocks  # within the default limit
