"""Word spacing kept per PDF strategy: the share of the text layer's spaces each strategy keeps.

    .venv/bin/python benchmarks/pdf_spacing.py [PDF ...] [--strategies text,layout,anchored,markdown]
        [--out FILE]

Devbench's PDF is always measured, then the PDFs given. The reference is pypdfium2's text of
each page; each strategy's text for that page (its blocks anchored there) is aligned with it
and its whitespace compared boundary by boundary (`ingestion.spacing`: a line break of the
text layer counts as a space). `markdown` has no page anchors, so its whole text is compared
with the whole text layer, as one page. Prints min and mean share over pages, the spaces
compared and the spaces added inside words; writes per-page figures as JSON.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from common import arguments, write_json
from corpora import DEVBENCH
from ingestion.convert import convert
from ingestion.pdf import pdf_text_layer
from ingestion.spacing import spacing
from rag.settings import IngestSettings

STRATEGIES = ("text", "layout", "anchored", "markdown")


def measure(path: Path, strategy: str, layer: list[str]) -> dict:
    started = time.perf_counter()
    document = convert(path, path.name, IngestSettings(pdf_strategy=strategy, ocr="off"))
    seconds = time.perf_counter() - started
    if strategy == "markdown":
        pairs = {1: ("\n".join(layer), document.markdown)}
    else:
        texts: dict[int, list[str]] = {}
        for block in document.blocks:
            texts.setdefault(block.page, []).append(block.text)
        pairs = {n: (page, "\n\n".join(texts.get(n, []))) for n, page in enumerate(layer, 1)}
    pages = {}
    for number, (reference, text) in pairs.items():
        result = spacing(reference, text)
        if result.spaces:  # pages without text or with nothing aligned say nothing
            pages[number] = {"share": round(result.share, 4), "spaces": result.spaces, "kept": result.kept,
                             "breaks": result.breaks, "added": result.added}
    shares = [p["share"] for p in pages.values()] or [1.0]
    return {
        "min": min(shares), "mean": round(statistics.fmean(shares), 4),
        "worst_page": min(pages, key=lambda n: pages[n]["share"]) if pages else None,
        "spaces": sum(p["spaces"] for p in pages.values()), "added": sum(p["added"] for p in pages.values()),
        "convert_s": round(seconds, 2), "pages": pages,
    }


def main() -> None:
    parser = arguments("pdf-spacing")
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    args = parser.parse_args()
    english = DEVBENCH / "docs/debian-faq.en.pdf"
    paths = ([english] if english.is_file() else []) + args.paths
    results: dict[str, dict] = {}
    print(f"{'pdf':28} {'strategy':9} {'min':>6} {'mean':>6} {'worst':>5} {'spaces':>7} {'added':>6} "
          f"{'convert s':>9}")
    for path in paths:
        layer = pdf_text_layer(path).pages
        results[path.name] = {}
        for strategy in args.strategies.split(","):
            row = results[path.name][strategy] = measure(path, strategy, layer)
            print(f"{path.name[:28]:28} {strategy:9} {row['min']:6.3f} {row['mean']:6.3f} "
                  f"{row['worst_page'] or '-':>5} {row['spaces']:7} {row['added']:6} {row['convert_s']:9.2f}")
    write_json(args.out, results)


if __name__ == "__main__":
    main()
