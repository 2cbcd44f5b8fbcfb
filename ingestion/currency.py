"""Document currency: when a document took effect, its version, its status, and what it says it
supersedes or corrects, each field with where it came from (`Currency.origin`).

Read at ingest (`currency_of`) from, in order: front matter and header fields, the file name, the
first lines of the first page (a dated line, a version spelling, a `Status:` line, the title's
status words, stated links such as "supersedes v1.0", "erratum to ...", "이전 버전을 대체"). A
field not found is None: nothing is guessed. The fields go into every chunk's metadata, kept out
of the embedded and the LLM's text, so embeddings do not change.

Which document is current is a relation between documents, so it is not stored: rag/currency.py
computes it at read time from the stored fields.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath

from llama_index.core import Document

from ingestion.document import Block
from rag.currency import FILE_VERSION, METADATA_KEYS, VERSIONS, Currency, first_match
from rag.settings import CurrencySettings

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
    # not inside a code: "IA-2024-07" names a report, it is no July 2024
    (re.compile(r"(?<!\w-)(?<!\d)((?:19|20)\d\d)[-/.](0?[1-9]|1[0-2])(?:[-/.](0?[1-9]|[12]\d|3[01]))?(?!\d)"),
     "ymd"),
    (re.compile(r"((?:19|20)\d\d)\s*년\s*(\d{1,2})\s*월(?:\s*(\d{1,2})\s*일)?"), "ymd"),
    (re.compile(r"((?:19|20)\d\d)\.\s*(\d{1,2})\.(?:\s*(\d{1,2})\.?)?"), "ymd"),
    (re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+" + _MONTH + r",?\s+((?:19|20)\d\d)\b", re.I), "dmy"),
    (re.compile(r"\b" + _MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+((?:19|20)\d\d)\b", re.I), "mdy"),
    (re.compile(r"\b" + _MONTH + r"\s+((?:19|20)\d\d)\b", re.IGNORECASE), "my"),
)
_FILE_DATE = re.compile(r"(?<!\d)((?:19|20)\d\d)[-_.]?(0[1-9]|1[0-2])(?:[-_.]?(0[1-9]|[12]\d|3[01]))?(?!\d)")
# A file name's "IL-2024-02" is a report's code, no February 2024 ("memo-2025-02-24" is a date).
_CODE_PREFIX = re.compile(r"(?:^|[^A-Za-z])[A-Z]{1,5}-$")
# A name run on past its code ("REPORT IL-2024-02 Inter-laboratory comparison: assay and ..."): the
# code names the document.
_NAMED_CODE = re.compile(r"^.{0,40}?\b[A-Z]{1,6}-\d[\w-]*")
_EFFECTIVE = re.compile(r"effective|valid|in force|as of|applies from|시행|적용|발효|기준일", re.IGNORECASE)
# An erratum's header field naming the corrected document, up to the next field ("Erratum no.: ").
_ERRATUM_OF = re.compile(r"(?:^|\s)(?i:report|document|publication)\s*:\s*(.+?)\s*"
                         r"(?=\b[A-Z][\w-]*(?:\s[\w-]+){0,2}\.?:\s|$)")
# A header field's label, up to three words of letters: "Issued by:" ends "Annual Service Report
# 2023" (a figure is no label's word)
_FIELD_LABEL = r"[A-Z][\w-]*(?:\s[A-Za-z][\w-]*){0,2}"
_TITLE_WORDS = 12  # a longer line is a sentence, not a title or a field
# Group 1 is what the document names; a Korean object comes before its verb.
_LINKS = {
    "supersedes": (r"\b(?:supersedes|replaces|takes the place of)\s+(.+?)(?=\.(?!\d)|[;,)\n]|$)",
                   r"(\S[^.\n]*?)\s*[을를]\s*대체"),
    "corrects": (r"\b(?:erratum|errata|corrigendum|correction)\s+(?:to|of|for)\s+(.+?)(?=\.(?!\d)|[;,)\n]|$)",
                 # "Erratum: Audit Report X"; "HARROWMERE WATER GROUP ERRATUM - Annual Report 2024 (published
                 # 28 February 2025) Issued: 19 March 2025": up to the next field, its bracket with it
                 # "CORVALE ELECTRONICS LTD - GROUP QUALITY ERRATUM: ..." (a department after a dash)
                 r"^\W*(?-i:(?:[A-Z][A-Z&'.-]+|&)\s+(?:[–—-]\s+)?){0,6}(?:erratum|errata|corrigendum)\s*[:–—-]\s*(.+?)\s*"
                 r"(?:\([^)]*\)\s*)?(?=(?-i:" + _FIELD_LABEL + r"):\s|$)",
                 # a header field: "Document corrected: Q3 Trading Report (issued 18 October 2024)"
                 r"^\W*(?:documents?\s+(?:corrected|amended)|(?:corrected|amended)\s+documents?|corrects)"
                 # up to the next field, its own bracket ("(issued 18 October 2024)") with it
                 r"\s*[:–—-]\s*(.+?)\s*(?:\([^)]*\)\s*)?(?=" + _FIELD_LABEL + r":\s|$)",
                 r"\b(?:corrects|amends|postpones|defers)\s+(.+?)(?=\.(?!\d)|[;,)\n]|$)",
                 # A change against an earlier document: "planned in the kick-off meeting, is postponed",
                 # "Following the leadership meeting of 14 January, some dates have had to change".
                 r"^(?=.*\b(?:postpone[sd]?|defer(?:s|red)?|move[sd]?|revise[sd]?|reschedule[sd]?|update[sd]?|"
                 r"changed?|changes)\b).*?"
                 # "agreed at Progress Meeting No. 7 on 12 March 2024 are postponed": a numbered meeting
                 r"\b(?:in|from|of|at|by|following|after)\s+"
                 r"((?:the\s+)?(?:[\w-]+\s+){0,3}?(?:meeting|notes?|memo|minutes|guidance|policy|report|plan|letter)"
                 r"(?:\s+no\.?\s*\d+)?)\b",
                 r"(\S[^.\n]*?)\s*(?:에 대한 정정|[을를]\s*(?:정정|연기))"),
}


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
    if (match := _FILE_DATE.search(stem)) and not _CODE_PREFIX.search(stem[:match.start()]):
        put("effective_date", _iso(*match.groups()), "file name")
    if match := FILE_VERSION.search(stem):
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
    if not found.get("corrects") and "erratum" in (found.get("status"), lines and _status(lines[0])):
        # an erratum names what it corrects in a header field: "Report: TR-2024-07 "Adhesion ..."
        # (issue 1, 19 July 2024)"; read only in an erratum, where no other field says so
        for number, line in enumerate(lines, 1):
            named = tuple(m.group(1) for m in _ERRATUM_OF.finditer(line))
            put("corrects", named, f"first page line {number}")
    for number, line in sorted(enumerate(lines, 1), key=lambda pair: not _EFFECTIVE.search(pair[1])):
        own = _unlinked(line, cfg)
        for name in found.get("corrects", ()):  # a date in a link's name is the other document's
            own = own.replace(str(name), " ")
        dated = _date(own)
        named_month = found.get("effective_date") if origin.get("effective_date") == "file name" else None
        if named_month and str(dated).startswith(f"{named_month}-"):
            del found["effective_date"]  # the first page gives the file name's month its day
        put("effective_date", dated, f"first page line {number}")
    for number, line in enumerate(lines, 1):
        # A version a link names ("supersedes v1.0") is another document's.
        own = _unlinked(line, cfg)
        # A bare "v2" inside a sentence is a thing's ("REST v2 as the default API"); the document's
        # stands in a title or field line, or is spelled out ("version 2.0").
        spelled = VERSIONS if len(own.split()) <= _TITLE_WORDS else VERSIONS[1:]
        version = first_match((*cfg.patterns.get("version", []), *spelled), own)
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


def _named(line: str, patterns: Iterable[str]) -> list[str]:
    names = []
    for pattern in patterns:
        for match in re.finditer(pattern, line, re.IGNORECASE):
            name = match.group(1).strip(" \"'“”‘’`*:")
            if len(name) > 120 and (code := _NAMED_CODE.match(name)):
                name = code.group()
            if name and len(name) <= 120:
                names.append(name)
    return list(dict.fromkeys(names))


def _unlinked(line: str, cfg: CurrencySettings) -> str:
    for key, patterns in _LINKS.items():
        for pattern in (*patterns, *cfg.patterns.get(key, [])):
            line = re.sub(pattern, " ", line, flags=re.IGNORECASE)
    return line
