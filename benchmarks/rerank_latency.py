"""Rerank-stage latency: the learned ranker over hybrid's n candidates, as the pipeline runs it.

    .venv/bin/python benchmarks/rerank_latency.py [--corpus sample] [--out FILE]

For each answerable question of the corpus's QA: hybrid retrieval of n = 10 and 20 chunks, then
the rerank stage timed: the candidates' vectors read from the store, the question's embedding,
exact BM25 scores of the candidates, the features and the linear model. Prints p50/p95 per n and
writes JSON.
"""

from __future__ import annotations

import statistics
import time

from llama_index.core.llms import MockLLM
from llama_index.core.schema import QueryBundle

from common import arguments, write_json
from corpora import corpora, indexed
from evaluation.gold import load_qa
from rag.models import build_embedding
from rag.postprocessors import build_rerank_stage
from rag.retrieval import hybrid_retriever
from rag.store import Store


def main() -> None:
    parser = arguments("rerank-latency")
    parser.add_argument("--corpus", default="sample")
    args = parser.parse_args()
    corpus = corpora([args.corpus])[0]
    settings = indexed(corpus)
    embedding = build_embedding(settings)
    store = Store(settings)
    questions = [q["question"] for q in load_qa(corpus.qa) if q.get("answerable", True)]
    results = {}
    for n in (10, 20):
        retriever = hybrid_retriever(settings, embedding, MockLLM(), similarity_top_k=n)
        times = []
        for question in questions:
            # fresh: the question is embedded when timed
            rerank = build_rerank_stage(settings, store, embedding)
            nodes = retriever.retrieve(question)
            started = time.perf_counter()
            rerank.postprocess_nodes(nodes, query_bundle=QueryBundle(question))
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        results[f"n={n}"] = {"questions": len(times), "p50_ms": round(statistics.median(times), 1),
                             "p95_ms": round(times[int(0.95 * (len(times) - 1))], 1)}
        print(f"{corpus.name}, rerank of {n} candidates: p50 {results[f'n={n}']['p50_ms']} ms, "
              f"p95 {results[f'n={n}']['p95_ms']} ms over {len(times)} questions")
    write_json(args.out, results)


if __name__ == "__main__":
    main()
