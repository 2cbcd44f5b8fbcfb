"""Retrieval by stage (dense, BM25, hybrid, hybrid + rerank) and by n, as in the paper's Table 5.

    .venv/bin/python benchmarks/retrieval_stages.py [--n 10,20] [--corpora sample,...] [--out FILE]

Corpora (benchmarks/corpora.py): the sample corpus with data/sample/qa.jsonl, and devbench's
Debian FAQ (HTML in English and Korean, the English PDF) and Python FAQ with their QA files. For
each n the stages retrieve n chunks; the rerank stage reorders hybrid's n with the configured
rerank stage (the learned ranker by default). Prints MAP@1/5, Success@1/5/10 and MRR and writes
JSON. The scoring is evaluation.retrieval's, as in `ragqa eval retrieval` (which covers one corpus per run).
"""

from __future__ import annotations


from common import arguments, write_json
from corpora import answerable, corpora, indexed
from evaluation.retrieval import evaluate_stages

COLUMNS = ["map@1", "map@5", "success@1", "success@5", "success@10", "mrr"]


def main() -> None:
    parser = arguments("retrieval-stages")
    parser.add_argument("--n", default="10,20", help="Chunks each stage ranks (comma-separated).")
    parser.add_argument("--corpora", default="", help="Only these corpora (comma-separated names).")
    args = parser.parse_args()
    results = {}
    for corpus in corpora([c for c in args.corpora.split(",") if c]):
        settings = indexed(corpus)
        qa = answerable(corpus.qa)
        results[corpus.name] = {}
        for n in map(int, args.n.split(",")):
            results[corpus.name][f"n={n}"], _rows = evaluate_stages(settings, qa, n, progress=False)
            print(f"\n{corpus.name}, n={n}, {len(qa)} questions")
            print(f"{'':8}" + "".join(f"{c:>12}" for c in COLUMNS))
            for stage, row in results[corpus.name][f"n={n}"].items():
                print(f"{stage:8}" + "".join(f"{row[c]:>12.3f}" for c in COLUMNS))
    write_json(args.out, results)


if __name__ == "__main__":
    main()
