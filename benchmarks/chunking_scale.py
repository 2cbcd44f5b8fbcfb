"""Conversion and chunking time by document size: one-line HTML pages of 1, 2, 4, ... MB (bold
words and links in every paragraph, as exported pages have them), each converted and chunked as
`ragqa ingest` does, without embedding.

    .venv/bin/python benchmarks/chunking_scale.py [--sizes 1,2,4,8,16,32,50] [--out FILE]

Prints per size the seconds to convert (Docling and ingestion/convert.py) and to chunk
(ingestion/chunking.py), the chunks, the peak memory of the process so far, and the time per MB,
which stays level when both are linear; writes JSON. `ingest.max_text_chars` is lifted here so
that sizes over it can be timed.
"""

from __future__ import annotations

import random
import resource
import tempfile
import time
from pathlib import Path

from common import arguments, write_json

from ingestion.chunking import BlockChunker, LocatedDocument
from ingestion.convert import convert
from rag.settings import IngestSettings

WORDS = ("the crash test dummy reached a peak load in the frontal impact and side pole test while "
         "its belt force stayed below the limit set for the programme").split()


def page(megabytes: float, rng: random.Random) -> str:
    """One line of HTML: paragraphs of five sentences, one word bold and one a link in each."""
    parts, size, target = [], 0, int(megabytes * 2**20)
    while size < target:
        sentences = [" ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + "." for _ in range(5)]
        sentences[1] = sentences[1].replace(" dummy ", " <b>dummy</b> ", 1)
        sentences[3] = sentences[3].replace(" test ", ' <a href="tests.html">test</a> ', 1)
        paragraph = "<p>" + " ".join(sentences) + "</p>"
        parts.append(paragraph)
        size += len(paragraph)
    return "<html><head><title>Export</title></head><body>" + "".join(parts) + "</body></html>"


def measure(megabytes: float, folder: Path) -> dict[str, float]:
    path = folder / f"export-{megabytes:g}mb.html"
    path.write_text(page(megabytes, random.Random(1)), encoding="utf-8")
    unlimited = IngestSettings(max_file_mb=1024, max_text_chars=2**40)
    clock = time.perf_counter()
    converted = convert(path, path.name, unlimited)
    converted_s = time.perf_counter() - clock
    clock = time.perf_counter()
    nodes = BlockChunker().get_nodes_from_documents([LocatedDocument.from_converted(converted)])
    chunk_s = time.perf_counter() - clock
    path.unlink()
    return {"mb": megabytes, "text_chars": len(converted.markdown), "chunks": len(nodes),
            "convert_s": round(converted_s, 2), "chunk_s": round(chunk_s, 2),
            "s_per_mb": round((converted_s + chunk_s) / megabytes, 2),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def main() -> None:
    parser = arguments("chunking-scale")
    parser.add_argument("--sizes", default="1,2,4,8,16,32,50", help="Page sizes in MB, comma-separated.")
    args = parser.parse_args()
    rows = []
    print(f"{'MB':>5} {'text chars':>12} {'chunks':>8} {'convert s':>10} {'chunk s':>8} {'s/MB':>6} "
          f"{'peak MB':>8}")
    with tempfile.TemporaryDirectory() as folder:
        for megabytes in (float(s) for s in args.sizes.split(",")):
            row = measure(megabytes, Path(folder))
            rows.append(row)
            print(f"{row['mb']:>5g} {row['text_chars']:>12,} {row['chunks']:>8,} {row['convert_s']:>10} "
                  f"{row['chunk_s']:>8} {row['s_per_mb']:>6} {row['peak_rss_mb']:>8}", flush=True)
    write_json(args.out, rows)


if __name__ == "__main__":
    main()
