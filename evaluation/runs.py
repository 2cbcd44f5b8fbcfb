"""Run folders: every `ragqa eval ...` writes storage/reports/<timestamp>-<name>/ with
`config.json` (what ran, and the settings it ran with less their secrets: rag/redact.py),
`results.jsonl` (one line per question, appended as it is done, so an interrupted run resumes
where it stopped; grades of an answers run go to judge.jsonl and ragas.jsonl the same way),
`metrics.json` and `report.md` with its plots.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from rag.files import write_text_atomically
from rag.redact import public_settings
from rag.settings import Settings


@dataclass
class Run:
    path: Path

    @classmethod
    def open(cls, path: Path) -> Run:
        """An existing run folder; a folder without a run's config.json is a ValueError."""
        run = cls(Path(path))
        if not (run.path / "config.json").is_file():
            raise ValueError(f"{path} is not a run folder (no config.json): "
                             "give a folder under storage/reports")
        return run

    @classmethod
    def start(cls, settings: Settings, name: str, config: dict[str, Any], resume: Path | None = None) -> Run:
        """A new run folder, or `resume`'s (which must be a run of the same kind)."""
        if resume is not None:
            run = cls.open(resume)
            kind = run.config().get("kind")
            if kind != config.get("kind"):
                raise ValueError(f"{resume} is a {kind!r} run, not {config.get('kind')!r}")
            return run
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        path = settings.reports_dir / f"{stamp}-{name}"
        suffix = 1
        while path.exists():  # two runs in the same second
            suffix += 1
            path = settings.reports_dir / f"{stamp}-{name}-{suffix}"
        path.mkdir(parents=True)
        run = cls(path)
        run.write_json("config.json", config | {"settings": public_settings(settings)})
        return run

    def config(self) -> dict[str, Any]:
        return self.read_json("config.json")

    def kind(self) -> str:
        """retrieval, answers, references, pairwise or compare."""
        return str(self.config().get("kind"))

    def results(self, name: str = "results") -> list[dict[str, Any]]:
        """Per-question rows of `name`.jsonl written so far; a line cut short by a kill is
        ignored, and a question written twice counts once (its last line)."""
        file = self.path / f"{name}.jsonl"
        if not file.is_file():
            return []
        rows: dict[tuple, dict[str, Any]] = {}
        for line in file.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            rows[(row["id"], row.get("variant"), row.get("n"))] = row
        return list(rows.values())

    def done(self, name: str = "results") -> set[str]:
        return {row["id"] for row in self.results(name)}

    def append(self, row: dict[str, Any], name: str = "results") -> None:
        with (self.path / f"{name}.jsonl").open("a", encoding="utf-8") as file:
            file.write(json.dumps(row, ensure_ascii=False) + "\n")
            file.flush()
            os.fsync(file.fileno())

    def write_json(self, name: str, data: Any) -> Path:
        return write_text_atomically(self.path / name, json.dumps(data, ensure_ascii=False, indent=1))

    def read_json(self, name: str) -> Any:
        return json.loads((self.path / name).read_text(encoding="utf-8"))

    def metrics(self) -> dict[str, Any]:
        """metrics.json so far ({} before the first evaluation step finished)."""
        return self.read_json("metrics.json") if (self.path / "metrics.json").is_file() else {}


def check_comparable(a: Run, b: Run) -> None:
    """Only runs of one kind share metrics: a retrieval run beside a references run is an empty
    table. A ValueError in one line otherwise."""
    if a.kind() != b.kind():
        raise ValueError(f"{a.path.name} is a {a.kind()} run and {b.path.name} a {b.kind()} run: "
                         "only runs of the same kind can be compared")
