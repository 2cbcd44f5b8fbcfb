"""Which files to ingest, and the document id of each.

A document id is short (the file's path relative to the folder it was found under) but must be
unique and stable: the same file keeps its id whatever root it is given under next time, and
two different files never share one. The registry (`sources.json` beside the docstore) records
the file behind each id, so:

- a file already indexed keeps its id (`ingest a/` then `ingest a/sub1` finds sub1/notes.md
  under its first id);
- a file whose natural id belongs to another existing file gets a longer one, with as many of
  its parent folders as it takes (`ingest a/sub1 a/sub2` -> notes.md and sub2/notes.md);
- an id whose file is gone passes to the file that now claims it (the file was moved).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from dataclasses import dataclass, field
from pathlib import Path

from rag.files import write_text_atomically


def hidden(path: Path, root: Path) -> bool:
    """A dot-file, or a file inside a dot-folder (.git, .hidden) under the root given."""
    return any(part.startswith(".") for part in path.relative_to(root).parts)


def discover(paths: list[Path]) -> list[tuple[Path, str]]:
    """(file, natural doc id) pairs: the path relative to the folder given, or the file name."""
    found = []
    for path in paths:
        if path.is_dir():
            for file in sorted(p for p in path.rglob("*") if p.is_file() and not hidden(p, path)):
                found.append((file, file.relative_to(path).as_posix()))
        else:
            found.append((path, path.name))
    return found


@dataclass
class SourceRegistry:
    """doc id -> absolute path of the file it was ingested from, and when that file's current
    version was indexed."""

    path: Path
    files: dict[str, str] = field(default_factory=dict)
    indexed: dict[str, str] = field(default_factory=dict)  # doc id -> UTC time, ISO 8601
    _claimed: set[str] = field(default_factory=set)  # ids given out in this run

    @classmethod
    def load(cls, path: Path) -> SourceRegistry:
        if not path.is_file():
            return cls(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, OSError) as error:
            raise RuntimeError(f"the source registry {path} is unreadable ({error}): run `ragqa ingest --reset`") from error
        if set(data) == {"files", "indexed"} and all(isinstance(v, dict) for v in data.values()):
            return cls(path, data["files"], data["indexed"])
        return cls(path, data)  # the first layout: files only

    def stamp(self, doc_id: str) -> None:
        self.indexed[doc_id] = datetime.now(timezone.utc).isoformat(timespec="seconds")

    def assign(self, file: Path, natural: str) -> str:
        """The id of `file`: its recorded one, else `natural`, lengthened until no other file
        that exists (or that this run already placed) holds it."""
        resolved = file.resolve()
        known = next((doc for doc, source in self.files.items() if source == str(resolved)), None)
        if known is not None:
            self._claimed.add(known)
            return known
        parents = resolved.parent.parts[1:]
        natural_parts = natural.split("/")
        candidates = [natural] + [
            "/".join(parents[-extra:] + tuple(natural_parts[-1:]))
            for extra in range(1, len(parents) + 1)
            if len(parents[-extra:]) + 1 > len(natural_parts)
        ]
        doc_id = next((c for c in candidates if not self._taken(c)), str(resolved))
        self.files[doc_id] = str(resolved)
        self._claimed.add(doc_id)
        return doc_id

    def _taken(self, doc_id: str) -> bool:
        owner = self.files.get(doc_id)
        return owner is not None and (doc_id in self._claimed or Path(owner).exists())

    def forget(self, doc_id: str) -> None:
        self.files.pop(doc_id, None)
        self.indexed.pop(doc_id, None)

    def save(self) -> None:
        write_text_atomically(self.path, json.dumps({"files": self.files, "indexed": self.indexed}, ensure_ascii=False, indent=1))
