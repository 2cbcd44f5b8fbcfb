"""The `ragqa` command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from app.cli_common import (
    Commands,
    ConfigOption,
    PortRange,
    check_port,
    fail,
    say_config,
    settings_from,
    writable_file,
)
from app.eval_cli import eval_app, report
from app.init_cli import init
from app.train_cli import qa_app, train_app

app = typer.Typer(cls=Commands, add_completion=False, no_args_is_help=True,
                  help="Reference-aligned QA over your documents, offline.")
app.add_typer(eval_app, name="eval")
app.add_typer(qa_app, name="qa")
app.add_typer(train_app, name="train")
app.command()(report)
app.command()(init)


@app.command()
def models(config: ConfigOption = None) -> None:
    """Prepare the offline models under the models folder (idempotent)."""
    from rag.model_stamp import ModelPreparationError
    from rag.prepare import prepare_models

    settings = settings_from(config)
    try:
        paths = prepare_models(settings)
    except ModelPreparationError as error:
        fail(error)
    for role, path in paths.items():
        typer.echo(f"{role}: {path}")


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders to add or update.")],
    reset: Annotated[bool, typer.Option("--reset", help="Empty the store first.")] = False,
    prune: Annotated[
        bool, typer.Option("--prune", help="Remove indexed documents not found under PATHS.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Let --prune remove most of the store.")] = False,
    no_refit: Annotated[
        bool, typer.Option("--no-refit", help="Leave the ranker as it is ([rerank] refit).")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Add or update documents and, when the corpus changed enough, refit the ranker on it;
    prints a report. Exit code 1 when any file failed."""
    from ingestion.pipeline import PruneRefusedError
    from ingestion.pipeline import ingest as run_ingest

    from rag.models import ModelNotPreparedError
    from rag.store import StoreBusyError

    settings = settings_from(config)
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        fail(FileNotFoundError(f"no such file or folder: {', '.join(missing)}"), code=2)
    try:
        report = run_ingest(paths, settings, reset=reset, prune=prune, confirm=yes)
    except (ModelNotPreparedError, StoreBusyError, PruneRefusedError) as error:
        fail(error)
    typer.echo(report.summary())
    if not no_refit:
        from training.refit import RankerRefit

        line = RankerRefit.from_settings(settings).after_ingest(settings)
        if line:
            typer.echo(line)
    raise typer.Exit(1 if report.failed else 0)


@app.command()
def remove(
    docs: Annotated[list[str], typer.Argument(help="Document ids as listed by `ragqa documents`.")],
    config: ConfigOption = None,
) -> None:
    """Delete documents from the index (their chunks, and their copy when the UI uploaded them).
    Exit code 1 when an id is not indexed."""
    from ingestion.pipeline import remove as run_remove

    from rag.store import StoreBusyError

    try:
        removed = run_remove(docs, settings_from(config))
    except StoreBusyError as error:
        fail(error)
    for doc in removed:
        typer.echo(f"removed {doc}")
    unknown = [doc for doc in docs if doc not in removed]
    if unknown:
        fail(LookupError(f"not indexed: {', '.join(unknown)} (see `ragqa documents`)"))


@app.command()
def documents(config: ConfigOption = None) -> None:
    """List the indexed documents, tab-separated: id, chunks, when indexed, the file (a tab,
    line break or backslash in an id or file name is written \\t, \\n, \\\\), and its currency
    (effective date, version, status, what supersedes or corrects it; ingestion/currency.py). The
    config in force is named on stderr."""
    from rag.currency import standings
    from ingestion.pipeline import indexed_documents

    settings = settings_from(config)
    say_config(settings)
    rows = indexed_documents(settings)
    currency = standings(rows)
    for row in rows:
        typer.echo(f"{_tsv(row.doc)}\t{row.chunks} chunks\t{row.indexed or '-'}\t{_tsv(row.source)}"
                   f"\t{_tsv(currency[row.doc]) or '-'}")
    if not rows:
        typer.echo("no documents are indexed yet: run `ragqa ingest PATH` first")


