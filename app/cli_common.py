"""What every `ragqa` command shares: the --config option, loading the settings, and failing
with one line on stderr instead of a traceback."""

from __future__ import annotations

import errno
import os
import socket
from pathlib import Path
from typing import Annotated, NoReturn, Optional

import typer
from typer.core import TyperGroup

import rag  # noqa: F401  (pins offline and telemetry-free behaviour first)
from rag.settings import Settings, load_settings

ConfigOption = Annotated[
    Optional[Path],
    typer.Option("--config", help="Settings TOML (default: $RAGQA_CONFIG, else ./ragqa.toml, "
                                  "else the shipped one)."),
]
PortRange = {"min": 1, "max": 65535}


class Commands(TyperGroup):
    """The root command group: an embedding server that cannot be reached, which any command
    that embeds may meet, and a store that cannot be read or written (a full disk, a read-only
    folder), which any command may meet, end in one line like the errors each command expects."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except RuntimeError as error:
            from rag.embeddings import EmbeddingServerError
            from rag.store import StoreError

            if isinstance(error, (EmbeddingServerError, StoreError)):
                fail(error)
            raise
        except OSError as error:  # storage/ written beside the store (the UI's temp folder, reports)
            from rag.store import storage_failure

            reason = storage_failure(error)
            if reason is None:
                raise
            fail(OSError(f"cannot write {error.filename or 'to storage'}: "
                         f"{reason} ({error.strerror or error})"))


def settings_from(config: Path | None) -> Settings:
    try:
        return load_settings(config)
    except (FileNotFoundError, ValueError) as error:
        fail(error, code=2)


def say_config(settings: Settings) -> None:
    """Name the config in force on stderr: a fork's folder has its own ragqa.toml."""
    typer.echo(f"config: {settings.config_file}", err=True)


def check_port(host: str, port: int) -> None:
    """Exit with one line when a server could not listen on host:port (the servers' own
    errors are tracebacks, or Gradio's advice about GRADIO_SERVER_PORT)."""
    try:
        family, kind, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers bind
            sock.bind(address)
    except OSError as error:
        reason = ("is in use" if error.errno == errno.EADDRINUSE
                  else f"cannot be used ({error.strerror or error})")
        fail(OSError(f"port {port} on {host} {reason}: choose another with --port"))


def writable_file(out: Path, option: str = "--out") -> Path:
    """`out` as a file this command may write (its folder created), else exit with one line
    before any work is done."""
    if out.is_dir():
        fail(IsADirectoryError(f"{option} {out} is a folder: give a file name"), code=2)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        fail(OSError(f"{option} {out}: its folder cannot be created ({error.strerror})"), code=2)
    if not os.access(out.parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        fail(PermissionError(f"{option} {out} is not writable"), code=2)
    return out


def fail(error: Exception, code: int = 1) -> NoReturn:
    typer.secho(f"error: {error}", fg="red", err=True)
    raise typer.Exit(code) from error
