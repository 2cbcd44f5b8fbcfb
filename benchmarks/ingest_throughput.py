"""Ingestion throughput: conversion vs indexing (chunking + embedding + Chroma), per format.

    .venv/bin/python benchmarks/ingest_throughput.py [PATH ...] [--out FILE]

Default PATH: ../shared/devbench/docs (real PDF, HTML, PPTX, DOCX, CSV, Korean text). Each
format is ingested into its own fresh store; prints a table and writes JSON.
"""

from __future__ import annotations

import tempfile
from collections import defaultdict
from pathlib import Path

from common import arguments, write_json

import rag  # noqa: F401
from ingestion.convert import SUPPORTED_SUFFIXES
from ingestion.pipeline import ingest
from ingestion.sources import discover
from rag.settings import REPO_ROOT, load_settings


def page_count(path: Path) -> int:
    """Pages of a PDF, slides of a deck; other formats count as one page per file."""
    if path.suffix.lower() == ".pdf":
        import pypdfium2

        return len(pypdfium2.PdfDocument(str(path)))
    if path.suffix.lower() == ".pptx":
        from pptx import Presentation

        return len(Presentation(str(path)).slides)
    return 1


def main() -> None:
    parser = arguments("ingest")
    parser.add_argument("paths", nargs="*", type=Path, default=[REPO_ROOT.parent / "shared/devbench/docs"])
    args = parser.parse_args()
    by_format: dict[str, list[Path]] = defaultdict(list)
    for file, _doc_id in discover(args.paths):
        if file.suffix.lower() in SUPPORTED_SUFFIXES:
            by_format[file.suffix.lower()].append(file)
    results = {}
    print(f"{'format':7} {'files':>5} {'pages':>6} {'chunks':>6} {'convert s':>9} {'index s':>8} "
          f"{'pages/s':>8} {'chunks/s':>8}")
    for suffix, files in sorted(by_format.items()):
        settings = load_settings()
        settings.storage_dir = Path(tempfile.mkdtemp(prefix="ragqa-bench-ingest-"))
        report = ingest(files, settings, progress=False)
        pages = sum(page_count(f) for f in files)
        row = {
            "files": report.files, "failed": len(report.failed), "pages": pages, "chunks": report.chunks,
            "convert_s": report.convert_seconds, "index_s": report.index_seconds,
            "pages_per_s_convert": round(pages / max(report.convert_seconds, 0.01), 1),
            "chunks_per_s_index": round(report.chunks / max(report.index_seconds, 0.01), 1),
        }
        results[suffix] = row
        print(f"{suffix:7} {row['files']:5} {pages:6} {row['chunks']:6} {row['convert_s']:9.2f} "
              f"{row['index_s']:8.2f} {row['pages_per_s_convert']:8.1f} {row['chunks_per_s_index']:8.1f}")
    write_json(args.out, results)


if __name__ == "__main__":
    main()
