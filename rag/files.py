"""Files and folders written whole or not at all: written beside, then renamed into place, so a
run killed or failed mid-write never leaves a truncated file or half a folder for the next run
to read (the earlier version stays until the new one is complete)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def replaced_file(path: Path) -> Iterator[Path]:
    """A path beside `path` to write to, renamed onto `path` when the block ends without an
    error (on an error `path` is untouched)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    yield partial
    os.replace(partial, path)


def write_text_atomically(path: Path, text: str) -> Path:
    with replaced_file(path) as partial:
        partial.write_text(text, encoding="utf-8")
    return path


@contextmanager
def replaced_folder(target: Path) -> Iterator[Path]:
    """An empty folder beside `target` (a leftover of a killed build is cleared) that replaces
    `target` when the block ends without an error; on an error it is left for the next build to
    clear and `target` is untouched."""
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    yield partial
    shutil.rmtree(target, ignore_errors=True)
    partial.replace(target)
