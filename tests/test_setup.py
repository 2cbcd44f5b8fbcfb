"""The README's commands bring the Debian packages they need (scripts/debian-packages): as root
they install what is missing, otherwise they stop at once with the one command to run; a test
needing a missing package fails in one line. dpkg and apt are replaced by recorders on PATH: the
script's decisions are under test, not Debian's package manager."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "debian-packages"


@pytest.fixture
def debian(tmp_path):
    """A PATH where `dpkg-query` reports the packages in $MISSING as not installed, `id -u`
    answers $FAKE_UID and `apt-get` only records its arguments in apt.log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "apt.log"
    fakes = {
        "dpkg-query": 'for p in $MISSING; do [ "$p" = "${@: -1}" ] && exit 1; done; '
                      'printf "install ok installed"',
        "id": 'echo "$FAKE_UID"',
        "apt-get": f'echo "$*" >> {log}',
    }
    for name, body in fakes.items():
        (bin_dir / name).write_text(f"#!/usr/bin/env bash\n{body}\n")
        (bin_dir / name).chmod(0o755)

    def run(target: str, missing: str, uid: int, *flags: str) -> subprocess.CompletedProcess:
        env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", MISSING=missing, FAKE_UID=str(uid))
        return subprocess.run(["bash", str(SCRIPT), *flags, target], env=env, capture_output=True, text=True)

    run.log = log
    return run


def test_as_root_the_missing_packages_are_installed(debian):
    done = debian("test", "chromium fonts-nanum", 0)
    assert done.returncode == 0, done.stderr
    assert debian.log.read_text().splitlines() == ["update -q", "install -y -q chromium fonts-nanum"]


def test_otherwise_it_stops_with_the_one_command_to_run(debian):
    done = debian("demo", "tesseract-ocr-kor", 1000)
    assert done.returncode == 1 and not debian.log.exists()
    assert done.stderr.strip().splitlines() == [
        "make demo needs Debian packages: tesseract-ocr-kor. Run as root: apt-get update && "
        "apt-get install -y tesseract-ocr-kor"]


def test_nothing_is_done_when_nothing_is_missing(debian):
    assert debian("test", "", 0).returncode == 0 and not debian.log.exists()
    assert debian("test", "chromium", 0, "--missing").stdout.split() == ["chromium"]


def test_a_test_needing_a_missing_package_fails_at_once_in_one_line(debian, tmp_path):
    """A browser test with no Chromium fails before its server starts (seconds, not minutes)."""
    env = dict(os.environ, PATH=f"{tmp_path / 'bin'}:{os.environ['PATH']}", MISSING="chromium", FAKE_UID="0")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--timeout", "120",
         "tests/test_browser.py::test_question_streams_an_answer_with_references"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 1, done.stdout
    assert ("needs the Debian packages chromium: run `make test` as root, or apt-get install -y chromium"
            in done.stdout), done.stdout
    assert "Traceback" not in done.stdout and "ragqa serve" not in done.stdout
