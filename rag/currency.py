"""Document currency as the answer sees it: the fields read at ingest (`Currency`, in every
chunk's metadata; ingestion/currency.py reads them), and which document is current, a relation
between documents computed at read time from those fields: `current_documents` (a family of
file names equal but for a version part, ordered by version then date; the links documents
state), `corrections`, `standings`. A document arriving or leaving changes no chunk of another.
`CurrentFirst` puts it to work at answer time: the newer of two documents ranked first, and
the context told which is current.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Protocol

STATUSES = ("draft", "provisional", "final", "superseded", "erratum")
METADATA_KEYS = ("effective_date", "version", "status", "supersedes", "corrects", "currency_origin")
VERSIONS = (
    r"\bv(?:er)?\.?\s?(\d+(?:\.\d+)*)\b", r"\bversion\s+(\d+(?:\.\d+)*|[A-Z])\b",
    r"\brev(?:ision)?(?:\.\s*|\s+)(\d+(?:\.\d+)*|[A-Z]\b)", r"개정\s*(\d+)\s*판", r"제\s*(\d+)\s*판",
    r"버전\s*(\d+(?:\.\d+)*)",
)
FILE_VERSION = re.compile(r"(?:^|[-_ .])(?:v|ver|version|rev)[-_ ]?(\d+(?:[._]\d+)*|[a-z])(?=$|[-_ .])",
                           re.IGNORECASE)
_PREVIOUS = re.compile(r"previous|earlier|prior|이전|종전", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+|[가-힣]+")
_STOP = frozenset("a an the of to for and in on by with its this that".split())


@dataclass(frozen=True)
class Currency:
    effective_date: str | None = None  # ISO 8601: YYYY-MM-DD, or YYYY-MM for a month
    version: str | None = None
    status: str | None = None  # one of STATUSES
    supersedes: tuple[str, ...] = ()  # what the document names: a title, a file name, a version
    corrects: tuple[str, ...] = ()
    origin: Mapping[str, str] = field(default_factory=dict)  # field -> where it came from

    def metadata(self) -> dict[str, str]:
        """Flat chunk metadata (Chroma keeps flat, non-null values): lists "; "-joined."""
        values = {"effective_date": self.effective_date, "version": self.version, "status": self.status,
                  "supersedes": "; ".join(self.supersedes), "corrects": "; ".join(self.corrects),
                  "currency_origin": json.dumps(dict(self.origin), ensure_ascii=False) if self.origin else ""}
        return {k: v for k, v in values.items() if v}

    @classmethod
    def from_metadata(cls, meta: Mapping[str, object]) -> Currency:
        def listed(key: str) -> tuple[str, ...]:
            return tuple(p for p in str(meta.get(key) or "").split("; ") if p)

        return cls(meta.get("effective_date") or None, meta.get("version") or None,
                   meta.get("status") or None, listed("supersedes"), listed("corrects"),
                   json.loads(str(meta.get("currency_origin") or "{}")))


def first_match(patterns: Iterable[str], text: str) -> str | None:
    """Group 1 of the first of `patterns` that matches `text` (case-insensitive), else None."""
    for pattern in patterns:
        if match := re.search(pattern, text, re.IGNORECASE):
            return match.group(1)
    return None


class Dated(Protocol):
    """A document as the read-time order sees it (ingestion.pipeline.IndexedDocument is one)."""

    doc: str
    title: str
    currency: Currency


@dataclass(frozen=True)
class Link:
    by: str  # the document that supersedes or corrects
    origin: str  # why, in words
    how: str = "stated"  # or "same family"


def family(doc_id: str) -> str:
    """A file name without its version part and status words: policy-v2.md -> policy.md."""
    path = PurePosixPath(doc_id.lower())
    stem = FILE_VERSION.sub(" ", path.stem)
    stem = re.sub(r"(?<![a-z])(draft|final|provisional)(?![a-z])", " ", stem)
    return "-".join(_WORD.findall(stem)) + path.suffix


def version_key(version: str) -> tuple:
    """A version as comparable parts: 1.10 after 1.9, Rev. B after Rev. A."""
    parts = [(0, int(p), "") if p.isdigit() else (1, 0, p.lower())
             for p in re.findall(r"\d+|[A-Za-z]+", version)]
    while len(parts) > 1 and parts[-1] == (0, 0, ""):  # 2.0 is 2
        parts.pop()
    return tuple(parts)


def _newer(a: Dated, b: Dated) -> str | None:
    """Why `a` is newer than `b` (same family), or None when they are not ordered."""
    va, vb = a.currency.version, b.currency.version
    if va and vb and version_key(va) != version_key(vb):
        newer = version_key(va) > version_key(vb)
        return f"same family: {b.doc} has a lower version ({vb} < {va})" if newer else None
    da, db = a.currency.effective_date, b.currency.effective_date
    if da and db and da > db:
        return f"same family: {b.doc} has an earlier date ({db} < {da})"
    return None


def _resolve(name: str, source: Dated, documents: list[Dated]) -> Dated | None:
    """The one other document `name` names, or None: a file name; else the documents its words
    name (most of them in a title or file name; none but a version: the source's family), narrowed
    by the version it names, or to the next older one for "the previous version"."""
    others = [d for d in documents if d.doc != source.doc]
    lowered = name.lower().strip()
    if hit := [d for d in others if lowered in (d.doc.lower(), PurePosixPath(d.doc.lower()).stem)]:
        return hit[0]
    version = first_match(VERSIONS, name)
    words = _words(_unversioned(lowered)) - _STOP - _words("previous earlier prior version 이전 종전 버전")
    if words:
        scored = [(len(words & _words(f"{d.title} {PurePosixPath(d.doc).stem.replace('-', ' ')}".lower()))
                   / len(words), d) for d in others]
        best = max((score for score, _ in scored), default=0)
        candidates = [d for score, d in scored if score >= 0.6 and score == best]
    else:
        candidates = [d for d in others if family(d.doc) == family(source.doc)]
    if version:
        candidates = [d for d in candidates if version_key(d.currency.version or "") == version_key(version)]
    elif _PREVIOUS.search(name):
        candidates = [d for d in candidates if _newer(source, d)]
        candidates = [d for d in candidates if not any(_newer(o, d) for o in candidates)]
    return candidates[0] if len(candidates) == 1 else None


def _unversioned(text: str) -> str:
    for pattern in VERSIONS:
        text = re.sub(pattern, " ", text, flags=re.IGNORECASE)
    return text


def _words(text: str) -> set[str]:
    """Words, a hyphenated one also joined ("kick-off": kick, off, kickoff)."""
    return set(_WORD.findall(text)) | set(_WORD.findall(re.sub(r"(?<=\w)-(?=\w)", "", text)))


def current_documents(documents: Iterable[Dated]) -> dict[str, Link | None]:
    """Each document -> what supersedes it (None: current): a stated link ("supersedes v1.0"), else
    the next newer member of its family (an erratum or a draft supersedes nothing by family)."""
    documents = list(documents)
    superseded: dict[str, Link | None] = {d.doc: None for d in documents}
    for d in documents:
        for name in d.currency.supersedes:
            if (target := _resolve(name, d, documents)) and superseded[target.doc] is None:
                superseded[target.doc] = Link(d.doc, f"{d.doc} states it supersedes '{name}'")
    ranked = [d for d in documents if d.currency.status not in ("erratum", "draft")]
    for d in documents:
        if superseded[d.doc] is not None:
            continue
        newer = [(o, why) for o in ranked if o.doc != d.doc and family(o.doc) == family(d.doc)
                 and (why := _newer(o, d))]
        # The next newer: one that no other newer document is older than.
        nearest = [(o, why) for o, why in newer if not any(_newer(o, p) for p, _ in newer if p is not o)]
        if len(nearest) == 1:
            superseded[d.doc] = Link(nearest[0][0].doc, nearest[0][1], "same family")
    return superseded


def corrections(documents: Iterable[Dated]) -> dict[str, list[Link]]:
    """Each document -> the documents that state they correct it (an erratum, a postponement)."""
    documents = list(documents)
    corrected: dict[str, list[Link]] = {d.doc: [] for d in documents}
    for d in documents:
        for name in d.currency.corrects:
            if target := _resolve(name, d, documents):
                corrected[target.doc].append(Link(d.doc, f"{d.doc} states it corrects '{name}'"))
    return corrected


def standings(documents: Iterable[Dated]) -> dict[str, str]:
    """Each document -> its currency in a few words, as `ragqa documents` and the Documents tab
    show it: "2024-09-01 · v2.0 · final · superseded by policy-v3.md (same family)"; "" when
    nothing is known."""
    documents = list(documents)
    superseded, corrected = current_documents(documents), corrections(documents)
    shown = {}
    for d in documents:
        c = d.currency
        parts = [p for p in (c.effective_date, c.version and f"v{c.version.lstrip('vV')}", c.status) if p]
        if link := superseded[d.doc]:
            parts.append(f"superseded by {link.by} ({link.how})")
        parts += [f"corrected by {link.by}" for link in corrected[d.doc]]
        shown[d.doc] = " · ".join(parts)
    return shown
