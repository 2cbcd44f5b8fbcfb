"""Which files to ingest, and the document id of each.

A document id is short (the file's path relative to the folder it was found under) but must be
unique and stable: the same file keeps its id whatever root it is given under next time, and
two different files never share one. The registry (rag/registry.py, `sources.json` beside the
docstore) records the file behind each id, so:

- a file already indexed keeps its id (`ingest a/` then `ingest a/sub1` finds sub1/notes.md
  under its first id);
- a file whose natural id belongs to another existing file gets a longer one, with as many of
  its parent folders as it takes (`ingest a/sub1 a/sub2` -> notes.md and sub2/notes.md);
- an id whose file is gone passes to the file that now claims it (the file was moved);
- a symbolic link is a file of its own name (its id is not its target's).

It also records each indexed file's content digest, so that one file under two names is
indexed once (ingestion/pipeline.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


def hidden(path: Path, root: Path) -> bool:
    """A dot-file, or a file inside a dot-folder (.git, .hidden) under the root given."""
    return any(part.startswith(".") for part in path.relative_to(root).parts)


@dataclass
class Found:
    files: list[tuple[Path, str]]  # (file, natural doc id)
    broken: list[Path]  # symbolic links whose target does not exist (or that loop)


def walk(paths: list[Path]) -> Found:
    """The files under `paths` with their natural doc ids (the path relative to the folder
    given, or the file name), and the broken symbolic links among them."""
    found = Found([], [])
    for path in paths:
        if not path.is_dir():
            found.files.append((path, path.name))
            continue
        for entry in sorted(p for p in path.rglob("*") if not hidden(p, path)):
            if entry.is_file():
                found.files.append((entry, entry.relative_to(path).as_posix()))
            elif entry.is_symlink() and not entry.exists():
                found.broken.append(entry)
    return found


def discover(paths: list[Path]) -> list[tuple[Path, str]]:
    """(file, natural doc id) pairs: the path relative to the folder given, or the file name."""
    return walk(paths).files


def broken_link(link: Path) -> str:
    """Why a broken symbolic link cannot be ingested, in words."""
    return f"a broken symbolic link: its target {os.readlink(link)} does not exist"
