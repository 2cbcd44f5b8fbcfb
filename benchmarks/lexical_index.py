"""The lexical index against the whole-corpus bm25s index it replaced: retrieval quality and
query time of the BM25 channel alone, on each benchmark corpus's answerable questions.

    .venv/bin/python benchmarks/lexical_index.py [--corpora sample,...] [--out FILE]

bm25s is LlamaIndex's BM25Retriever built in memory from the store's chunks (what ragqa used
before the FTS5 index); FTS5 is rag/lexical.py as ingestion keeps it. Both rank 20 chunks.
Prints MAP@1, Success@5/10, MRR and the p50 query time, and writes JSON.
"""

from __future__ import annotations

import statistics
import time

from common import arguments, write_json
from corpora import answerable, corpora, indexed
from llama_index.retrievers.bm25 import BM25Retriever

from evaluation.metrics import aggregate, evidence_hits, question_metrics
from evaluation.retrieval import ranked
from rag.retrieval import lexical_index
from rag.store import all_nodes

COLUMNS = ["map@1", "success@5", "success@10", "mrr"]


def measure(search, qa: list[dict]) -> dict[str, float]:
    per_question, ms = [], []
    for item in qa:
        clock = time.perf_counter()
        nodes = search(item["question"])
        ms.append((time.perf_counter() - clock) * 1000)
        evidence = item["evidence"]
        per_question.append(question_metrics(*evidence_hits(evidence, ranked(nodes)), evidence))
    metrics = aggregate(per_question)
    return {c: round(metrics[c], 3) for c in COLUMNS} | {"p50_ms": round(statistics.median(ms), 2)}


def main() -> None:
    parser = arguments("lexical-index")
    parser.add_argument("--corpora", default="", help="Only these corpora (comma-separated names).")
    args = parser.parse_args()
    results = {}
    for corpus in corpora([c for c in args.corpora.split(",") if c]):
        settings = indexed(corpus)
        qa = answerable(corpus.qa)
        bm25s = BM25Retriever.from_defaults(nodes=all_nodes(settings), similarity_top_k=20)
        fts5 = lexical_index(settings)
        results[corpus.name] = {
            "questions": len(qa), "chunks": fts5.count(),
            "bm25s": measure(bm25s.retrieve, qa), "fts5": measure(lambda q: fts5.search(q, 20), qa),
        }
        print(f"\n{corpus.name}: {len(qa)} questions, {fts5.count()} chunks")
        print(f"{'':8}" + "".join(f"{c:>12}" for c in [*COLUMNS, "p50_ms"]))
        for name in ("bm25s", "fts5"):
            print(f"{name:8}" + "".join(f"{results[corpus.name][name][c]:>12}" for c in [*COLUMNS, "p50_ms"]))
    write_json(args.out, results)


if __name__ == "__main__":
    main()
