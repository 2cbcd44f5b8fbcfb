"""A store on a full disk or a read-only file system: every command ends in one line, not a
traceback, and the store is as it was once the disk has room again (a write the disk refused
half way is cleaned up by the next writer)."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import FIXTURES, free_port, fresh_settings
from store_checks import assert_agree

from ingestion.pipeline import ingest


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


@contextmanager
def tmpfs(folder: Path, size: str) -> Iterator[Path]:
    folder.mkdir(parents=True)
    if os.geteuid() != 0 or not _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)):
        pytest.skip("a full disk is made with a tmpfs mount, which needs root")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`folder` read-only: a read-only bind mount as root (who may write anything), else the
    permissions."""
    if os.geteuid() != 0:
        modes = {path: path.stat().st_mode for path in [folder, *folder.rglob("*")]}
        for path in modes:
            path.chmod(modes[path] & ~0o222)
        try:
            yield
        finally:
            for path, mode in modes.items():
                path.chmod(mode)
        return
    if not (_mount("--bind", str(folder), str(folder)) and _mount("-o", "remount,bind,ro", str(folder))):
        pytest.skip("no bind mount here")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def ragqa(settings, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, RAGQA_STORAGE_DIR=str(settings.storage_dir),
               RAGQA_MODELS_DIR=str(settings.models_dir))
    return subprocess.run([sys.executable, "-m", "app.cli", *args], env=env, capture_output=True, text=True,
                          timeout=600)


def assert_one_line(result: subprocess.CompletedProcess, *words: str) -> None:
    """Exit code 1, no traceback, and one error line naming the store and the reason."""
    assert result.returncode == 1, result.stderr[-3000:]
    assert "Traceback" not in result.stdout + result.stderr
    # progress bars aside
    lines = [line for line in result.stderr.splitlines()
             if line.strip() and not line.startswith(("config:", "ingest:", "chunks:"))]
    assert (len(lines) == 1 and lines[0].startswith("error: ")
            and all(word in lines[0] for word in words)), lines


def big_manual(path: Path, sections: int = 40) -> Path:
    parts = ["# Gearbox manual"]
    words = ["gear", "shaft", "bolt", "torque", "valve", "pump", "seal", "bearing", "spring", "lever"]
    pick = random.Random(7)
    for section in range(sections):
        parts += [f"## Section {section}", " ".join(pick.choice(words) for _ in range(140)) + "."]
    path.write_text("\n\n".join(parts), encoding="utf-8")
    return path


def fill(disk: Path, leave_kb: int = 0) -> Path:
    """Fill the tmpfs, leaving `leave_kb` KiB."""
    filler = disk / "filler"
    filler.unlink(missing_ok=True)
    free = shutil.disk_usage(disk).free
    with filler.open("wb") as out:
        out.truncate(0)
        chunk = b"\0" * 65536
        left = max(free - leave_kb * 1024, 0)
        try:
            while left > 0:
                left -= out.write(chunk[: min(left, len(chunk))])
        except OSError:
            pass
    return filler


@pytest.mark.slow
def test_a_full_disk_ends_every_command_in_one_line(base_settings, tmp_path):
    with tmpfs(tmp_path / "disk", "64m") as disk:
        settings = fresh_settings(base_settings, disk / "storage")
        ingest([FIXTURES / "battery.md", FIXTURES / "cafeteria.md"], settings, progress=False)
        listed = ragqa(settings, "documents").stdout
        new = big_manual(tmp_path / "gearbox.md")

        filler = fill(disk)
        for command in (["documents"], ["ingest", str(new)], ["remove", "battery.md"],
                        ["ask", "What peak cell temperature was reached?"]):
            assert_one_line(ragqa(settings, *command), str(settings.storage_dir), "the disk is full")
        # Room for the store to open, not for the new document: the write fails half way.
        filler.unlink()
        fill(disk, leave_kb=400)
        assert_one_line(ragqa(settings, "ingest", str(new)), "the disk is full")

        filler.unlink()
        assert ragqa(settings, "documents").stdout == listed  # what was indexed is as it was
        again = ragqa(settings, "ingest", str(new))
        assert again.returncode == 0, again.stderr[-3000:]
        assert assert_agree(settings) == {"battery.md", "cafeteria.md", "gearbox.md"}


@pytest.mark.slow
def test_a_read_only_store_ends_every_command_in_one_line(base_settings, tmp_path):
    settings = fresh_settings(base_settings, tmp_path / "storage")
    ingest([FIXTURES / "battery.md", FIXTURES / "cafeteria.md"], settings, progress=False)
    listed = ragqa(settings, "documents").stdout
    with read_only(settings.storage_dir):
        for command in (["documents"], ["ingest", str(FIXTURES / "battery.md")], ["remove", "battery.md"],
                        ["ask", "What peak cell temperature was reached?"],
                        ["ingest", "--reset", str(FIXTURES)],
                        ["serve", "--port", str(free_port())]):
            assert_one_line(ragqa(settings, *command), str(settings.storage_dir), "read-only")
    assert ragqa(settings, "documents").stdout == listed
    assert assert_agree(settings) == {"battery.md", "cafeteria.md"}
