"""`make clean-storage` clears all of the index (the lexical index included), nothing else."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import fresh_settings

from ingestion.pipeline import ingest
from rag.store import Store

REPO = Path(__file__).resolve().parent.parent


def test_clean_storage_clears_all_of_the_index(base_settings, tmp_path):
    settings = fresh_settings(base_settings, tmp_path / "storage")
    doc = tmp_path / "a.md"
    doc.write_text("# Pumps\n\nThe pump in hall 7 is serviced every 90 days.", encoding="utf-8")
    ingest([doc], settings, progress=False)
    store = Store(settings)
    (store.uploads_dir / "b.md").parent.mkdir(parents=True, exist_ok=True)
    (store.uploads_dir / "b.md").write_text("uploaded", encoding="utf-8")
    kept = settings.storage_dir / "feedback.jsonl"
    kept.write_text("{}\n", encoding="utf-8")
    assert store.lexical_file.is_file() and store.docstore_file.is_file() and store.chroma_dir.is_dir()

    env = dict(os.environ, RAGQA_STORAGE_DIR=str(settings.storage_dir),
               RAGQA_MODELS_DIR=str(settings.models_dir))
    subprocess.run(["make", "-s", "clean-storage"], cwd=REPO, env=env, check=True, capture_output=True)

    assert [path for path in store.clean_paths() if path.exists()] == []
    assert kept.is_file() and settings.models_dir.is_dir()
    assert not Store(settings).lexical.search("pump serviced", 5)  # BM25 finds nothing Chroma lost
