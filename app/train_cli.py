"""`ragqa qa generate|mine` and `ragqa train reranker|retriever`: thin wrappers over training/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from app.cli_common import ConfigOption, fail, settings_from, writable_file

qa_app = typer.Typer(no_args_is_help=True, help="Generate QA pairs from the indexed corpus.")
train_app = typer.Typer(no_args_is_help=True, help="Fine-tune models on generated QA.")


@qa_app.command()
def generate(
    out: Annotated[
        Optional[Path], typer.Option(help="QA file to write (appended; default storage/qa/generated.jsonl).")
    ] = None,
    limit: Annotated[
        Optional[int], typer.Option(min=1, help="At most N chunks, spread evenly over the corpus.")
    ] = None,
    doc: Annotated[
        Optional[list[str]], typer.Option("--doc", help="Only this document (repeatable).")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Ask the LLM for questions each stored chunk answers (resumes an interrupted run)."""
    from training.qa_generation import QAGenerator, generate_qa

    settings = settings_from(config)
    out = writable_file(out or settings.storage_dir / "qa" / "generated.jsonl")
    try:
        counts = generate_qa(settings, out, QAGenerator.from_settings(settings), doc, limit)
    except ValueError as error:
        fail(error)
    typer.echo(
        f"{counts['chunks']} chunks: {counts['questions']} questions written, "
        f"{counts['already_done']} chunks already done, {counts['failed']} without a usable reply"
    )
    typer.echo(str(out))


@qa_app.command()
def mine(
    out: Annotated[
        Optional[Path], typer.Option(help="QA file to write (default storage/qa/mined.jsonl).")
    ] = None,
    per_chunk: Annotated[int, typer.Option(help="Sentence questions per chunk.")] = 2,
    seed: Annotated[int, typer.Option(help="Same store and seed: same questions.")] = 13,
    config: ConfigOption = None,
) -> None:
    """Mine questions from the indexed corpus in seconds, without the LLM (sentence crops and
    section headings, each pointing at its chunk)."""
    from collections import Counter

    from training.mining import mine_questions, write_questions

    settings = settings_from(config)
    out = writable_file(out or settings.storage_dir / "qa" / "mined.jsonl")
    try:
        items = mine_questions(settings, per_chunk, seed)
    except ValueError as error:
        fail(error)
    write_questions(items, out)
    kinds = Counter(item["kind"] for item in items)
    typer.echo(f"{len(items)} questions ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))})")
    typer.echo(str(out))


def _trained(settings, name: str) -> Path:
    """Where a trained model goes by default: the fork's own storage/models, not models_dir,
    which `ragqa init` points at the prepared models every fork shares."""
    return settings.storage_dir / "models" / name


def _questions(paths: list[Path]) -> list[dict]:
    from evaluation.gold import load_qa

    try:
        return [item for path in paths for item in load_qa(path)]
    except ValueError as error:
        fail(error)


def _train(kind: str, qa: list[dict], out: Path | None, recipe, config: Path | None) -> None:
    from training.reranker import train_reranker
    from training.retriever import train_retriever

    settings = settings_from(config)
    out = out or _trained(settings, kind)
    train = train_reranker if kind == "reranker" else train_retriever
    try:
        summary = train(settings, qa, out, recipe)
    except ValueError as error:
        fail(error)
    typer.echo(json.dumps({k: v for k, v in summary.items() if k not in ("recipe", "questions")}, indent=1))
    if kind == "reranker":
        typer.echo(f'to use it: [rerank] method = "cross-encoder" and cross_encoder_path = "{out}"')
    else:
        typer.echo(f'to use it: [embedding] model_path = "{out}", then ragqa models (its ONNX export) '
                   "and ragqa ingest --reset DOCS (new vectors)")
    typer.echo(str(out))


QAFile = Annotated[
    Path,
    typer.Option("--qa", exists=True, dir_okay=False,
                 help="Generated QA (ragqa qa generate) against this store."),
]
OutOption = Annotated[
    Optional[Path], typer.Option(help="Model folder (default storage/models/<reranker|retriever>).")
]
EpochsOption = Annotated[int, typer.Option(help="Passes over the training pairs.")]


@train_app.command()
def reranker(
    qa: Annotated[list[Path], typer.Option(
        "--qa", exists=True, dir_okay=False,
        help="Questions against this store: ragqa qa mine and/or ragqa qa generate (repeatable).")],
    out: Annotated[Optional[Path], typer.Option(help="Where to write (default storage/models/ranker.json, or "
                                                "storage/models/reranker with --cross-encoder).")] = None,
    cross_encoder: Annotated[bool, typer.Option(
        "--cross-encoder", help="Fine-tune a CrossEncoder instead (hours on CPU; lost to the learned ranker, "
        "docs/BENCHMARKS.md).")] = False,
    epochs: Annotated[int, typer.Option(help="--cross-encoder: passes over the training pairs.")] = 2,
    layers: Annotated[int, typer.Option(help="--cross-encoder: encoder layers kept (fewer: faster).")] = 6,
    learning_rate: Annotated[float, typer.Option(help="--cross-encoder: learning rate.")] = 5e-5,
    config: ConfigOption = None,
) -> None:
    """Fit the rerank stage's learned ranker to this corpus (seconds) and print held-out figures
    before and after; set rerank.ranker_file to the file it prints."""
    questions = _questions(qa)
    if cross_encoder:
        from training.pairs import Recipe

        recipe = Recipe(epochs=epochs, layers=layers, learning_rate=learning_rate)
        _train("reranker", questions, out, recipe, config)
        return
    from training.ranker import RankerRecipe, train_ranker

    settings = settings_from(config)
    out = writable_file(out or _trained(settings, "ranker.json"))
    try:
        summary = train_ranker(settings, questions, out, RankerRecipe())
    except ValueError as error:
        fail(error)
    typer.echo(json.dumps(summary["heldout"], indent=1))
    typer.echo(f'to use it: [rerank] ranker_file = "{out}"')
    typer.echo(str(out))


@train_app.command()
def retriever(
    qa: QAFile,
    out: OutOption = None,
    epochs: EpochsOption = 3,
    learning_rate: float = 3e-5,
    config: ConfigOption = None,
) -> None:
    """Fine-tune the embedding model (retrieval and bi-encoder scoring) with a refitted calibration."""
    from training.pairs import Recipe

    _train("retriever", _questions([qa]), out, Recipe(epochs=epochs, learning_rate=learning_rate), config)
