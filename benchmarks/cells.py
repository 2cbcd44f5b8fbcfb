"""Table questions answered from cell facts (rag/cells.py), retrieval only (no LLM): per question,
the pipeline's retrieval and rerank, then `CellLookup.answer` on the kept chunks; counted right
(every figure of the gold answer, or its words, in the sentence), wrong, or None (left to the
pipeline), per QA `type` where the set has one. A table question is one whose gold answer is a
cell of the store (or whose type names a table kind).

    RAGQA_STORAGE_DIR=... .venv/bin/python benchmarks/cells.py data/sample/qa.jsonl [--out FILE]

The store must hold the QA set's corpus, indexed with facts (`ragqa ingest`; an index written
before facts existed gets them at its next sync).
"""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from pathlib import Path

from common import arguments, write_json
from llama_index.core.llms import MockLLM
from llama_index.core.schema import QueryBundle

import rag  # noqa: F401
from rag.cells import CellLookup
from rag.models import build_embedding
from rag.postprocessors import build_rerank_stage
from rag.retrieval import hybrid_retriever, sync_lexical
from rag.settings import load_settings
from rag.store import Store
from rag.text import NUMBER, normalised

TABLE_TYPES = {"cell", "blank-cell", "comparison", "json-field", "count"}


def right(text: str, gold: str | None) -> bool:
    """Every figure of the gold answer is in the sentence; without figures, all its words."""
    if gold is None:
        return False
    figures = [f.replace(",", "") for f in NUMBER.findall(gold)]
    if figures:
        return all(f in [n.replace(",", "") for n in NUMBER.findall(text)] for f in figures)
    return normalised(gold) in normalised(text)


def main() -> None:
    parser = arguments("cells", description=__doc__)
    parser.add_argument("qa", type=Path)
    args = parser.parse_args()
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
