"""The Reports tab's reading of evaluation run folders (storage/reports/<time>-<kind>/: report.md,
metrics.json, plots). A run is named by its folder; a name the browser sends is used only if it
is one of the listed folders, so nothing outside the reports folder is ever read."""

from __future__ import annotations

import re
from pathlib import Path

from PIL import Image

from app.render import escape
from rag.settings import Settings

_IMAGE_LINK = re.compile(r"^!\[[^\]]*\]\([^)]*\)\s*$", re.M)


def run_folders(settings: Settings) -> list[str]:
    """Run folders with a report, newest first."""
    root = settings.reports_dir
    if not root.is_dir():
        return []
    return sorted((p.name for p in root.iterdir() if (p / "report.md").is_file()), reverse=True)


def _run(settings: Settings, name: str | None) -> Path | None:
    return settings.reports_dir / name if name and name in run_folders(settings) else None


def show_run(settings: Settings, name: str | None) -> tuple[str, list[tuple[Image.Image, str]]]:
    """(report.md, its plots with their names) of one run. The report's own image links are
    left out: the plots are shown beside it (and are not files the browser may fetch)."""
    path = _run(settings, name)
    if path is None:
        return ("Choose a run." if not name else f"No run named {name!r} under the reports folder."), []
    report = _IMAGE_LINK.sub("", (path / "report.md").read_text(encoding="utf-8"))
    plots = []
    for png in sorted(path.glob("*.png")):
        with Image.open(png) as image:
            plots.append((image.copy(), png.name))
    return report, plots


def compare(settings: Settings, a: str | None, b: str | None) -> tuple[str, list[tuple[Image.Image, str]]]:
    """Two runs side by side (`ragqa report A B`): runs of one kind only. The compare run of the
    pair is written once and shown again while neither run has changed since."""
    from evaluation.runner import compare as compare_runs
    from evaluation.runs import Run, check_comparable

    first, second = _run(settings, a), _run(settings, b)
    if first is None or second is None:
        return "Choose two runs to compare.", []
    try:
        check_comparable(Run(first), Run(second))
    except ValueError as error:
        return f"Cannot compare: {escape(str(error), True)}.", []
    out = _compared(settings, first, second) or compare_runs(settings, first, second)
    return show_run(settings, out.name)


def _compared(settings: Settings, first: Path, second: Path) -> Path | None:
    """The newest compare run of `first` against `second` written after both runs' metrics."""
    from evaluation.runs import Run

    changed = max(((run / "metrics.json").stat().st_mtime for run in (first, second)
                   if (run / "metrics.json").is_file()), default=0.0)
    for name in run_folders(settings):  # newest first
        run = Run(settings.reports_dir / name)
        if not (run.path / "config.json").is_file() or run.kind() != "compare":
            continue
        config = run.config()
        if (Path(config.get("a", "")).name, Path(config.get("b", "")).name) == (first.name, second.name):
            return run.path if (run.path / "report.md").stat().st_mtime >= changed else None
    return None
