"""Table questions answered from cell facts (rag/cells.py), retrieval only (no LLM): per question,
the pipeline's retrieval and rerank, then `CellLookup.answer` on the kept chunks; counted right
(every figure of the gold answer, or its words, in the sentence), wrong, or None (left to the
pipeline), per QA `type` where the set has one. A table question is one whose gold answer is a
cell of the store (or whose type names a table kind).

    RAGQA_STORAGE_DIR=... .venv/bin/python benchmarks/cells.py data/sample/qa.jsonl [--out FILE]
    .venv/bin/python benchmarks/cells.py --register 5000     (latency over a synthetic register)

The store must hold the QA set's corpus, indexed with facts (`ragqa ingest`; an index written
before facts existed gets them at its next sync).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from common import arguments, write_json
from llama_index.core.llms import MockLLM
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

import rag  # noqa: F401
from rag.cells import CellLookup
from rag.lexical import LexicalIndex
from rag.models import build_embedding
from rag.postprocessors import build_rerank_stage
from rag.retrieval import hybrid_retriever, sync_lexical
from rag.settings import load_settings
from rag.store import Store
from rag.text import NUMBER, normalised

REGISTER_QUESTIONS = ("What is the incurred amount of claim CL-00142?",
                      "How many claims were open at 24 months?",
                      "Which claim has the highest incurred amount?")
TABLE_TYPES = {"cell", "blank-cell", "comparison", "json-field", "count"}


def right(text: str, gold: str | None) -> bool:
    """Every figure of the gold answer is in the sentence; without figures, all its words."""
    if gold is None:
        return False
    figures = [f.replace(",", "") for f in NUMBER.findall(gold)]
    if figures:
        return all(f in [n.replace(",", "") for n in NUMBER.findall(text)] for f in figures)
    return normalised(gold) in normalised(text)


def register_latency(rows: int) -> dict[str, float]:
    """Seconds `CellLookup.answer` takes for a cell, a count and a highest over a synthetic claims
    register of `rows` rows (100 a chunk) in a fresh lexical index."""
    header = "| claim_id | client | status_24m | incurred_eur |\n|---|---|---|---|\n"
    nodes = [TextNode(id_=f"n{start}", metadata={"doc": "register.csv"}, text=header + "\n".join(
        f"| CL-{i:05d} | Client {i % 37} | {'open' if i % 3 else 'closed'} | {1000 + i} |"
        for i in range(start, min(start + 100, rows)))) for start in range(0, rows, 100)]
    with tempfile.TemporaryDirectory() as folder:
        index = LexicalIndex(Path(folder) / "lexical.sqlite")
        index.put("register.csv", "h", nodes)
        lookup, candidates = CellLookup(index), [NodeWithScore(node=nodes[1], score=1.0)]
        timed = {}
        for question in REGISTER_QUESTIONS:
            start = time.perf_counter()
            assert lookup.answer(question, candidates) is not None
            timed[question] = round(time.perf_counter() - start, 3)
            print(f"{timed[question]:6.3f} s  {question}")
        return timed


def main() -> None:
    parser = arguments("cells", description=__doc__)
    parser.add_argument("qa", type=Path, nargs="?")
    parser.add_argument("--register", type=int, metavar="ROWS",
                        help="Time questions over a synthetic register of ROWS rows instead.")
    args = parser.parse_args()
    if args.register:
        write_json(args.out, {"register_rows": args.register, "seconds": register_latency(args.register)})
        return
    settings = load_settings()
    store = Store(settings)
    sync_lexical(store, store.hashes())
    embedding = build_embedding(settings)
    retriever = hybrid_retriever(settings, embedding, MockLLM())  # never called
    reranker = build_rerank_stage(settings, store, embedding)
    lookup = CellLookup.from_settings(settings, store)
    values = {f.value.lower() for f in store.lexical.facts(list(store.hashes()))}
    counts: dict[str, Counter] = defaultdict(Counter)
    rows, seconds = [], []
    for line in args.qa.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        gold = item.get("answer")
        kind = item.get("type") or ("table" if gold and any(v and v in gold.lower() for v in values
                                                           if len(v) > 1) else "other")
        if item.get("type") and item["type"] not in TABLE_TYPES:
            kind = "other:" + item["type"]
        start = time.perf_counter()
        query = QueryBundle(item["question"])
        ranked = reranker.postprocess_nodes(retriever.retrieve(query), query_bundle=query)
        found = lookup.answer(item["question"], ranked)
        seconds.append(time.perf_counter() - start)
        if found is None:
            outcome = "none"
        elif item.get("type") == "blank-cell" or (gold is None and item.get("answerable") is False):
            outcome = "right" if found.kind == "blank" else "wrong"
        else:
            outcome = "right" if right(found.text, gold) else "wrong"
        counts[kind][outcome] += 1
        rows.append({"id": item.get("id"), "type": kind, "question": item["question"], "gold": gold,
                     "outcome": outcome, "kind": found and found.kind, "text": found and found.text})
        print(f"{item.get('id')} {kind:12} {outcome:5} {found.text if found else ''}")
    for kind, counter in sorted(counts.items()):
        print(f"{kind:16} right {counter['right']:3}  wrong {counter['wrong']:3}  none {counter['none']:3}")
    write_json(args.out, {"qa": str(args.qa), "counts": {k: dict(v) for k, v in counts.items()},
                          "seconds_mean": sum(seconds) / max(len(seconds), 1), "questions": rows},
               ensure_ascii=False)


if __name__ == "__main__":
    main()
