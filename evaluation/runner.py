"""The evaluations end to end, as `ragqa eval ...` and the notebook run them: each one fills a
run folder (evaluation.runs), writes metrics.json and report.md, and returns the folder.

    retrieval   QA file -> metrics by stage (dense, bm25, hybrid, rerank), n and variant
    answers     QA file -> answers (RAG or --no-rag), refusal accuracy; optionally graded by
                the LLM judge (grade_answers) and RAGAS (ragas_answers), resumable per question
    references  reference gold file -> matcher precision/coverage/threshold curve, latency
    pairwise    two answers runs -> win/tie/lose of A against B per judge criterion
    compare     two runs of any kind -> every shared metric side by side
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from evaluation.answers import answer_questions, refusal_metrics
from evaluation.gold import load_qa
from evaluation.judge import Judge, summarise_grades, summarise_pairs
from evaluation.report import compare_runs, write_report
from evaluation.runs import Run, check_comparable
from rag.settings import Settings

UNANSWERABLE = "The documents do not answer this question, so the right answer is a refusal."


def _config(kind: str, **fields: Any) -> dict[str, Any]:
    command = "ragqa " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if "ragqa" in sys.argv[0] else ""
    return {"kind": kind, "command": command} | {k: str(v) if isinstance(v, Path) else v
                                                 for k, v in fields.items()}


def _reference(row: dict[str, Any]) -> str | None:
    """What the judge compares with: the gold answer, or for an unanswerable question the
    statement that a refusal is right."""
    return row["reference"] if row["gold_answerable"] else UNANSWERABLE


def _finish(run: Run, metrics: dict[str, Any]) -> Path:
    run.write_json("metrics.json", metrics)
    write_report(run)
    return run.path


def run_retrieval(
    settings: Settings, qa_file: Path, ns: list[int] | None = None, vary: list[str] | None = None,
    corpus: list[Path] | None = None, name: str = "retrieval", progress: bool = True,
) -> Path:
    from evaluation.retrieval import evaluate_retrieval

    ns = ns or [settings.retrieval.retrieve_k]
    metrics, rows = evaluate_retrieval(settings, load_qa(qa_file), ns, vary, corpus, progress)
    run = Run.start(settings, name, _config("retrieval", qa=qa_file, n=ns, vary=vary or [],
                                            corpus=[str(c) for c in corpus or []]))
    for row in rows:
        run.append(row)
    return _finish(run, metrics)


def run_answers(
    settings: Settings, qa_file: Path, no_rag: bool = False, judge: bool = False, ragas: bool = False,
    limit: int | None = None, resume: Path | None = None, name: str | None = None, pipeline=None,
    progress: bool = True,
) -> Path:
    """Answer the QA file's questions (the first `limit`), then grade them if asked."""
    from rag.pipeline import RagPipeline

    qa = load_qa(qa_file)[:limit]
    run = Run.start(settings, name or ("no-rag" if no_rag else "answers"),
                    _config("answers", qa=qa_file.resolve(), no_rag=no_rag, limit=limit), resume)
    if resume is not None:
        started = run.config()
        # a resume may answer more (--limit)
        _same_options(run, {"--qa": (Path(started.get("qa", "")).resolve(), qa_file.resolve()),
                            "--no-rag": (started.get("no_rag", False), no_rag)})
    pipeline = pipeline or RagPipeline(settings)
    rows = answer_questions(pipeline, qa, run, no_rag=no_rag, progress=progress)
    run.write_json("metrics.json", {"answers": refusal_metrics(rows)})
    # None: build the configured one
    judge_llm = pipeline.llm if settings.evaluation.judge_llm is None else None
    if judge:
        grade_answers(settings, run.path, llm=judge_llm)
    if ragas:
        ragas_answers(settings, run.path, llm=judge_llm, embedding=pipeline.embedding, progress=progress)
    return _finish(run, run.metrics())


def _same_options(run: Run, options: dict[str, tuple[Any, Any]]) -> None:
    """A resumed run appends to its rows and keeps its config.json: refuse options (option:
    (started with, asked for)) other than those it was started with."""
    def shown(value: Any) -> str:
        if isinstance(value, bool):
            return "on" if value else "off"
        return "none" if value is None else str(value)

    differ = [f"{option} {shown(new)} (started with {shown(old)})"
              for option, (old, new) in options.items() if old != new]
    if differ:
        raise ValueError(f"--resume {run.path}: {'; '.join(differ)}: "
                         "resume it with the options it was started with")


def grade_answers(settings: Settings, run_dir: Path, llm=None) -> Path:
    """Single-answer judge grades for an answers run (judge.jsonl), resumable."""
    run = Run.open(run_dir)
    judge = Judge.from_settings(settings, llm)
    done = run.done("judge")
    rows = [r for r in run.results() if r["id"] not in done]

    def grade(row: dict[str, Any]) -> dict[str, Any]:
        return judge.grade(row["question"], _reference(row), row["answer"])

    for row, grades in judge.map(grade, rows, desc="judging"):
        run.append({"id": row["id"], "judge": grades}, "judge")
    return _finish(run, run.metrics() | {"judge": summarise_grades(run.results("judge"))})


