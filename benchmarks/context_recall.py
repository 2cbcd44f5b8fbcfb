"""Does the evidence reach the prompt? Context recall of the prompt's evidence by token budget and
format, without generating (seconds per corpus instead of an hour of answers).

    .venv/bin/python benchmarks/context_recall.py [--budgets 150,300,600] [--corpora sample,...] [--out FILE]

For each answerable question: retrieve and rerank as `ragqa ask` does, write the context, and
check that it holds the gold evidence (the evidence sentence, whitespace-normalised; a table row's
cells in order on one line). Compared, at each budget:
- `chunks`: the format before rag/context.py: whole chunks with their metadata block, in rank
  order, while they fit (the first cut to the budget if it alone does not);
- `rows` and `markdown`: rag/context.py's selected units, tables as `column: value` rows or
  Markdown rows.
Also prints the mean prompt tokens of each (what the LLM must evaluate before its first word).
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path

from common import arguments, write_json
from corpora import Corpus, answerable, corpora, indexed
from evaluation.metrics import required
from llama_index.core.schema import MetadataMode, QueryBundle
from rag.context import ContextBuilder
from rag.text import cells
from rag.pipeline import RagPipeline
from rag.settings import REPO_ROOT

EXTRA = {  # question sets over the same stores, beside each corpus's own
    "crosslang_en_over_ko": ("debian_faq_ko_html", REPO_ROOT / "benchmarks/data/crosslang_en_over_ko.jsonl"),
    "crosslang_ko_over_en": ("debian_faq_en_html", REPO_ROOT / "benchmarks/data/crosslang_ko_over_en.jsonl"),
}


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"^\s*[-*]\s+", "", text, flags=re.M)).strip().lower()


def holds(context: str, item: dict) -> bool:
    """Every required evidence text is in the context: a sentence as written, a table row as
    its cells in order on one line (in any of the formats)."""
    def found(text: str) -> bool:
        if text.strip().startswith("|"):
            row = re.compile(".*?".join(re.escape(cell) for cell in cells(text)))
            return any(row.search(line) for line in context.splitlines())
        return _norm(text)[:120] in _norm(context)

    evidence = item["evidence"]
    return all(found(evidence[j]["text"]) for j in required(evidence) if evidence[j].get("text"))


def whole_chunks(pipeline: RagPipeline, top, budget: int) -> str:
    blocks, left = [], budget
    for i, node in enumerate(top):
        block = f"[{i + 1}] {node.node.get_content(metadata_mode=MetadataMode.LLM)}"
        cost = pipeline.count_tokens(block)
        if cost > left:
            if not blocks:
                blocks.append(block[: int(len(block) * left / cost)])
            break
        blocks.append(block)
        left -= cost
    return "\n\n".join(blocks)


def measure(pipeline: RagPipeline, qa: list[dict], budgets: list[int]) -> dict:
    fields = list(pipeline.settings.headers.fields)
    builders = {fmt: ContextBuilder(pipeline.encoder, pipeline.count_tokens, fields, fmt,
                                    pipeline.settings.context.rank_weight) for fmt in ("rows", "markdown")}
    hits: dict[str, list[bool]] = {}
    tokens: dict[str, list[int]] = {}
    for item in qa:
        query = QueryBundle(item["question"])
        retrieved = pipeline.current_retriever().retrieve(query)
        top = pipeline.reranker.postprocess_nodes(retrieved, query_bundle=query)
        for budget in budgets:
            contexts = {"chunks": whole_chunks(pipeline, top, budget)}
            contexts |= {fmt: b.build(item["question"], top, budget)[0] for fmt, b in builders.items()}
            for fmt, context in contexts.items():
                hits.setdefault(f"{fmt}@{budget}", []).append(holds(context, item))
                tokens.setdefault(f"{fmt}@{budget}", []).append(pipeline.count_tokens(context))
    return {key: {"recall": round(sum(v) / len(v), 3), "mean_tokens": round(statistics.mean(tokens[key]))}
            for key, v in hits.items()}


def main() -> None:
    parser = arguments("context-recall")
    parser.add_argument("--budgets", default="150,300,600,2000")
    parser.add_argument("--corpora", default="", help="Only these corpora or extra sets (comma-separated).")
    args = parser.parse_args()
    names = [c for c in args.corpora.split(",") if c]
    budgets = [int(b) for b in args.budgets.split(",")]
    sets: list[tuple[str, Corpus, Path]] = [(c.name, c, c.qa) for c in corpora(names or None)]
    for name, (store, qa) in EXTRA.items():
        found = corpora([store])
        if qa.is_file() and found and (not names or name in names):
            sets.append((name, found[0], qa))
    results = {}
    for name, corpus, qa_file in sets:
        pipeline = RagPipeline(indexed(corpus))
        qa = answerable(qa_file)
        results[name] = measure(pipeline, qa, budgets)
        print(f"\n{name}: {len(qa)} questions (recall / mean context tokens)")
        for fmt in ("chunks", "rows", "markdown"):
            measured = (results[name][f"{fmt}@{b}"] for b in budgets)
            print(f"{fmt:10}" + "".join(f"{b:>8}: {m['recall']:.3f} / {m['mean_tokens']:<5}"
                                        for b, m in zip(budgets, measured)))
    write_json(args.out, results)


if __name__ == "__main__":
    main()
