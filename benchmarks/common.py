"""What every benchmark shares: its command line, with `--out` for the JSON file it writes
(by default under storage/reports/), and the writing of that file."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rag.settings import REPO_ROOT

REPORTS = REPO_ROOT / "storage" / "reports"


def arguments(name: str, **parser_options) -> argparse.ArgumentParser:
    """The benchmark's parser, with `--out` (default storage/reports/bench-NAME.json)."""
    parser = argparse.ArgumentParser(**parser_options)
    parser.add_argument("--out", type=Path, default=REPORTS / f"bench-{name}.json",
                        help=f"The JSON file to write (default: storage/reports/bench-{name}.json).")
    return parser


def write_json(path: Path, figures, *, ensure_ascii: bool = True) -> None:
    """Write the figures as indented JSON (the folder made if need be) and print the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(figures, indent=1, ensure_ascii=ensure_ascii), encoding="utf-8")
    print(path)
