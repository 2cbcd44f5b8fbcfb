"""What every `ragqa` command shares: the --config option, loading the settings, and failing
with one line on stderr instead of a traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn, Optional

import typer

import rag  # noqa: F401  (pins offline and telemetry-free behaviour first)
from rag.settings import Settings, load_settings

ConfigOption = Annotated[
    Optional[Path], typer.Option("--config", help="Settings TOML (default: $RAGQA_CONFIG or ./ragqa.toml).")
]


def settings_from(config: Path | None) -> Settings:
    try:
        return load_settings(config)
    except (FileNotFoundError, ValueError) as error:
        fail(error, code=2)


def fail(error: Exception, code: int = 1) -> NoReturn:
    typer.secho(f"error: {error}", fg="red", err=True)
    raise typer.Exit(code) from error
