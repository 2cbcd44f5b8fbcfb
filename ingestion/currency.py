"""Document currency: when a document took effect, its version, its status, and what it says it
supersedes or corrects, each field with where it came from (`Currency.origin`).

Read at ingest (`currency_of`) from, in order: front matter and header fields, the file name, the
first lines of the first page (a dated line, a version spelling, a `Status:` line, the title's
status words, stated links such as "supersedes v1.0", "erratum to ...", "이전 버전을 대체"). A
field not found is None: nothing is guessed. The fields go into every chunk's metadata, kept out
of the embedded and the LLM's text, so embeddings do not change.

Which document is current is a relation between documents, so it is not stored: `current_documents`
and `corrections` compute it at read time from the stored fields (a family of file names equal
but for a version part, ordered by version then date; the links documents state). A document
arriving or leaving changes no chunk of another.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Protocol

from llama_index.core import Document

from ingestion.document import Block
from rag.settings import CurrencySettings

STATUSES = ("draft", "provisional", "final", "superseded", "erratum")
METADATA_KEYS = ("effective_date", "version", "status", "supersedes", "corrects", "currency_origin")
_STATUS_WORDS = {
    "draft": "draft", "초안": "draft", "provisional": "provisional", "preliminary": "provisional",
    "interim": "provisional", "잠정": "provisional", "final": "final", "확정": "final", "최종": "final",
    "superseded": "superseded", "obsolete": "superseded", "폐지": "superseded", "erratum": "erratum",
    "errata": "erratum", "corrigendum": "erratum", "correction": "erratum", "정정": "erratum",
}
_STATUS = re.compile(r"(?<![\w가-힣])(" + "|".join(_STATUS_WORDS) + r")(?![a-z])", re.IGNORECASE)
_MONTHS = {m[:3]: i for i, m in enumerate(
    "january february march april may june july august september october november december".split(), 1)}
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
# (regex, the order of its year, month, day groups); a day may be absent (a month's date).
_DATES = (
    (re.compile(r"(?<!\d)((?:19|20)\d\d)[-/.](0?[1-9]|1[0-2])(?:[-/.](0?[1-9]|[12]\d|3[01]))?(?!\d)"), "ymd"),
    (re.compile(r"((?:19|20)\d\d)\s*년\s*(\d{1,2})\s*월(?:\s*(\d{1,2})\s*일)?"), "ymd"),
    (re.compile(r"((?:19|20)\d\d)\.\s*(\d{1,2})\.(?:\s*(\d{1,2})\.?)?"), "ymd"),
    (re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+" + _MONTH + r",?\s+((?:19|20)\d\d)\b", re.I), "dmy"),
    (re.compile(r"\b" + _MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+((?:19|20)\d\d)\b", re.I), "mdy"),
    (re.compile(r"\b" + _MONTH + r"\s+((?:19|20)\d\d)\b", re.IGNORECASE), "my"),
)
_FILE_DATE = re.compile(r"(?<!\d)((?:19|20)\d\d)[-_.]?(0[1-9]|1[0-2])(?:[-_.]?(0[1-9]|[12]\d|3[01]))?(?!\d)")
_EFFECTIVE = re.compile(r"effective|valid|in force|as of|applies from|시행|적용|발효|기준일", re.IGNORECASE)
_VERSIONS = (
    r"\bv(?:er)?\.?\s?(\d+(?:\.\d+)*)\b", r"\bversion\s+(\d+(?:\.\d+)*|[A-Z])\b",
    r"\brev(?:ision)?(?:\.\s*|\s+)(\d+(?:\.\d+)*|[A-Z]\b)", r"개정\s*(\d+)\s*판", r"제\s*(\d+)\s*판",
    r"버전\s*(\d+(?:\.\d+)*)",
)
_FILE_VERSION = re.compile(r"(?:^|[-_ .])(?:v|ver|version|rev)[-_ ]?(\d+(?:[._]\d+)*|[a-z])(?=$|[-_ .])",
                           re.IGNORECASE)
# Group 1 is what the document names; a Korean object comes before its verb.
_LINKS = {
    "supersedes": (r"\b(?:supersedes|replaces|takes the place of)\s+(.+?)(?=\.(?!\d)|[;,)\n]|$)",
                   r"(\S[^.\n]*?)\s*[을를]\s*대체"),
    "corrects": (r"\b(?:erratum|errata|corrigendum|correction)\s+(?:to|of|for)\s+(.+?)(?=\.(?!\d)|[;,)\n]|$)",
                 r"\b(?:corrects|amends|postpones|defers)\s+(.+?)(?=\.(?!\d)|[;,)\n]|$)",
                 # A change against an earlier document: "planned in the kick-off meeting, is postponed".
                 r"^(?=.*\b(?:postponed|deferred|moved|revised|rescheduled|updated)\b).*?\b(?:in|from|of|at|by)\s+"
                 r"(the\s+(?:[\w-]+\s+){0,3}?(?:meeting|notes?|memo|minutes|guidance|policy|report|plan|letter))\b",
                 r"(\S[^.\n]*?)\s*(?:에 대한 정정|[을를]\s*(?:정정|연기))"),
}
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


def currency_of(doc_id: str, blocks: Sequence[Block], fields: Mapping[str, object], header: Mapping[str, str],
                cfg: CurrencySettings) -> Currency:
    """The currency of one document: `fields` its front matter or file metadata, `header` its header
    fields, `blocks` what it holds (the first page's or slide's paragraphs are read, tables not: a
    date in a table row is data, not the document's)."""
    found: dict[str, object] = {}
    origin: dict[str, str] = {}

    def put(key: str, value: object, where: str) -> None:
        if value and key not in found:
            found[key], origin[key] = value, where

    for where, values in (("front matter", fields), ("header field", header)):
        named = {str(k).strip().lower(): v for k, v in values.items() if v not in (None, "")}
        for key, names in cfg.fields.items():
            if name := next((n for n in names if n.lower() in named), None):
                value = str(named[name.lower()]).strip()
                parsed = {"effective_date": _date(value), "status": _status(value)}.get(key, value)
                put(key, (value,) if key in _LINKS else parsed, f"{where} {name}")
    stem = PurePosixPath(doc_id).stem
    if match := _FILE_DATE.search(stem):
        put("effective_date", _iso(*match.groups()), "file name")
    if match := _FILE_VERSION.search(stem):
        put("version", match.group(1).replace("_", "."), "file name")
    if status := _status(stem.replace("_", " ").replace("-", " ")):
        put("status", status, "file name")
    # A paragraph is one line, however its file wraps it.
    lines = [" ".join(b.text.lstrip("#").split()) for b in blocks
             if b.kind != "table" and (b.page or b.slide or 1) == 1][: cfg.first_lines]
    for key in _LINKS:
        for number, line in enumerate(lines, 1):
            sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z가-힣])", line)
            names = [n for s in sentences for n in _named(s, (*_LINKS[key], *cfg.patterns.get(key, [])))]
            put(key, tuple(dict.fromkeys(names)), f"first page line {number}")
    for number, line in sorted(enumerate(lines, 1), key=lambda pair: not _EFFECTIVE.search(pair[1])):
        put("effective_date", _date(line), f"first page line {number}")
    for number, line in enumerate(lines, 1):
        # A version a link names ("supersedes v1.0") is another document's.
        own = _unlinked(line, cfg)
        version = _first((*cfg.patterns.get("version", []), *_VERSIONS), own)
        put("version", version, f"first page line {number}")
        if number == 1 or re.match(r"(status|상태)\s*[:：]", line, re.IGNORECASE):
            # The leftmost status word: "Erratum to the final report" is an erratum.
            put("status", _status(line), f"first page line {number}")
    return Currency(found.get("effective_date"), found.get("version"), found.get("status"),
                    tuple(found.get("supersedes", ())), tuple(found.get("corrects", ())), origin)


