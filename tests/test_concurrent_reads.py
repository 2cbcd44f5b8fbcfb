"""Questions answered while another process re-ingests the documents they read: every answer
comes back (no Chroma error on a chunk replaced mid-question)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ScriptedLLM, fresh_settings

from ingestion.pipeline import ingest

WRITER = """
import sys
from pathlib import Path
from ingestion.pipeline import ingest
from rag.settings import load_settings

settings = load_settings()
folder, generations = Path(sys.argv[1]), int(sys.argv[2])
for generation in range(1, generations + 1):
    for i in range(20):  # every document changes: its chunks are deleted and written again
        (folder / f"crate-{i}.txt").write_text(
            f"Crate {i} holds {i * 3 + generation} bolts, counted in round {generation}.", encoding="utf-8")
    ingest([folder], settings, prune=True, progress=False)
print("done", flush=True)
"""


@pytest.mark.slow
def test_answers_beside_an_ingest_that_replaces_their_chunks(base_settings, tmp_path):
    from rag.pipeline import RagPipeline

    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(20):
        (folder / f"crate-{i}.txt").write_text(f"Crate {i} holds {i * 3} bolts, counted in round 0.",
                                               encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path / "storage")
    ingest([folder], settings, progress=False)
    pipeline = RagPipeline(settings, llm=ScriptedLLM(replies=["Crate 4 holds bolts."] * 500))
    env = dict(os.environ, RAGQA_STORAGE_DIR=str(settings.storage_dir),
               RAGQA_MODELS_DIR=str(settings.models_dir), PYTHONPATH=str(Path(__file__).parent.parent))
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(folder), "8"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    answers = []
    try:
        while writer.poll() is None:
            answers.append(pipeline.answer("How many bolts does crate 4 hold?"))
    finally:
        out, err = writer.communicate(timeout=600)
    assert writer.returncode == 0 and "done" in out, err[-2000:]
    assert len(answers) >= 5, "too few questions were asked while the ingest ran"
    assert all(answer.sources for answer in answers)  # each was answered from the store as it then was
    final = pipeline.answer("How many bolts does crate 4 hold?")
    assert any("round 8" in source.text for source in final.sources)
