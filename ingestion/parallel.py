"""Conversion ahead of indexing: files are converted in worker processes while the main
process embeds and writes the ones before them, and handed over in the order given, so the
store, the progress and the bad-file report are those of a serial run."""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
import types
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

from ingestion.convert import convert
from ingestion.document import ConvertedDocument, DocumentLoadError
from rag.settings import IngestSettings

MIN_FILES = 4  # below this, starting a worker (importing Docling) costs more than it saves


CHANGED = "the file changed while it was being read, twice: ingest it again once it is complete"


@dataclass
class Conversion:
    """One file's conversion: the document and the digest of the bytes it was read from, or
    the reason it could not be read."""

    document: ConvertedDocument | None
    reason: str
    seconds: float
    digest: str = ""  # SHA-256 of the file's bytes


def _version(path: Path) -> tuple[int, ...]:
    """What changes when a file is written or replaced."""
    stat = path.stat()
    return stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def convert_one(path: Path, doc_id: str, cfg: IngestSettings) -> Conversion:
    """Convert a file; one replaced or written while it was read (a converter may read it more
    than once, and would mix two versions) is read again, once."""
    clock = time.perf_counter()
    try:
        for _ in range(2):
            before = _version(path)
            digest = _digest(path)
            document = convert(path, doc_id, cfg)
            if _version(path) == before:
                return Conversion(document, "", time.perf_counter() - clock, digest)
        return Conversion(None, CHANGED, time.perf_counter() - clock)
    except DocumentLoadError as error:
        return Conversion(None, str(error), time.perf_counter() - clock)
    except OSError as error:  # gone or unreadable since it was listed
        return Conversion(None, f"cannot be read ({error.strerror or error})", time.perf_counter() - clock)
    except Exception as error:  # a converter bug must not stop the other files
        reason = f"conversion failed ({type(error).__name__}: {error})"
        return Conversion(None, reason, time.perf_counter() - clock)


def _exit_with_parent(parent: int) -> None:
    """A worker whose main process was killed (SIGKILL, out of memory) exits too, instead of
    waiting for work forever with Docling's models in memory."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


@contextmanager
def _without_main_script() -> Iterator[None]:
    """Processes started in this block do not run the caller's main script. A spawned process
    runs it again (as `__mp_main__`) to find what the parent's `__main__` defined, so a script
    that calls `ingest` without an `if __name__ == "__main__"` guard would ingest again inside
    every worker; the workers need nothing from it (their work is `convert_one`)."""
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def worker_count(cfg: IngestSettings, files: int) -> int:
    """Conversion processes for a batch: `ingest.workers`, by default one per core beyond the
    two the embedder's threads keep busy (none on 2 cores, where a worker slows ingestion:
    docs/BENCHMARKS.md, "Conversion workers, end to end"); none for a small batch."""
    wanted = max(0, (os.cpu_count() or 1) - 2) if cfg.workers < 0 else cfg.workers
    return 0 if files < MIN_FILES else min(wanted, files)


def conversions(jobs: Sequence[tuple[Path, str]], cfg: IngestSettings) -> Iterator[Conversion]:
    """Each (file, doc id) converted, in the order given."""
    workers = worker_count(cfg, len(jobs))
    if not workers:
        for path, doc_id in jobs:
            yield convert_one(path, doc_id, cfg)
        return
    # spawn, not fork: the main process holds torch's and ONNX Runtime's threads.
    pool = ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_exit_with_parent,
                               initargs=(os.getpid(),))
    try:
        ahead: deque[Future[Conversion]] = deque()
        for done, (path, doc_id) in enumerate(jobs):
            while len(ahead) < 2 * workers and done + len(ahead) < len(jobs):  # a bounded look-ahead
                with _without_main_script():  # a submit may start a worker
                    ahead.append(pool.submit(convert_one, *jobs[done + len(ahead)], cfg))
            try:
                yield ahead.popleft().result()
            except BrokenProcessPool:
                # A worker died (out of memory, a crash in a native library) on this file or on
                # one converted beside it: this one is reported, the rest get a fresh pool.
                yield Conversion(None, "the conversion process died (out of memory?)", 0.0)
                yield from conversions(jobs[done + 1:], cfg)
                return
    finally:  # also when the caller stops early (an interrupt): drop what was queued
        pool.shutdown(wait=True, cancel_futures=True)