def ragas_answers(
    settings: Settings, run_dir: Path, llm=None, embedding=None, metrics: list[str] | None = None,
    progress: bool = True,
) -> Path:
    """RAGAS scores for the answered questions of an answers run (ragas.jsonl; a refusal has
    nothing to score), one question at a time so it resumes. `metrics`: a subset of
    evaluation.ragas_eval's names (default all)."""
    from evaluation.ragas_eval import LLM_METRICS, NON_LLM_METRICS, RagasRow, ragas_scores
    from rag.models import build_embedding, build_llm

    run = Run.open(run_dir)
    metrics = metrics or list(LLM_METRICS + NON_LLM_METRICS)
    needs_llm = any(m in LLM_METRICS for m in metrics)
    llm = llm or (build_llm(settings, settings.evaluation.judge_llm) if needs_llm else None)
    embedding = embedding or build_embedding(settings)
    scored = {r["id"]: r["scores"] for r in run.results("ragas")}
    for row in [r for r in run.results() if r["answered"]]:
        missing = [m for m in metrics if m not in scored.get(row["id"], {})]  # resume, or add metrics
        if not missing:
            continue
        sample = RagasRow(row["question"], row["answer"], row["contexts"], row["reference"],
                          row["retrieved_ids"], row["gold_ids"])
        # Metrics whose inputs a row lacks (no reference, no contexts in a --no-rag run) give None.
        scores = ragas_scores([sample], llm, embedding, missing, timeout_s=int(settings.evaluation.timeout_s),
                              max_workers=settings.evaluation.concurrency, show_progress=progress)[0]
        run.append({"id": row["id"], "scores": scored.get(row["id"], {}) | scores}, "ragas")
    rows = run.results("ragas")
    names = sorted({k for r in rows for k in r["scores"]})
    summary: dict[str, Any] = {}
    for key in names:
        values = [r["scores"][key] for r in rows if r["scores"].get(key) is not None]
        summary[key] = {"mean": round(sum(values) / len(values), 4) if values else None, "n": len(values)}
    return _finish(run, run.metrics() | {"ragas": summary})


def run_references(
    settings: Settings, gold_file: Path, vary: list[str] | None = None, name: str = "references",
    progress: bool = True,
) -> Path:
    """The matcher on a reference gold file, once per setting variant (e.g. support.method=
    learned,llm or support.threshold=0.4,0.5): the first variant's figures on top, every
    variant's under "variants"."""
    from evaluation.references import evaluate_references, load_gold
    from evaluation.retrieval import label, variants, with_overrides
    from rag.models import build_embedding
    from rag.scoring import bi_encoder
    from rag.support import support_scorer

    items = load_gold(gold_file)
    results, rows = {}, []
    combos = variants(vary or [])
    configured = [with_overrides(settings, overrides) for overrides in combos]  # every value checked first
    for overrides, current in zip(combos, configured):
        encoder = None if current.support.method == "llm" else bi_encoder(current, build_embedding(current))
        results[label(overrides)], variant_rows = evaluate_references(
            current, items, support_scorer(current, encoder), progress)
        rows += [row | {"variant": label(overrides)} for row in variant_rows]
    metrics = next(iter(results.values())) | ({"variants": results} if len(results) > 1 else {})
    run = Run.start(settings, name, _config("references", gold=gold_file, vary=vary or []))
    for row in rows:
        run.append(row)
    return _finish(run, metrics)


def run_pairwise(settings: Settings, run_a: Path, run_b: Path, name: str = "pairwise", llm=None) -> Path:
    """A's answers against B's on the questions both answered, judged in both orders."""
    a, b = Run.open(run_a), Run.open(run_b)
    answers_b = {r["id"]: r for r in b.results()}
    pairs = [(r, answers_b[r["id"]]) for r in a.results() if r["id"] in answers_b]
    if not pairs:
        raise ValueError(f"{run_a} and {run_b} share no question")
    judge = Judge.from_settings(settings, llm)
    run = Run.start(settings, name, _config("pairwise", a=a.path, b=b.path))

    def compare(pair: tuple[dict, dict]) -> dict[str, Any]:
        row_a, row_b = pair
        return judge.compare(row_a["question"], _reference(row_a), row_a["answer"], row_b["answer"])

    for (row_a, _), verdict in judge.map(compare, pairs, desc="comparing"):
        run.append({"id": row_a["id"], "pair": verdict})
    metrics = {"a": str(a.path), "b": str(b.path), "a_name": a.path.name, "b_name": b.path.name,
               "pairwise": summarise_pairs(run.results())}
    return _finish(run, metrics)


def compare(settings: Settings, run_a: Path, run_b: Path) -> Path:
    a, b = Run.open(run_a), Run.open(run_b)
    check_comparable(a, b)  # before the compare folder is made: a refused pair leaves none
    run = Run.start(settings, "compare", _config("compare", a=run_a, b=run_b))
    compare_runs(a, b, run)
    return run.path
