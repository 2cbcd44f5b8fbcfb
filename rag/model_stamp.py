"""What preparing any model shares: the stamp file that vouches for a finished one (so that
`ragqa models` skips it), and the error that names the package to (re)install."""

from __future__ import annotations

import json
from pathlib import Path


class ModelPreparationError(RuntimeError):
    """A model cannot be prepared; the message says which package to (re)install."""


def inventory(target: Path) -> dict[str, int]:
    """Every file of a prepared model with its size: what the stamp vouches for."""
    if target.is_file():
        return {target.name: target.stat().st_size}
    return {
        p.relative_to(target).as_posix(): p.stat().st_size for p in sorted(target.rglob("*")) if p.is_file()
    }


def stamp_ok(target: Path, expected: dict) -> bool:
    """The model was prepared from this source and every file it had is still there, whole."""
    stamp = target.with_name(target.name + ".stamp.json")
    if not target.exists() or not stamp.is_file():
        return False
    recorded = json.loads(stamp.read_text())
    files = recorded.pop("files", None)
    return recorded == expected and files == inventory(target)


def write_stamp(target: Path, expected: dict) -> None:
    stamp = {**expected, "files": inventory(target)}
    target.with_name(target.name + ".stamp.json").write_text(json.dumps(stamp, indent=1))