def _tsv(field: str) -> str:
    """A TSV field: a tab or line break in an id or path would split its row."""
    return field.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


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

    settings = settings_from(config)
    try:
        if question is not None:
            check_question(question)
        conditions = parse_where(where)
    except ValueError as error:
        fail(error, code=2)
    if collection(settings).count() == 0:
        fail(RuntimeError("no documents are indexed yet: run `ragqa ingest PATH` first"))
    try:
        check_filters(settings, doc, conditions)
        return RagPipeline(settings), conditions
    except FilterError as error:
        fail(error, code=2)
    except ModelNotPreparedError as error:
        fail(error)


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
        fail(error, code=2)
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
    port: Annotated[Optional[int], typer.Option(help="Port (default: ui.port, 7860).", **PortRange)] = None,
    host: Annotated[
        Optional[str], typer.Option(help="Address to bind (default: ui.host, 127.0.0.1).")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Start the UI and the OpenAI-compatible API at /v1 (on 127.0.0.1 unless configured; with a
    login, and an API key, when ui.users or ui.api_keys is set). The config in force is named on
    stderr."""
    from app.ui import launch

    settings = settings_from(config)
    try:
        settings.ui.user_hashes()
        settings.ui.key_hashes()
    except ValueError as error:
        fail(error, code=2)
    host, port = host or settings.ui.host, port or settings.ui.port
    check_port(host, port)
    say_config(settings)
    launch(settings, port=port, host=host)


@app.command("embed-server")
def embed_server(
    port: Annotated[int, typer.Option(help="Port to listen on.", **PortRange)] = 7997,
    host: Annotated[str, typer.Option(help="Address to bind.")] = "127.0.0.1",
    backend: Annotated[
        Optional[str],
        typer.Option(help="torch or onnx (default: embedding.backend; onnx when that is server)."),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Serve the local embedding model over the OpenAI /v1/embeddings protocol, as
    embedding.server.model; clients add the query/passage prefixes."""
    import uvicorn
    from tokenizers import Tokenizer

    from app.embed_server import build_app
    from rag.embeddings import OnnxEmbedding
    from rag.models import ModelNotPreparedError, build_embedding

    settings = settings_from(config)
    check_port(host, port)
    local = backend or (settings.embedding.backend if settings.embedding.backend != "server" else "onnx")
    if local not in ("torch", "onnx"):
        fail(ValueError(f"--backend {local!r}: the server embeds with torch or onnx"), code=2)
    settings.embedding = settings.embedding.model_copy(
        update={"backend": local, "query_prefix": "", "passage_prefix": ""}
    )
    try:
        embedding = build_embedding(settings)
    except ModelNotPreparedError as error:
        fail(error)
    tokenizer = Tokenizer.from_file(str(settings.embedding_path / "tokenizer.json"))
    # Count the tokens the model reads: the embedder truncates to its window.
    tokenizer.enable_truncation(
        embedding.max_tokens if isinstance(embedding, OnnxEmbedding) else embedding.max_length)
    served = build_app(embedding, settings.embedding.server.model,
                       lambda text: len(tokenizer.encode(text).ids))
    uvicorn.run(served, host=host, port=port, log_level="warning")


@app.command("hash-password")
def hash_password_command() -> None:
    """Print a password hash for the ui.users setting (the password, of at least 12 characters,
    is read without echo)."""
    from app.auth import check_new_password, hash_password

    password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    try:
        check_new_password(password)
    except ValueError as error:
        fail(error, code=2)
    typer.echo(hash_password(password))


@app.command("api-key")
def api_key_command(user: Annotated[str, typer.Argument(help="Whose key it is (a ui.users name).")]) -> None:
    """Print a new API key for /v1 (shown once: hand it to its user) and, on stderr, the ui.api_keys
    entry that keeps only its hash."""
    from app.api import key_hash, new_key

    if not user or ":" in user:
        fail(ValueError(f"the user name {user!r} must be non-empty and hold no ':'"), code=2)
    key = new_key()
    typer.echo(key)
    typer.echo(f'add to [ui] api_keys: "{user}:{key_hash(key)}"', err=True)


feedback_app = typer.Typer(no_args_is_help=True, help="Ratings staff gave answers in the UI.")
app.add_typer(feedback_app, name="feedback")


@feedback_app.command("export")
def feedback_export(
    out: Annotated[Path, typer.Argument(help="QA JSON Lines file to write.")],
    rating: Annotated[str, typer.Option(help="up, down or all.")] = "all",
    config: ConfigOption = None,
) -> None:
    """Write the rated questions as QA items (an answer rated up becomes gold) for `ragqa eval`
    and the trainers."""
    from app.feedback import FeedbackLog, export

    if rating not in ("up", "down", "all"):
        fail(ValueError(f"--rating is up, down or all, not {rating!r}"), code=2)
    count = export(FeedbackLog.of(settings_from(config)), writable_file(out, "OUT"), rating)
    typer.echo(f"{count} rated question{'' if count == 1 else 's'} written to {out}")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