def apply_currency(document: Document, currency: Currency) -> Document:
    """Put the fields into the document's metadata, out of the embedded and the LLM's text."""
    document.metadata.update(currency.metadata())
    document.excluded_embed_metadata_keys = sorted({*document.excluded_embed_metadata_keys, *METADATA_KEYS})
    document.excluded_llm_metadata_keys = sorted({*document.excluded_llm_metadata_keys, *METADATA_KEYS})
    return document


def _iso(year: str, month: str, day: str | None) -> str:
    return f"{int(year):04d}-{int(month):02d}" + (f"-{int(day):02d}" if day else "")


def _date(text: str) -> str | None:
    """The first date in `text`, ISO; the earliest-placed of all spellings."""
    best: tuple[int, str] | None = None
    for pattern, order in _DATES:
        if match := pattern.search(text):
            parts = dict(zip(order, match.groups()))
            month = parts["m"] if parts["m"].isdigit() else str(_MONTHS[parts["m"][:3].lower()])
            if best is None or match.start() < best[0]:
                best = (match.start(), _iso(parts["y"], month, parts.get("d")))
    return best[1] if best else None


def _status(text: str) -> str | None:
    match = _STATUS.search(text)
    return _STATUS_WORDS[match.group(1).lower()] if match else None


def _first(patterns: Iterable[str], text: str) -> str | None:
    for pattern in patterns:
        if match := re.search(pattern, text, re.IGNORECASE):
            return match.group(1)
    return None


def _named(line: str, patterns: Iterable[str]) -> list[str]:
    names = []
    for pattern in patterns:
        for match in re.finditer(pattern, line, re.IGNORECASE):
            name = match.group(1).strip(" \"'“”‘’`*:")
            if name and len(name) <= 120:
                names.append(name)
    return list(dict.fromkeys(names))


def _unlinked(line: str, cfg: CurrencySettings) -> str:
    for key, patterns in _LINKS.items():
        for pattern in (*patterns, *cfg.patterns.get(key, [])):
            line = re.sub(pattern, " ", line, flags=re.IGNORECASE)
    return line


# ------------------------------------------------------------------ read time: between documents


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
    stem = _FILE_VERSION.sub(" ", path.stem)
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
    version = _first(_VERSIONS, name)
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
    for pattern in _VERSIONS:
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
