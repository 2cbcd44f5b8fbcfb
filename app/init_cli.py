"""`ragqa init DIR --docs PATH`: start a fork for a new document set. The documents are surveyed
(ingestion/survey.py), the fork's config, prompts and folders are written (app/fork.py), and with
--evaluate the documents are ingested, a small QA set is generated from them and a baseline
evaluation printed, so a team sees how well the defaults do before it tunes anything."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.cli_common import ConfigOption, fail, settings_from


BASELINE_ANSWERS = ("n_questions", "answered_when_answerable", "right_when_answerable",
                    "mean_supported_share", "p50_total_ms")


def init(
    directory: Annotated[Path, typer.Argument(help="The fork's folder (created).")],
    docs: Annotated[list[Path], typer.Option("--docs", help="The document folder (or files); repeatable.")],
    sample: Annotated[int, typer.Option(help="Files read by the survey, spread over formats.")] = 20,
    evaluate: Annotated[
        bool, typer.Option("--evaluate", help="Also ingest, generate QA and print a baseline.")
    ] = False,
    questions: Annotated[
        int, typer.Option(help="With --evaluate: chunks the LLM writes questions for.")
    ] = 10,
    answers: Annotated[
        int, typer.Option(help="With --evaluate: generated questions answered end to end.")
    ] = 5,
    force: Annotated[
        bool, typer.Option("--force", help="Write the config again (edited prompts are kept).")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Write a fork's config, prompts and folders, with header fields, PDF strategy and chunk
    size proposed from a survey of its documents."""
    from app.fork import fork_overrides, survey_notes, write_fork
    from rag.settings_toml import render_config
    from ingestion.survey import survey

    template = settings_from(config)  # where the prepared models are
    missing = [str(p) for p in docs if not p.exists()]
    if missing:
        fail(FileNotFoundError(f"no such file or folder: {', '.join(missing)}"), code=2)
    docs = [p.resolve() for p in docs]
    try:
        found = survey(docs, sample, _tokens_per_char(template.embedding_path))
        rendered = render_config(fork_overrides(found, template.models_dir), survey_notes(found, docs))
        path = write_fork(directory, rendered, force)
    except (ValueError, FileExistsError) as error:
        fail(error)
    _print_survey(found)
    typer.echo(f"wrote {path}, {directory / 'prompts'}/, {directory / 'qa'}/")
    if evaluate:
        _baseline(path, docs, questions, answers)
    else:
        typer.echo("next: " + " && ".join(_commands(path, docs)) + "   (or run init again with --evaluate)")


def _tokens_per_char(model: Path):
    """The embedding tokenizer's tokens per character of a text, or None before `ragqa models`."""
    if not (model / "tokenizer.json").is_file():
        return None
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model), model_max_length=10**9)  # counting only: no window
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"]) / max(1, len(text))


def _print_survey(found) -> None:
    formats = ", ".join(f"{n} {k}" for k, n in sorted(found.formats.items()))
    typer.echo(f"surveyed {len(found.sampled)} of {found.files} files ({formats}); "
               f"{found.hangul_files} of the sampled mostly in Korean")
    for field in found.fields:
        typer.echo(f"  field {field.name!r} {field.evidence}")
    if found.filename_pattern:
        typer.echo(f"  filename_pattern {found.filename_pattern}")
    typer.echo(f"  pdf_strategy {found.pdf_strategy}: {found.pdf_reason}")
    typer.echo(f"  chunk_size {found.chunk_size}: {found.chunk_reason}")
    for doc_id, reason in found.failed.items():
        typer.echo(f"  FAILED {doc_id}: {reason}")
    if found.unsupported:
        typer.echo(f"  {len(found.unsupported)} files of unsupported types will be reported as failed, "
                   f"e.g. {found.unsupported[0]}")


def _commands(config: Path, docs: list[Path]) -> list[str]:
    return [f"ragqa ingest --config {config} {' '.join(map(str, docs))}",
            f"ragqa ask --config {config} --json \"a question your documents answer\""]


def _baseline(config: Path, docs: list[Path], questions: int, answers: int) -> None:
    """Ingest, generate `questions` chunks' QA, then evaluate retrieval on all of it and answers
    on the first `answers` questions; prints the figures and the run folders."""
    from evaluation.runner import run_answers, run_retrieval
    from evaluation.runs import Run
    from ingestion.pipeline import ingest
    from rag.settings import load_settings
    from training.qa_generation import QAGenerator, generate_qa

    settings = load_settings(config)
    report = ingest(docs, settings)
    typer.echo(report.summary())
    if not report.chunks and not report.unchanged:
        fail(ValueError("nothing was indexed: see the failed files above"))
    qa = config.parent / "qa" / "generated.jsonl"
    generator = QAGenerator.from_settings(settings)
    counts = generate_qa(settings, qa, generator, limit=questions)
    typer.echo(f"{counts['questions']} questions from {counts['chunks']} chunks -> {qa}")
    if not qa.is_file() or not qa.read_text(encoding="utf-8").strip():
        fail(ValueError("the LLM wrote no usable question: check the [llm] settings"))
    del generator  # the answers run loads its own LLM, with the answer's token budget
    retrieval = run_retrieval(settings, qa, name="baseline-retrieval")
    for stage, figures in Run.open(retrieval).metrics()["stages"].items():
        shown = "  ".join(f"{k} {v:.3f}" for k, v in figures.items() if isinstance(v, float))
        typer.echo(f"  {stage:7s} " + shown)
    typer.echo(str(retrieval))
    if answers:
        run = run_answers(settings, qa, limit=answers, name="baseline-answers")
        figures = Run.open(run).metrics()["answers"]
        typer.echo("  answers " + "  ".join(f"{k} {figures[k]}" for k in BASELINE_ANSWERS))
        typer.echo(str(run))
