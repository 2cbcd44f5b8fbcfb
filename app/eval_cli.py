"""`ragqa eval ...` and `ragqa report`: thin wrappers over evaluation.runner. Each command
prints the run folder's path last (scripts and CI read it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from app.cli_common import ConfigOption, fail, settings_from

eval_app = typer.Typer(no_args_is_help=True,
                       help="Evaluate retrieval, answers, references; reports in storage/reports.")

QAOption = Annotated[
    Path, typer.Option("--qa", exists=True, dir_okay=False, help="QA file (JSON Lines, docs/FORMATS.md).")
]
RunArgument = Annotated[
    Path, typer.Argument(exists=True, file_okay=False, help="A run folder under storage/reports.")
]


def _done(path: Path) -> None:
    typer.echo(f"report: {path / 'report.md'}")
    typer.echo(str(path))


@eval_app.command()
def retrieval(
    qa: QAOption,
    n: Annotated[
        Optional[list[int]],
        typer.Option("--n", help="Chunks retrieved per stage (repeatable; default retrieval.retrieve_k)."),
    ] = None,
    vary: Annotated[
        Optional[list[str]],
        typer.Option("--vary", help="SECTION.KEY=V1,V2: one store per value, e.g. headers.enabled=true,false "
                                    "(repeatable: cross product; needs --corpus)."),
    ] = None,
    corpus: Annotated[
        Optional[list[Path]],
        typer.Option("--corpus", exists=True, help="Ingest this folder into a fresh store per variant "
                                                   "instead of using the configured store."),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """MAP/Success@1,5,10, MRR and evidence metrics per stage: dense, bm25, hybrid, rerank."""
    from evaluation.runner import run_retrieval

    try:
        path = run_retrieval(settings_from(config), qa, n, vary, corpus)
    except ValueError as error:
        fail(error)
    ranker = json.loads((path / "metrics.json").read_text(encoding="utf-8")).get("ranker")
    if ranker:  # which weights rank: the ingest's refit choice or ranker_file (training/refit.py)
        figures = ", ".join(f"{k} {v['map@1']}" for k, v in ranker["heldout"].items())
        typer.echo(f"ranker: {ranker['choice']}, {ranker['source']}"
                   + (f" (held-out S@1 of mined questions: {figures})" if figures else ""))
    _done(path)


@eval_app.command()
def answers(
    qa: QAOption,
    no_rag: Annotated[
        bool, typer.Option("--no-rag", help="The same LLM without documents (the paper's baseline).")
    ] = False,
    judge: Annotated[bool, typer.Option("--judge", help="Grade the answers with the LLM judge.")] = False,
    ragas: Annotated[bool, typer.Option("--ragas", help="Score the answers with RAGAS.")] = False,
    limit: Annotated[Optional[int], typer.Option(min=1, help="Only the first N questions.")] = None,
    resume: Annotated[
        Optional[Path], typer.Option(exists=True, file_okay=False, help="Continue this interrupted run.")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Answer every question; refusal accuracy, and judge grades / RAGAS scores if asked."""
    from evaluation.runner import run_answers

    try:
        _done(run_answers(settings_from(config), qa, no_rag, judge, ragas, limit, resume))
    except (ValueError, FileNotFoundError) as error:
        fail(error)


@eval_app.command("judge")
def judge_command(
    run: Annotated[
        Optional[Path],
        typer.Argument(exists=True, file_okay=False, help="Answers run to grade (1-5 per criterion)."),
    ] = None,
    a: Annotated[
        Optional[Path], typer.Option("--a", exists=True, file_okay=False, help="Answers run A (pairwise).")
    ] = None,
    b: Annotated[
        Optional[Path], typer.Option("--b", exists=True, file_okay=False, help="Answers run B (pairwise).")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Grade one answers run, or compare two (--a RUN --b RUN): win/tie/lose of A, both orders."""
    from evaluation.runner import grade_answers, run_pairwise

    settings = settings_from(config)
    if (run is None) == (a is None or b is None):
        fail(ValueError("give either one answers run, or --a RUN --b RUN"))
    try:
        _done(grade_answers(settings, run) if run is not None else run_pairwise(settings, a, b))
    except ValueError as error:
        fail(error)


@eval_app.command("ragas")
def ragas_command(
    run: RunArgument,
    metric: Annotated[
        Optional[list[str]],
        typer.Option("--metric", help="Only these metrics (repeatable), e.g. faithfulness, rouge."),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """RAGAS metrics (faithfulness, answer_relevancy, context_precision, context_recall,
    factual_correctness, rouge, bleu, chrf, string_similarity, id_context_precision,
    id_context_recall) for an answers run, judged by the local LLM."""
    from evaluation.runner import ragas_answers

    try:
        _done(ragas_answers(settings_from(config), run, metrics=metric))
    except ValueError as error:
        fail(error)


@eval_app.command()
def references(
    gold: Annotated[
        Path, typer.Option("--gold", exists=True, dir_okay=False, help="Reference gold file (JSON Lines).")
    ],
    vary: Annotated[
        Optional[list[str]],
        typer.Option("--vary", help="SECTION.KEY=V1,V2: one run per value, side by side, "
                                    "e.g. support.method=learned,llm (repeatable: cross product)."),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Reference matcher alone: sentence precision, coverage, threshold curve, latency."""
    from evaluation.runner import run_references

    try:
        _done(run_references(settings_from(config), gold, vary))
    except ValueError as error:
        fail(error)


def report(
    run_a: RunArgument,
    run_b: Annotated[
        Optional[Path], typer.Argument(exists=True, file_okay=False, help="Second run: compare A and B.")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Rewrite a run's report.md, or compare two runs side by side."""
    from evaluation.report import write_report
    from evaluation.runner import compare
    from evaluation.runs import Run

    try:
        if run_b is None:
            write_report(Run.open(run_a))
            _done(run_a)
        else:
            _done(compare(settings_from(config), run_a, run_b))
    except ValueError as error:
        fail(error)
