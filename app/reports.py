"""The Reports tab's reading of evaluation run folders (storage/reports/<time>-<kind>/: report.md,
metrics.json, plots). A run is named by its folder; a name the browser sends is used only if it
is one of the listed folders, so nothing outside the reports folder is ever read."""

from __future__ import annotations

import re
from pathlib import Path

from PIL import Image

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
    """Two runs side by side (`ragqa report A B`): a compare run is written and shown."""
    from evaluation.runner import compare as compare_runs

    first, second = _run(settings, a), _run(settings, b)
    if first is None or second is None:
        return "Choose two runs to compare.", []
    out = compare_runs(settings, first, second)
    return show_run(settings, out.name)
