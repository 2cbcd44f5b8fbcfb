"""The source registry (`sources.json` beside the docstore): which file each document id was read
from, when its current version was indexed, and the digest of its bytes (ingestion/sources.py
says how ids are given out)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from rag.files import write_text_atomically


def located(file: Path) -> str:
    """The path recorded for a file: its folder resolved, its own name kept (a symbolic link is
    recorded as itself, not as its target)."""
    return str(file.absolute().parent.resolve() / file.name)


@dataclass
class SourceRegistry:
    """doc id -> absolute path of the file it was ingested from, when that file's current
    version was indexed, and the digest of its bytes."""

    path: Path
    files: dict[str, str] = field(default_factory=dict)
    indexed: dict[str, str] = field(default_factory=dict)  # doc id -> UTC time, ISO 8601
    digests: dict[str, str] = field(default_factory=dict)  # doc id -> SHA-256 of the file indexed
    _claimed: set[str] = field(default_factory=set)  # ids given out in this run

    @classmethod
    def load(cls, path: Path) -> SourceRegistry:
        if not path.is_file():
            return cls(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, OSError) as error:
            raise RuntimeError(f"the source registry {path} is unreadable ({error}): "
                               "run `ragqa ingest --reset`") from error
        if {"files", "indexed"} <= set(data) and all(isinstance(v, dict) for v in data.values()):
            return cls(path, data["files"], data["indexed"], data.get("digests", {}))
        return cls(path, data)  # the first layout: files only

    def stamp(self, doc_id: str) -> None:
        self.indexed[doc_id] = datetime.now(timezone.utc).isoformat(timespec="seconds")

    def assign(self, file: Path, natural: str) -> str:
        """The id of `file`: its recorded one, else `natural`, lengthened until no other file
        that exists (or that this run already placed) holds it."""
        resolved = Path(located(file))
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
        self.unstamp(doc_id)

    def unstamp(self, doc_id: str) -> None:
        """The id stays the file's; only the record of its indexed version goes."""
        self.indexed.pop(doc_id, None)
        self.digests.pop(doc_id, None)

    def save(self) -> None:
        records = {"files": self.files, "indexed": self.indexed, "digests": self.digests}
        write_text_atomically(self.path, json.dumps(records, ensure_ascii=False, indent=1))
