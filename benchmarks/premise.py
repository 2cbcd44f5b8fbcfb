"""The premise check (rag/premise.py) on QA files, without the LLM.

    RAGQA_STORAGE_DIR=storage/base RAGQA_MODELS_DIR=storage/models .venv/bin/python \\
        benchmarks/premise.py data/sample/qa.jsonl benchmarks/data/premise_sample.jsonl
    RAGQA_MODELS_DIR=storage/models .venv/bin/python benchmarks/premise.py --ingest data/dev/docs \\
        data/dev/qa.jsonl

For each question the evidence is what RagPipeline.answer would show the model: retrieve (dense
and BM25, fused), rerank, the retrieval gate, then the context within the budget, for the question
as asked (the pipeline would also retrieve for its translation, which the LLM writes). The check
runs on that context. Reported per file: answerable questions the check refuses (false
refusals, listed), false-premise questions (`type` "false-premise") caught by the check, and
caught by it or the retrieval gate; other unanswerable questions refused likewise. A false
refusal whose gold evidence text the context lacks is marked: retrieval missed, the check did not. `--ingest`
builds the store from a folder into a temporary storage dir first. A premise found absent is
looked for again in a context `--widen` times wider (2 chunks and tokens for 1, once), as the
pipeline's widening should before it refuses: an entity the first context leaves out is often a
retrieval miss, not a false premise.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from common import arguments, write_json
from llama_index.core.schema import MetadataMode, QueryBundle

import rag  # noqa: F401
from rag.pipeline import RagPipeline
from rag.postprocessors import best_ranked
from rag.premise import PremiseCheck
from rag.settings import load_settings
from rag.text import normalised

def verdicts(pipeline: RagPipeline, check: PremiseCheck, rows: list[dict], widen: float) -> list[dict]:
    keep = pipeline.reranker.top_n
    reranker = pipeline.reranker.model_copy(update={"top_n": round(keep * max(widen, 1))})
    out = []
    for row in rows:
        question = row["question"]
        ranked, _ = best_ranked(reranker, pipeline.current_retriever().retrieve(QueryBundle(question)),
                                [question])
        top = ranked[:keep]
        texts = [n.node.get_content(metadata_mode=MetadataMode.EMBED) for n in top]
        gated = not top or max(pipeline.encoder([(question, t) for t in texts])) < \
            pipeline.settings.retrieval.min_score
        budget = pipeline.budget(pipeline.room(question))
        context = "" if gated else pipeline.context.build(question, top, budget)[0]
        started = time.perf_counter()
        verdict = check.check(question, [context]) if context else None
        took = time.perf_counter() - started
        shown = verdict.status if verdict else ""
        if verdict and verdict.status == "absent" and widen > 1:
            # What is absent from the context may be in the next chunks: looked for once more in
            # a context `widen` times wider, as the pipeline's widening would.
            context = pipeline.context.build(question, ranked, round(budget * widen))[0]
            started = time.perf_counter()
            verdict = check.check(question, [context])
            took += time.perf_counter() - started
        status, message = (verdict.status, verdict.message) if verdict else ("", "")
        golds = [normalised(e["text"]) for e in row.get("evidence") or [] if e.get("text")]
        out.append({"id": row.get("id"), "type": row.get("type", ""), "question": question,
                    "answerable": row["answerable"], "retrieval_refused": gated,
                    "premise_refused": bool(verdict and not verdict.holds),
                    "status": status, "message": message, "status_unwidened": shown,
                    "gold_shown": any(gold in normalised(context) for gold in golds) if golds else None,
                    "check_ms": round(took * 1000, 2)})
    return out


def summary(runs: list[dict]) -> dict:
    def share(rows: list[dict], key: str) -> str:
        return f"{sum(bool(r[key]) for r in rows)}/{len(rows)}"

    answerable = [r for r in runs if r["answerable"]]
    premises = [r for r in runs if not r["answerable"] and r["type"] == "false-premise"]
    others = [r for r in runs if not r["answerable"] and r["type"] != "false-premise"]
    for r in runs:
        r["refused"] = r["retrieval_refused"] or r["premise_refused"]
    return {
        "answerable_refused_by_premise": share(answerable, "premise_refused"),
        "false_refusals": [f"{r['id']}: {r['question']} -> {r['message']}"
                           + ("" if r["gold_shown"] else " (gold evidence not in the context)")
                           for r in answerable if r["premise_refused"]],
        "false_premise_caught_by_premise": share(premises, "premise_refused"),
        "false_premise_refused": share(premises, "refused"),
        "missed": [f"{r['id']}: {r['question']}" for r in premises if not r["refused"]],
        "unanswerable_refused_by_premise": share(others, "premise_refused"),
        "unanswerable_refused": share(others, "refused"),
        "answerable_absent_unwidened": f"{sum(r['status_unwidened'] == 'absent' for r in answerable)}"
                                       f"/{len(answerable)}",
        "check_ms_max": max((r["check_ms"] for r in runs), default=0.0),
    }


def main() -> None:
    parser = arguments("premise")
    parser.add_argument("qa", nargs="+", type=Path, help="QA files (JSONL, docs/FORMATS.md).")
    parser.add_argument("--ingest", type=Path, help="Ingest this folder into a temporary store first.")
    parser.add_argument("--widen", type=float, default=2.0,
                        help="An absent premise is looked for again in a context this many times wider "
                             "(chunks and tokens); 1: not widened.")
    args = parser.parse_args()
    settings = load_settings()
    if args.ingest:
        from ingestion.pipeline import ingest

        settings.storage_dir = Path(tempfile.mkdtemp(prefix="ragqa-premise-"))
        ingest([args.ingest], settings, progress=False)
    pipeline = RagPipeline(settings)  # the model is loaded for its tokenizer (the budget); it writes nothing
    check = PremiseCheck.from_settings(settings)
    figures = {}
    for path in args.qa:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        runs = verdicts(pipeline, check, rows, args.widen)
        figures[str(path)] = {"summary": summary(runs), "runs": runs}
        print(path, json.dumps(figures[str(path)]["summary"], indent=1, ensure_ascii=False))
    write_json(args.out, figures, ensure_ascii=False)


if __name__ == "__main__":
    main()
