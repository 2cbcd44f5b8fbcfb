"""The `ragqa` command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, NoReturn, Optional

import typer

import rag  # noqa: F401  (pins offline and telemetry-free behaviour first)
from rag.settings import Settings, load_settings

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Reference-aligned QA over your documents, offline.")

ConfigOption = Annotated[
    Optional[Path], typer.Option("--config", help="Settings TOML (default: $RAGQA_CONFIG or ./ragqa.toml).")
]


def _settings(config: Path | None) -> Settings:
    try:
        return load_settings(config)
    except (FileNotFoundError, ValueError) as error:
        _fail(error, code=2)


def _fail(error: Exception, code: int = 1) -> NoReturn:
    typer.secho(f"error: {error}", fg="red", err=True)
    raise typer.Exit(code) from error


@app.command()
def models(config: ConfigOption = None) -> None:
    """Prepare the offline models under the models folder (idempotent)."""
    from rag.prepare import ModelPreparationError, prepare_models

    settings = _settings(config)
    try:
        paths = prepare_models(settings)
    except ModelPreparationError as error:
        _fail(error)
    for role, path in paths.items():
        typer.echo(f"{role}: {path}")


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders to add or update.")],
    reset: Annotated[bool, typer.Option("--reset", help="Empty the store first.")] = False,
    prune: Annotated[
        bool, typer.Option("--prune", help="Remove indexed documents not found under PATHS.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Add or update documents; prints a report. Exit code 1 when any file failed."""
    from ingestion.pipeline import ingest as run_ingest

    from rag.models import ModelNotPreparedError
    from rag.store import StoreBusyError

    settings = _settings(config)
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        _fail(FileNotFoundError(f"no such file or folder: {', '.join(missing)}"), code=2)
    try:
        report = run_ingest(paths, settings, reset=reset, prune=prune)
    except (ModelNotPreparedError, StoreBusyError) as error:
        _fail(error)
    typer.echo(report.summary())
    raise typer.Exit(1 if report.failed else 0)


DocOption = Annotated[
    Optional[list[str]], typer.Option("--doc", help="Answer only from this document (repeatable).")
]
WhereOption = Annotated[
    Optional[list[str]],
    typer.Option("--where", help="Only documents whose header FIELD equals VALUE: FIELD=VALUE (repeatable)."),
]


def _pipeline(config: Path | None, doc: list[str], where: list[str], question: str | None = None):
    """(pipeline, header conditions) after the checks that need no model: question, filters,
    an indexed store; each failure exits with its reason."""
    from rag.models import ModelNotPreparedError
    from rag.pipeline import RagPipeline, check_question
    from rag.retrieval import FilterError, check_filters, parse_where
    from rag.store import collection

    settings = _settings(config)
    try:
        if question is not None:
            check_question(question)
        conditions = parse_where(where)
    except ValueError as error:
        _fail(error, code=2)
    if collection(settings).count() == 0:
        _fail(RuntimeError("no documents are indexed yet: run `ragqa ingest PATH` first"))
    try:
        check_filters(settings, doc, conditions)
        return RagPipeline(settings), conditions
    except FilterError as error:
        _fail(error, code=2)
    except ModelNotPreparedError as error:
        _fail(error)


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the Answer object as JSON.")] = False,
    doc: DocOption = None,
    where: WhereOption = None,
    config: ConfigOption = None,
) -> None:
    """Answer a question from the indexed documents, with references."""
    from rag.pipeline import QuestionError

    pipeline, conditions = _pipeline(config, doc or [], where or [], question)
    try:
        answer = pipeline.answer(question, docs=doc or [], where=conditions)
    except QuestionError as error:
        _fail(error, code=2)
    if as_json:
        json.dump(answer.to_dict(), sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
        return
    from app.render import render_answer

    typer.echo(render_answer(answer.to_dict()))


@app.command()
def chat(doc: DocOption = None, where: WhereOption = None, config: ConfigOption = None) -> None:
    """A conversation in the terminal, one question per line: a follow-up ("and the passenger?")
    is rewritten with the earlier turns into a question that stands alone, shown before its
    answer. An empty line or end of input ends it."""
    from app.render import render_answer
    from rag.pipeline import QuestionError

    pipeline, conditions = _pipeline(config, doc or [], where or [])
    history: list[tuple[str, str]] = []
    while True:
        if sys.stdin.isatty():
            typer.echo("> ", nl=False)
        line = sys.stdin.readline()
        if not line.strip():
            return
        try:
            answer = pipeline.answer(line.strip(), docs=doc or [], where=conditions, history=history)
        except QuestionError as error:
            typer.echo(f"error: {error}", err=True)
            continue
        typer.echo(render_answer(answer.to_dict()) + "\n")
        history.append((answer.standalone_question or answer.question, answer.answer))


@app.command()
def serve(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 7860,
    config: ConfigOption = None,
) -> None:
    """Start the chat UI on localhost."""
    from app.ui import launch

    launch(_settings(config), port=port)


from app import eval_cli, train_cli  # noqa: E402, F401  (register `eval`, `report`, `qa`, `train`)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
