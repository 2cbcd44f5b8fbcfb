"""The evaluation walkthrough runs top to bottom on the sample corpus."""

from __future__ import annotations

import shutil

import nbformat
import pytest
from nbclient import NotebookClient

from rag.settings import REPO_ROOT


@pytest.mark.slow
def test_evaluation_notebook_runs(base_settings, sample_indexed, tmp_path, monkeypatch):
    # The kernel inherits the environment: a scratch store, the prepared models. The notebook's
    # store starts as a copy of the session's sample store, so its ingest finds every file
    # unchanged instead of embedding the corpus a second time.
    shutil.copytree(sample_indexed.storage_dir, tmp_path / "storage" / "notebook-eval",
                    ignore=shutil.ignore_patterns("reports"))
    monkeypatch.setenv("RAGQA_STORAGE_DIR", str(tmp_path / "storage"))
    monkeypatch.setenv("RAGQA_MODELS_DIR", str(base_settings.models_dir))
    notebook = nbformat.read(REPO_ROOT / "notebooks/evaluation.ipynb", as_version=4)
    NotebookClient(notebook, timeout=900, kernel_name="python3",
                   resources={"metadata": {"path": str(REPO_ROOT)}}).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 3  # stages, by n, threshold curve
    reports = [p for p in (tmp_path / "storage" / "notebook-eval" / "reports").iterdir() if p.is_dir()]
    assert len(reports) == 3 and all((r / "metrics.json").is_file() for r in reports)
