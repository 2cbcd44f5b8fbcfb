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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Protocol

from rag.context import section
from rag.retrieval import lexical_version
from rag.settings import Settings
from rag.store import Store, chunk_ids

STATUSES = ("draft", "provisional", "final", "superseded", "erratum")
METADATA_KEYS = ("effective_date", "version", "status", "supersedes", "corrects", "currency_origin")
VERSIONS = (
    r"\bv(?:er)?\.?\s?(\d+(?:\.\d+)*)\b", r"\bversion\s+(\d+(?:\.\d+)*|[A-Z])\b",
    r"\brev(?:ision)?(?:\.\s*|\s+)(\d+(?:\.\d+)*|[A-Z]\b)", r"개정\s*(\d+)\s*판", r"제\s*(\d+)\s*판",
    r"버전\s*(\d+(?:\.\d+)*)",
)
FILE_VERSION = re.compile(r"(?:^|[-_ .])(?:v|ver|version|rev)[-_ ]?(\d+(?:[._]\d+)*|[a-z])(?=$|[-_ .])",
                           re.IGNORECASE)
MISSED_AT_MOST = 3  # newer documents fetched for one answer: a chain v1 < v2 < v3 and an erratum
_PREVIOUS = re.compile(r"previous|earlier|prior|이전|종전", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+|[가-힣]+")
_DOC_CODE = re.compile(r"\b[A-Z]{1,6}-\d[\w-]*\d")  # "TR-2024-019", "IL-2024-02"
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
    # A document code the name gives ("Technical Report TR-2024-019 Static Load ...") that one other
    # document's file name or title holds names that document, whatever words run on after it.
    for code in _DOC_CODE.findall(name):
        if len(held := [d for d in others if code.lower() in f"{d.doc} {d.title}".lower()]) == 1:
            return held[0]
    version = first_match(VERSIONS, name)
    # A bracket after the title dates or describes the issue named ("(published 15 July 2025)"):
    # its words are in no title.
    words = _words(_unversioned(re.sub(r"\([^)]*\)", " ", lowered))) - _STOP - _words(
        "previous earlier prior version 이전 종전 버전")
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


# ------------------------------------------------------------------ answer time


@dataclass(frozen=True)
class Stored:
    """A document as its chunks' metadata tells it (a Dated)."""

    doc: str
    title: str
    currency: Currency


@dataclass(frozen=True)
class Relations:
    """Which documents supersede or correct which, over the whole store."""

    currency: dict[str, Currency] = field(default_factory=dict)
    superseded: dict[str, Link | None] = field(default_factory=dict)
    corrected: dict[str, list[Link]] = field(default_factory=dict)

    def newer(self, doc: str | None) -> list[str]:
        """The documents that supersede or correct `doc`."""
        link = self.superseded.get(doc or "")
        return ([link.by] if link else []) + [c.by for c in self.corrected.get(doc or "", [])]


def shown_date(iso: str) -> str:
    """2024-09-30 -> 30 Sep 2024; 2024-09 -> Sep 2024."""
    parts = iso.split("-")
    months = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
    month = months[int(parts[1]) - 1] if len(parts) > 1 else ""
    return " ".join(p for p in (parts[2].lstrip("0") if len(parts) > 2 else "", month, parts[0]) if p)


@dataclass
class CurrentFirst:
    """Currency at answer time. Among the ranked candidates, a document's best chunk goes just
    above the first chunk of a document it supersedes or corrects (the older stays, so the answer
    may name it as superseded), fetched when retrieval missed it; `notes` tells the context which
    shown chunk is current. The relation needs every document's fields: read once per store
    version (one chunk a document), so a document removed makes the one it superseded current
    again at the next question."""

    store: Store
    enabled: bool = True
    _read: tuple[int | None, Relations] = (None, Relations())

    @classmethod
    def from_settings(cls, settings: Settings, store: Store) -> CurrentFirst:
        return cls(store, settings.currency.prefer_current)

    def relations(self) -> Relations:
        version = lexical_version(self.store.lexical)
        if not self.enabled or version is None:
            return Relations()
        if self._read[0] != version:
            chunks = chunk_ids(self.store.collection, known=self.store.lexical.chunk_documents())
            first = [min(ids) for ids in chunks.values()]
            got = self.store.collection.get(ids=first, include=["metadatas"]) if first else {"metadatas": []}
            documents = [Stored(str(meta["doc"]), _title(meta), Currency.from_metadata(meta))
                         for meta in got["metadatas"] if meta.get("doc")]
            self._read = (version, Relations({d.doc: d.currency for d in documents},
                                             current_documents(documents), corrections(documents)))
        return self._read[1]

    def newer(self, doc: str | None) -> list[str]:
        """The documents that supersede or correct `doc`."""
        return self.relations().newer(doc)

    def prefer(self, ranked: list[Any], keep: int = 0,
               fetch: Callable[[list[str]], list[Any]] = lambda docs: []) -> list[Any]:
        """`ranked` (NodeWithScore) with each newer document's best chunk moved just above the
        first chunk of the older one it supersedes or corrects. A newer document of the first
        `keep` chunks' that `ranked` lacks is asked of `fetch` (its chunks, best first); so is one
        whose section a kept older chunk is in ranks nowhere ("5. Availability" of v1 kept, v2's
        only as "6. Service credits"): its chunk of that section goes just above the older one."""
        relations = self.relations()
        ranked = list(ranked)
        missed = self.missed(ranked, keep)
        unmatched = self.unmatched(ranked, keep)
        fetched = fetch(list(dict.fromkeys(missed + [newer for _, newer in unmatched]))) \
            if missed or unmatched else []
        best: dict[str, Any] = {}
        for node in fetched:
            best.setdefault(node.node.metadata.get("doc"), node)
        ranked += [best[doc] for doc in missed if doc in best]
        for older in list(ranked[:keep]):  # the newer version's words on the same section, just above
            part = section(older.node.metadata)
            for newer in relations.newer(older.node.metadata.get("doc")) if part else ():
                twin = next((n for n in [*ranked, *fetched] if n.node.metadata.get("doc") == newer
                             and section(n.node.metadata) == part), None)
                if twin is None:
                    continue
                if twin in ranked:
                    if ranked.index(twin) < ranked.index(older):
                        continue
                    ranked.remove(twin)
                ranked.insert(ranked.index(older), twin)
        for _ in range(len(ranked)):  # a chain (v1 < v2 < v3) settles in a few moves
            docs = [n.node.metadata.get("doc") for n in ranked]
            moves = [(docs.index(newer), i) for i, doc in enumerate(docs) if docs.index(doc) == i
                     for newer in relations.newer(doc) if newer in docs and docs.index(newer) > i]
            if not moves:
                break
            newer, older = moves[0]
            ranked.insert(older, ranked.pop(newer))
        return ranked

    def unmatched(self, ranked: Sequence[Any], keep: int) -> list[tuple[Any, str]]:
        """(kept chunk, newer document) for each of the first `keep` chunks whose document a
        ranked document supersedes or corrects, where no ranked chunk of that newer document is
        in the chunk's section: the newer version's own words on it were not retrieved."""
        relations = self.relations()
        docs = [n.node.metadata.get("doc") for n in ranked]
        out = []
        for node in ranked[:keep]:
            part = section(node.node.metadata)
            for newer in relations.newer(node.node.metadata.get("doc")):
                if part and newer in docs and not any(
                        d == newer and section(n.node.metadata) == part for d, n in zip(docs, ranked)):
                    out.append((node, newer))
        return out[:MISSED_AT_MOST]

    def missed(self, ranked: Sequence[Any], keep: int) -> list[str]:
        """The documents superseding or correcting one of the first `keep` chunks' documents, and
        those superseding them in turn, that no chunk of `ranked` is from: retrieval missed them
        (a memo moving a date in other words), and the answer would give the older value as
        current. At most MISSED_AT_MOST, the nearest links first: each costs a retrieval."""
        relations = self.relations()
        seen = {n.node.metadata.get("doc") for n in ranked}
        queue = [n.node.metadata.get("doc") for n in ranked[:keep]]
        missed: list[str] = []
        while queue and len(missed) < MISSED_AT_MOST:
            for newer in relations.newer(queue.pop(0)):
                if newer not in seen:
                    seen.add(newer)
                    missed.append(newer)
                    queue.append(newer)
        return missed[:MISSED_AT_MOST]

    def notes(self, docs: Sequence[str | None]) -> list[str]:
        """For each shown chunk (`docs`: their documents, in citation order) what the context
        says of its currency: "current: final, 30 Sep 2024; supersedes [1]", "superseded by [2]",
        "corrects [1]", "" when no relation concerns it. A document not shown is named."""
        relations = self.relations()
        cited = {}
        for number, doc in enumerate(docs, 1):
            cited.setdefault(doc, number)

        def name(doc: str) -> str:
            return f"[{cited[doc]}]" if doc in cited else doc

        notes = []
        for doc in docs:
            key = doc or ""
            older = [d for d in cited if d and (link := relations.superseded.get(d)) and link.by == doc]
            fixed = [d for d in cited if d and doc in [c.by for c in relations.corrected.get(d, [])]]
            parts = []
            if link := relations.superseded.get(key):
                parts.append(f"superseded by {name(link.by)}")
            elif older:
                c = relations.currency.get(key, Currency())
                date = c.effective_date and shown_date(c.effective_date)
                said = ", ".join(p for p in (c.status, date) if p)
                parts.append(f"current: {said}" if said else "current")
            parts += [f"supersedes {name(d)}" for d in older]
            parts += [f"corrects {name(d)}" for d in fixed]
            parts += [f"corrected by {name(c.by)}" for c in relations.corrected.get(key, [])]
            notes.append("; ".join(parts))
        return notes


def _title(meta: Mapping[str, Any]) -> str:
    return str(next((v for k, v in meta.items() if k.lower() == "title"), ""))
