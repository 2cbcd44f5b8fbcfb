"""Retrieval by stage (dense, BM25, hybrid, hybrid + rerank) and by n, as in the paper's Table 5.

    .venv/bin/python benchmarks/retrieval_stages.py [--out FILE]

Corpora: the sample corpus with data/sample/qa.jsonl, and devbench's Debian FAQ HTML in English
and Korean with their QA files. For each n in 10/20/30 the stages retrieve n chunks; the rerank
stage reorders hybrid's n with the configured scorer (the bi-encoder until a cross-encoder is
trained). Prints MAP@1/5/10 and Success@1/5/10 and writes JSON. The scoring is
evaluation.retrieval's, as in `ragqa eval retrieval` (which covers one corpus per run).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

import rag  # noqa: F401
from evaluation.gold import load_qa
from evaluation.retrieval import evaluate_stages
from ingestion.pipeline import ingest
from rag.settings import REPO_ROOT, load_settings

DEVBENCH = REPO_ROOT.parent / "shared" / "devbench"
# (name, corpus root, folder under it, QA file): gold doc ids are relative to the corpus root.
CORPORA = [
    ("sample", REPO_ROOT / "data/sample/docs", None, REPO_ROOT / "data/sample/qa.jsonl"),
    ("debian_faq_en_html", DEVBENCH / "docs", "debian-faq-en", DEVBENCH / "qa/debian_faq_en_html.jsonl"),
    ("debian_faq_ko_html", DEVBENCH / "docs", "debian-faq-ko", DEVBENCH / "qa/debian_faq_ko_html.jsonl"),
]
COLUMNS = ["map@1", "map@5", "map@10", "success@1", "success@5", "success@10"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "storage/reports/bench-retrieval-stages.json")
    args = parser.parse_args()
    results = {}
    for name, root, folder, qa_file in CORPORA:
        settings = load_settings()
        settings.storage_dir = Path(tempfile.mkdtemp(prefix="ragqa-bench-stages-"))
        if folder:  # ingest only that folder, with doc ids relative to the root as in the QA
            root_copy = settings.storage_dir / "corpus"
            shutil.copytree(root / folder, root_copy / folder)
            root = root_copy
        ingest([root], settings, progress=False)
        qa = [q for q in load_qa(qa_file) if q.get("answerable", True) and q["evidence"]]
        results[name] = {}
        for n in (10, 20, 30):
            results[name][f"n={n}"], _rows = evaluate_stages(settings, qa, n, progress=False)
            print(f"\n{name}, n={n}, {len(qa)} questions")
            print(f"{'':8}" + "".join(f"{c:>12}" for c in COLUMNS))
            for stage, row in results[name][f"n={n}"].items():
                print(f"{stage:8}" + "".join(f"{row[c]:>12.3f}" for c in COLUMNS))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1))
    print(args.out)


if __name__ == "__main__":
    main()
