"""The four stores a writer keeps (Chroma, the docstore, the source registry, the lexical index)
agree after any kill, and the next run finishes or repairs what the killed one left: writers
are killed for real (SIGKILL, mid-run), and a store damaged by an earlier version is mended."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest
from conftest import fresh_settings
from store_checks import assert_agree, stores

from ingestion.integrity import BATCH
from ingestion.pipeline import ingest
from rag.retrieval import lexical_index
from rag.store import Store, chunk_ids, collection

STORE_DOCS = 240


def write_notes(folder: Path, count: int, start: int = 0) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(start, start + count):
        (folder / f"note-{i:03d}.txt").write_text(f"Crate {i} holds {i * 3} bolts of grade Q{i}.",
                                                  encoding="utf-8")
    return [f"note-{i:03d}.txt" for i in range(start, start + count)]


def lexical_documents(settings) -> int:
    """Read as another process reads the index while a writer runs."""
    path = settings.storage_dir / "lexical.sqlite"
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)) as db:
        return db.execute("SELECT count(*) FROM documents").fetchone()[0]


def kill_when(command: list[str], settings, ready) -> str:
    """Run `ragqa COMMAND`, SIGKILL it as soon as `ready()`; returns its stderr."""
    env = dict(os.environ, RAGQA_STORAGE_DIR=str(settings.storage_dir),
               RAGQA_MODELS_DIR=str(settings.models_dir))
    err = settings.storage_dir.parent / "stderr.txt"
    with err.open("w") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "app.cli", *command], env=env,
                                   stdout=subprocess.DEVNULL, stderr=stderr)
        deadline = time.monotonic() + 300
        while process.poll() is None and time.monotonic() < deadline and not ready():
            time.sleep(0.005)
        process.send_signal(signal.SIGKILL)
        code = process.wait()
    assert code == -signal.SIGKILL, f"it ended before the kill ({code}): {err.read_text()[-2000:]}"
    return err.read_text()


@pytest.fixture(scope="module")
def built(base_settings, tmp_path_factory):
    """A store of STORE_DOCS one-chunk documents, copied by each test."""
    root = tmp_path_factory.mktemp("integrity")
    settings = fresh_settings(base_settings, root / "storage")
    write_notes(root / "docs", STORE_DOCS)
    assert ingest([root / "docs"], settings, progress=False).indexed == STORE_DOCS
    return root


def copy_of(built: Path, base_settings, tmp_path: Path):
    shutil.copytree(built / "docs", tmp_path / "docs")
    shutil.copytree(built / "storage", tmp_path / "storage")
    # The registry names the files it was given: point it at the copies.
    registry = tmp_path / "storage" / "docstore" / "sources.json"
    registry.write_text(registry.read_text().replace(str(built / "docs"), str(tmp_path / "docs")))
    return fresh_settings(base_settings, tmp_path / "storage"), tmp_path / "docs"


def pending(settings) -> dict:
    path = Store(settings).pending_file
    return json.loads(path.read_text()) if path.exists() else {}


@pytest.mark.slow
def test_killed_remove_is_finished_by_the_next_run(built, base_settings, tmp_path):
    settings, folder = copy_of(built, base_settings, tmp_path)
    doomed = [f"note-{i:03d}.txt" for i in range(0, STORE_DOCS, 2)][:200]
    # Killed once its second batch of removals is under way (the first is gone from Chroma too).
    kill_when(["remove", *doomed], settings, lambda: lexical_documents(settings) < STORE_DOCS - BATCH)
    journal = pending(settings)
    assert sorted(journal["drop"]) == sorted(doomed)
    left = assert_agree(settings, pending=set(doomed)) - set(doomed)  # every one not being removed is intact
    in_chroma = set(chunk_ids(collection(settings)))
    assert len(left) == STORE_DOCS - len(doomed)
    assert 0 < len(set(doomed) - in_chroma) < len(doomed), "the kill did not land mid-run"
    # The next writer (here an ingest of the same folder) finishes the removal, then reads them again.
    report = ingest([folder], settings, progress=False)
    assert (report.indexed, report.unchanged) == (len(doomed), STORE_DOCS - len(doomed))
    assert len(assert_agree(settings)) == STORE_DOCS and not pending(settings)


@pytest.mark.slow
def test_killed_prune_is_finished_by_the_next_run(built, base_settings, tmp_path):
    settings, folder = copy_of(built, base_settings, tmp_path)
    gone = [f"note-{i:03d}.txt" for i in range(200)]
    for name in gone:
        (folder / name).unlink()
    kill_when(["ingest", "--prune", "--yes", str(folder)], settings,
              lambda: lexical_documents(settings) < STORE_DOCS - BATCH)
    assert sorted(pending(settings)["drop"]) == gone
    assert len(assert_agree(settings, pending=set(gone)) - set(gone)) == STORE_DOCS - len(gone)
    assert 0 < len(set(gone) - set(chunk_ids(collection(settings)))) < len(gone), \
        "the kill did not land mid-run"
    report = ingest([folder], settings, progress=False)  # no --prune: the killed one's is finished
    assert report.unchanged == STORE_DOCS - len(gone)
    assert len(assert_agree(settings)) == STORE_DOCS - len(gone) and not pending(settings)


@pytest.mark.slow
def test_killed_reset_leaves_nothing_of_the_old_store(base_settings, tmp_path):
    """`ingest --reset` killed once it indexes the new documents: no old document is found
    through BM25 or Chroma, and the next run completes the new ones."""
    settings = fresh_settings(base_settings, tmp_path / "storage")
    old = write_notes(tmp_path / "old", 5)
    ingest([tmp_path / "old"], settings, progress=False)
    new = write_notes(tmp_path / "new", 40, start=500)
    store = Store(settings)

    def new_ones_indexed() -> bool:
        return store.docstore_file.exists() and len(set(store.hashes()) & set(new)) >= 3

    kill_when(["ingest", "--reset", str(tmp_path / "new")], settings, new_ones_indexed)
    docs = assert_agree(settings, in_flight=1)  # the kill may fall between the docstore and BM25
    assert docs and docs <= set(new) and not set().union(*stores(settings).values()) & set(old)
    found = {n.node.metadata["doc"]
             for n in lexical_index(settings).search("Crate 3 holds 9 bolts of grade Q3", 50)}
    assert found <= set(new)
    report = ingest([tmp_path / "new"], settings, progress=False)
    assert report.indexed + report.unchanged == 40
    assert assert_agree(settings) == set(new)


def test_a_store_that_lost_chunks_is_repaired(base_settings, tmp_path):
    """The damage an earlier version's killed remove left: Chroma lost documents the docstore,
    the registry and the lexical index still claim. The next run, whatever it is given, reads
    them again from their files, and BM25 answers from what Chroma holds."""
    settings = fresh_settings(base_settings, tmp_path / "storage")
    names = write_notes(tmp_path / "docs", 20)
    ingest([tmp_path / "docs"], settings, progress=False)
    lost = names[:7]
    collection(settings).delete(where={"doc": {"$in": lost}})
    report = ingest([tmp_path / "docs" / names[10]], settings, progress=False)
    assert sorted(report.restored) == lost and report.indexed == len(lost)
    assert "restored 7 document(s)" in report.summary()
    assert assert_agree(settings) == set(names)
    hits = lexical_index(settings).search("bolts of grade Q3", 3)
    assert hits[0].node.metadata["doc"] == "note-003.txt"
    assert hits[0].node.node_id in chunk_ids(collection(settings))["note-003.txt"]
