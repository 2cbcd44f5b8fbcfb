"""What a sentence claims, and whether a chunk states it: each figure with its unit and the words
that say what it measures, each date. `claims_backed(segment, chunk)`: every figure and date of
the segment stands in the chunk (in any spelling rag/units.py knows: "EUR 30m" is "30,000,000
EUR"; "30" is never "300") in a place of the chunk (a sentence, a list item, a table cell read
with its row and its column's header) that agrees with its unit, and no other place, one that the
segment's words about the figure name more, gives that thing another figure: "the passenger's
HIC15 is 412" is not backed by a table whose 412 is the driver's and whose passenger cell holds
388. Where the chunk names none of those words (a paraphrase, another language) the figure alone
decides. Comparisons between the segment's own figures are rag/units.py's `comparisons_hold`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from rag.text import HEADER, MARKER, TABLE_RULE, cells, folded, split_sentences
from rag.units import (CURRENCIES, SCALES, UNITS, Amount, amounts, bounds, comparisons_hold, named_scales,
                       named_units, satisfies, value)

Date = tuple[int | None, int | None, int | None]  # (year, month, day), None where not given

_MONTHS = {name: i + 1 for i, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
    ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
    ("october", "oct"), ("november", "nov"), ("december", "dec"))) for name in names}
# Month names capitalised ("May", not "may"); a month before its day first ("August 12, 2024").
_NAMES = sorted(_MONTHS, key=len, reverse=True)
_MONTH = r"(?P<{}>" + "|".join(f"{m.capitalize()}|{m.upper()}" for m in _NAMES) + r")\.?"
_DATES = [re.compile(pattern) for pattern in (
    r"(?<![\w-])(?P<y>\d{4})[-./](?P<m>\d{1,2})(?:[-./](?P<d>\d{1,2}))?(?![\w-])",
    r"(?<!\w)" + _MONTH.format("mn") + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(?P<y>\d{4}))?(?!\w)",
    r"(?<!\w)(?:(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+)?" + _MONTH.format("mn") + r"(?:,?\s+(?P<y>\d{4}))?(?!\w)",
    r"(?:(?P<y>\d{4})\s?년\s?)?(?P<m>\d{1,2})\s?월(?:\s?(?P<d>\d{1,2})\s?일)?",
)]
# A word: Latin (codes too: "HIC15", "SL-13", "3A"; "100-year" names a thing, it measures none),
# or Korean.
_LETTER = re.compile(r"[A-Z](?:['’]s)?")
_LETTER_A = re.compile(r"A(?:['’]s)?")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-'’][A-Za-z0-9]+)*|\d+(?:[.,]\d+)*-?[A-Za-z][A-Za-z0-9-]*"
                   r"|[\uac00-\ud7a3]+")
# Words that say nothing of what a figure measures: function words, verbs that state a figure,
# units, currencies, scales and months (they are the figure's own claim).
_STOP = frozenset("""
a an the of in on at to for from by with and or but as is are was were be been being has have had
do does did not no it its this that these those there their they he she his her we our you your
which who whom what when where while than then so such per each every any all some both about since until
after before over under within below above between into out up down off only also just very more
less most least new now still yet again same other another one two three first second last
reached reach reaches reaching measured measure recorded record stood stands stand came comes
amounted amounts amount totalled totaled total totals value values figure figures number level
showed shows show gave gives given got get gets ended end ends come set sets made make makes
approximately approx around roughly nearly almost exactly
""".split()) | {s.lower() for spellings in UNITS.values() for s in spellings} \
    | {s.lower() for spellings in CURRENCIES.values() for s in spellings} | set(SCALES) | set(_MONTHS) \
    | {"이", "그", "및", "등", "약", "총", "이었", "였다", "였으", "이다", "있다", "했다", "되었", "됐다",
       "으로", "에서"}
# A change between two figures or dates of one sentence: "moved from X to Y", "X에서 Y로" (a verb
# of change needed: "from 10 to 20 staff" is a range); "should read Y, not X", "Y instead of X".
_CHANGE_VERB = re.compile(
    r"\b(?:mov|postpon|delay|rais|lower|increas|decreas|reduc|chang|revis|extend|shift|cut|grew|grow|"
    r"rose|rise|fell|fall|drop|correct|updat|amend|brought|push|replac)\w*|변경|연기|인상|인하|증가|감소|조정|"
    r"정정|늘|줄|미뤄|앞당", re.IGNORECASE)
_FROM_TO = re.compile(r"\s*(?:to|->|→|–>)\s*|\s*(?:에서|→)\s*", re.IGNORECASE)
_WEEKDAY = re.compile(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s*$", re.IGNORECASE)
_NOT = re.compile(r"\s*,?\s*\(?\s*(?:not|instead of|rather than|replacing|대신)\s*", re.IGNORECASE)
# A later figure's clause that refers back to the sentence's thing ("the cap is EUR 175 in all
# cities except Seoul, where it is EUR 230"; "..., while in Hamburg they are 14"): it measures
# what the earlier figure measures.
_REFERS = re.compile(r"\b(?:where|whereas|while|it|they|its|their)\b", re.IGNORECASE)
_CHANGE_CUE = re.compile(r"\b(?:from|not|instead|originally|previously|formerly|earlier|initially|"
                         r"planned|old|superseded)\b|에서|당초|기존|원래|이전|종전", re.IGNORECASE)


# A document's name as the model cites it ("memo_schedule_changes_2025-03.md"): its date or
# number names the file, not what the sentence claims.
_FILE_NAME = re.compile(r"[\w.-]+\.(?:md|txt|csv|json|html?|pdf|docx?|pptx?|xlsx?)\b"
                        r"|\b[A-Za-z]\w*_[\w-]*\d[\w-]*", re.IGNORECASE)


@dataclass(frozen=True)
class Place:
    """Where a chunk states figures: the keys of its words, its figures and dates, and the units
    and scales it names for its bare figures (a cell's row and column header: "(mm)", "(EUR m)")."""

    words: frozenset[str]
    amounts: tuple[Amount, ...]
    dates: tuple[Date, ...]
    units: frozenset[str]
    scales: frozenset[float]
    cell: tuple[int, int, int] | None = None  # (table, row, column); row -1: the header
    own: frozenset[str] = frozenset()  # a table cell's own words ("months" of "24 months")
    line: int = 0  # which sentence of the chunk (a table: minus its number)
    former: bool = False  # the old side of a change stated here ("moved from X to Y": X)
    # (value, unit, side, inclusive) of each figure stated as a bound: "above EUR 100 thousand"
    bounds: tuple[tuple[float, str | None, int, bool], ...] = ()
    column: frozenset[str] = frozenset()  # a table cell's column header's keys
    field: bool = False  # a "label: value" field ("Headcount: 71", "term.notice_period_days: 90")


@dataclass(frozen=True)
class Claim:
    """A figure (`amount`) or a date (`date`) of a sentence, and the keys of the sentence's words
    with their weight for it (1 for the nearest word, 1/2 for the next, ...)."""

    amount: Amount | None
    date: Date | None
    words: tuple[tuple[str, float], ...]
    sentence: int = 0  # which sentence of the segment
    change: bool = False  # the sentence speaks of a change or a former value ("from", "not", "원래")
    bound: bool = False  # the figure is itself a bound ("above 100"), not one case ("a fee of 150")


@lru_cache(maxsize=16384)
def key(word: str) -> str | None:
    """A word as it is compared: codes whole ("HIC15", "SL-13"), other Latin words by their first
    five letters less an ending ("deflection", "deflected"; "tests", "tested"; "rate", "rated"),
    Korean words by their first two syllables (a particle changes the end: "변위는", "변위");
    None for words that name nothing."""
    lowered = word.lower().replace("’", "'").removesuffix("'s")
    if _LETTER.fullmatch(word) and word[0] not in "AI":
        return lowered  # a one-letter label: "Module B", "Grade C"
    if lowered in _STOP or len(lowered) < 2 or (lowered.isascii() and len(lowered) < 3):
        return None
    if not lowered.isascii():
        return None if lowered[:2] in _STOP else lowered[:2]
    if any(c.isdigit() for c in lowered):
        return lowered
    stem = re.sub(r"(?:ations?|ions?|ings?|ed|es|s)$", "", lowered)
    cut = (stem if len(stem) >= 3 else lowered)[:5]
    # A final "e" is an ending too ("file", "filed", "files"; "target", "targets").
    return cut[:-1] if len(cut) >= 4 and cut.endswith("e") else cut


@lru_cache(maxsize=8192)
def keys(text: str) -> tuple[tuple[str, int, int], ...]:
    """(key, start, end) of each word of the text that names something ("A" too, but not as the
    first word: "Module A", not "A rigid plate"); cached."""
    found = []
    for match in _WORD.finditer(text):
        word = match.group()
        if _LETTER_A.fullmatch(word) and text[:match.start()].strip():
            found.append(("a", match.start(), match.end()))
        elif k := key(word):
            found.append((k, match.start(), match.end()))
    return tuple(found)


def dates(text: str) -> list[tuple[Date, int, int]]:
    """(date, start, end) of each date of the text, none overlapping another."""
    found: list[tuple[Date, int, int]] = []
    for pattern in _DATES:
        for match in pattern.finditer(text):
            if any(s < match.end() and match.start() < e for _, s, e in found):
                continue
            parts = match.groupdict()
            month = _MONTHS[parts["mn"].lower()] if parts.get("mn") else int(parts["m"])
            day = int(parts["d"]) if parts.get("d") else None
            if 1 <= month <= 12 and (day is None or 1 <= day <= 31):
                found.append(((int(parts["y"]) if parts.get("y") else None, month, day),
                              match.start(), match.end()))
    return sorted(found, key=lambda d: d[1])


@lru_cache(maxsize=8192)
def _figures(text: str) -> tuple[tuple[Amount, ...], tuple[tuple[Date, int, int], ...]]:
    """The text's figures outside its dates (a figure glued to a word, "1st", "3A" or "100-year",
    is a code, and so is an ordinal: "3분기" is Q3) and its dates; cached (read-only)."""
    if not re.search(r"\d", text):
        return (), ()
    found = dates(text)
    kept = [a for a in amounts(text) if not any(s <= a.start < e for _, s, e in found)
            and not re.match(r"-?[A-Za-z]|\s?(?:분기|번째)", text[a.end:a.end + 3])]
    return tuple(kept), tuple(found)


@lru_cache(maxsize=4096)
def places(chunk: str) -> tuple[Place, ...]:
    """The chunk's places: each sentence or list item, and each cell of a Markdown table read
    with its row's other text and its column's header. Cached: each chunk meets every run of
    sentences of an answer."""
    found: list[Place] = []
    lines = unwrapped(chunk.splitlines())
    header: list[str] = []
    table = row_number = sentences = 0
    # The header's values (the document's title, its key fields) and the section heading name
    # what stands under them.
    prefix = HEADER.match(chunk)
    named = frozenset(k for line in (prefix.group(0) if prefix else "").splitlines() if ": " in line
                      for k, _, _ in keys(re.sub(r"[-_]", " ", line.split(": ", 1)[1])))
    titled = named
    for i, line in enumerate(lines):
        row = cells(line) if line.lstrip().startswith("|") else []
        if row and i + 1 < len(lines) and TABLE_RULE.match(lines[i + 1].strip()):
            header, table, row_number = row, table + 1, 0  # its figures too ("24 months") are places
            found += [_labelled(_place(cell, line, line, (table, -1, j), -table), "", titled)
                      for j, cell in enumerate(row) if any(_figures(cell))]
            continue
        if not row:
            header = [] if not line.strip() else header
            if heading := _HEADING.match(line):
                titled = named | frozenset(k for k, _, _ in keys(heading.group(1)))
            for sentence in split_sentences(line):
                sentences += 1
                for label, text in fields(sentence):
                    found += [_labelled(place, label, titled) for place in _clauses(text, sentences)]
            continue
        if TABLE_RULE.match(line.strip()):
            continue
        row_number += 1
        for j, cell in enumerate(row):
            if any(_figures(cell)):
                column = header[j] if j < len(header) else ""
                place = _place(cell, f"{' '.join(row)} {column}", f"{line} {column} |",
                               (table, row_number, j) if header else None, -table)
                place = replace(place, column=frozenset(k for k, _, _ in keys(column)))
                found.append(_labelled(place, "", titled))
    return tuple(found)


_BLOCK = re.compile(r"^\s*(?:\||#|[-*•·]\s|\d+[.)]\s)")  # a table row, heading or list item starts a line


def unwrapped(lines: list[str]) -> list[str]:
    """Lines with a hard-wrapped paragraph's lines joined (a plain-text file wrapped at 72
    columns splits "account for 45% of / revenue"): a line continues the one before when that one
    is long and ends no sentence, or when it starts in lower case.

    >>> unwrapped(["Clients account for 45% of the firm's revenue this year, and food for", "40%.", "Notes"])
    ["Clients account for 45% of the firm's revenue this year, and food for 40%.", 'Notes']
    >>> unwrapped(["Customers and revenue", "Revenue in 2024 was EUR 58.3 million."])
    ['Customers and revenue', 'Revenue in 2024 was EUR 58.3 million.']
    """
    joined: list[str] = []
    for line in lines:
        previous = joined[-1] if joined else ""
        wrapped = len(previous) >= 50 and not re.search(r"[.!?:;]\s*$", previous)
        if (previous.strip() and line.strip() and not _BLOCK.match(line) and not _BLOCK.match(previous)
                and (line.lstrip()[:1].islower() or wrapped)):
            joined[-1] = f"{previous.rstrip()} {line.strip()}"
        else:
            joined.append(line)
    return joined


_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
# A field's label: a key path ("term.notice_period_days") or up to four words, at the start of a
# sentence or after the previous field's value ("Address: Noorderlaan 412 Headcount: 188", a
# Markdown paragraph of "label: value" lines joined by the converter).
_LABEL = re.compile(r"(?:^|(?<=\s))([A-Za-z_][\w.\[\]-]*(?: [A-Za-z][\w-]*){0,3}|[가-힣]+(?: [가-힣]+){0,2})"
                    r":\s+")


def fields(sentence: str) -> list[tuple[str, str]]:
    """(label, value) of each field of a sentence that starts with one, else [("", sentence)]:

    >>> fields("Headcount: 71 Site manager: Tomasz Wiśniewski")
    [('Headcount', '71'), ('Site manager', 'Tomasz Wiśniewski')]
    >>> fields("term.notice_period_days: 90")
    [('term.notice_period_days', '90')]
    >>> fields("The audit found 3 issues: two high.")
    [('', 'The audit found 3 issues: two high.')]
    """
    labels = list(_LABEL.finditer(sentence))
    if not labels or labels[0].start() != 0:
        return [("", sentence)]
    ends = [m.start() for m in labels[1:]] + [len(sentence)]
    return [(m.group(1), sentence[m.end():end].strip()) for m, end in zip(labels, ends)]


def _labelled(place: Place, label: str, titled: frozenset[str]) -> Place:
    """The place with its section heading's keys and, in a field, its label's: the label names
    the value's thing, and the unit or scale of a bare value ("term.notice_period_days: 90")."""
    if not label:
        return replace(place, words=place.words | titled) if titled else place
    named = " ".join(label.split("."))  # each key of a path may name a unit ("range_c.min")
    own = frozenset(k for k, _, _ in keys(label.replace("_", " ")))
    return replace(place, words=place.words | titled | own,
                   units=place.units | named_units(named), scales=place.scales | named_scales(named),
                   field=True)


def _place(text: str, words: str | frozenset[str], naming: str, cell: tuple[int, int, int] | None = None,
           line: int = 0, former: bool = False, bounded: tuple[tuple[Amount, int, bool], ...] = ()) -> Place:
    """`words`: the text whose keys the place owns, or those keys (a key is not keyed again)."""
    figures, found = _figures(text)
    owned = words if isinstance(words, frozenset) else frozenset(k for k, _, _ in keys(words))
    return Place(owned, tuple(figures), tuple(d for d, _, _ in found),
                 frozenset(named_units(naming)), frozenset(named_scales(naming)), cell,
                 frozenset(k for k, _, _ in keys(text)) if cell else frozenset(), line, former,
                 tuple((a.value, a.unit, side, inclusive) for a, side, inclusive in bounded))


def _clauses(sentence: str, line: int = 0) -> list[Place]:
    """A sentence's places: one per figure or date, each with the words it owns; of a change the
    new side owns the old side's words too ("the final report moves from 20 December to 31
    January": the report is due on 31 January), and the old side is former; a clause that refers
    back ("where it is") owns the earlier figure's words too."""
    owned = sorted(_owned(sentence), key=lambda o: o[2])
    stated = bounds(sentence)
    if len(owned) < 2:
        return [_place(sentence, sentence, sentence, line=line, bounded=stated)]
    words = [frozenset(w for w, _ in o[4]) for o in owned]
    former = set()
    verb = bool(_CHANGE_VERB.search(sentence))
    for i in range(len(owned) - 1):
        between = sentence[owned[i][3]:owned[i + 1][2]]
        # "from week 32 to week 34", "from 12 April to Saturday 24 May": the noun before the first
        # figure, or a weekday, may stand before the second.
        before = re.search(r"([A-Za-z]+)\s*$", sentence[:owned[i][2]])
        between = re.sub(rf"\b{before.group(1)}\s*$", "", between) if before else between
        between = _WEEKDAY.sub("", between)
        old, new = (i, i + 1) if verb and _FROM_TO.fullmatch(between) else \
            (i + 1, i) if _NOT.fullmatch(between) else (None, None)
        if old is not None:
            words[new] = words[new] | words[old]
            former.add(old)
        elif _REFERS.search(between):
            words[i + 1] = words[i + 1] | words[i]
    return [_place(sentence[o[2]:o[3]], words[k], sentence, line=line, former=k in former,
                   bounded=tuple(b for b in stated if o[2] <= b[0].start < o[3]))
            for k, o in enumerate(owned)]


def _owned(sentence: str) -> list[tuple[Amount | None, Date | None, int, int, list[tuple[str, int]]]]:
    """(figure, date, start, end, [(word, distance)]) of each figure or date of a sentence with
    the words nearer to it than to any other ("a deductible of EUR 2.5m and a limit of EUR 40m":
    "limit" is the 40m's); the sentence and the chunk split alike, so a copied sentence agrees."""
    figures, spans = _figures(sentence)
    found = [(a, None, a.start, a.end, []) for a in figures] + [(None, d, s, e, []) for d, s, e in spans]
    for word, s, e in keys(sentence):
        if found and not any(s < end and start < e for _, _, start, end, _ in found):
            gaps = [max(s - end, start - e, 0) for _, _, start, end, _ in found]
            found[gaps.index(min(gaps))][4].append((word, min(gaps)))
    # A year qualifies the sentence's other figures: in "the average score in 2024 was 78.4" the
    # year is nearer every word, and the score keeps them too.
    years = [i for i, (a, d, _, _, _) in enumerate(found) if (a and _year(a)) or (a is None and d[1] is None)]
    for figure in found:
        if not figure[4] and years and figure[0] is not None and not _year(figure[0]):
            year = min(years, key=lambda i: abs(found[i][2] - figure[2]))
            figure[4].extend((word, gap + abs(found[year][2] - figure[2])) for word, gap in found[year][4])
    return found


@lru_cache(maxsize=4096)
def claims(segment: str) -> tuple[Claim, ...]:
    """The figures and dates each sentence of the segment claims, each with the words it owns
    (list markers and citation marks are no figures: "1. The HIC15 ...", "... 3 mm [1].")."""
    found = []
    for number, sentence in enumerate(split_sentences(MARKER.sub("", segment))):
        sentence = re.sub(r"^\s*(?:\d+[.)]|[-*•·])\s+", "", sentence)
        sentence = _FILE_NAME.sub("", sentence)
        stated = {b[0].start for b in bounds(sentence)}
        for amount, date, _, _, words in _owned(sentence):
            distance: dict[str, int] = {}
            for word, gap in words:
                distance[word] = min(distance.get(word, gap), gap)
            near = sorted(distance, key=distance.get)
            weights = tuple((word, 1 / rank) for rank, word in enumerate(near, 1))
            found.append(Claim(amount, date, weights, number, bool(_CHANGE_CUE.search(sentence)),
                               amount is not None and amount.start in stated))
    return tuple(found)


def agrees(claim: Claim, place: Place) -> tuple[bool, bool]:
    """(the place states the claim's figure or date, it gives another of the same kind)."""
    if claim.date is not None:
        same = [all(c is None or c == s for c, s in zip(claim.date, date)) and
                all(s is not None for c, s in zip(claim.date, date) if c is not None) for date in place.dates]
        return any(same), bool(place.dates) and not any(same)
    wanted = claim.amount
    # A bare figure takes the unit its header or label names only in a table cell or a field:
    # "cell 14" in a sentence that also says "3 mm" is no length.
    units = [a for a in place.amounts if (not wanted.unit or a.unit == wanted.unit
             or (a.unit is None and wanted.unit in place.units and (place.cell is not None or place.field)))
             and _year(a) == _year(wanted)]  # a year and a score rival neither the other
    # A bare figure under "(EUR m)" is in millions; a figure with its own scale ("EUR 30m") is not.
    held = any(abs(a.value * s - wanted.value) <= 1e-9 * max(1.0, abs(wanted.value)) for a in units
               for s in (place.scales or {1.0} if _bare(a) else {1.0}))
    if not held and wanted.unit is None and wanted.value.is_integer() and 1900 <= wanted.value <= 2100:
        held = any(date[0] == wanted.value for date in place.dates)  # "in 2024": a date's year
    return held, bool(units) and not held


def _meets(claim: Claim, place: Place) -> bool:
    """Whether the claim's figure, one case and no bound itself, meets a bound the place states
    for it in its unit, the place naming the claim's thing (its nearest words): a rule's threshold
    covers the case the sentence gives."""
    wanted = claim.amount
    named = sum(weight for word, weight in claim.words if word in place.words) >= 0.5
    return wanted is not None and not claim.bound and named and any(
        unit == wanted.unit and satisfies(wanted.value, side, bound, inclusive)
        for bound, unit, side, inclusive in place.bounds)


def met_cases(segment: str, chunk: str) -> frozenset[str]:
    """The segment's figures (as written) that are cases meeting a bound a place of the chunk
    states for them ("EUR 150 thousand" for "above EUR 100 thousand"): present, though unwritten."""
    return frozenset(c.amount.number for c in claims(segment)
                     if c.amount is not None and any(_meets(c, p) for p in places(chunk)))


def stated_figures(segment: str, chunk: str) -> frozenset[str]:
    """The segment's figures (as written) that a place of the chunk states in another spelling
    ("EUR 500,000" of "limit_eur: 500000", "EUR 0.5 million")."""
    return frozenset(c.amount.number for c in claims(segment)
                     if c.amount is not None and any(agrees(c, p)[0] for p in places(chunk)))


def states_former(claim: Claim, text: str) -> bool:
    """Whether the text gives the claim's figure or date as a former value ("moves from week 32
    to week 34", "should read 2.4, not 3.4"): a source still stating it is the superseded one."""
    return any(place.former and agrees(claim, place)[0] for place in places(text))


def _year(amount: Amount) -> bool:
    return amount.unit is None and bool(re.fullmatch(r"(?:19|20)\d\d", amount.number))


def _bare(amount: Amount) -> bool:
    return bool(re.fullmatch(r"[\d.,]+", amount.number)) and amount.value == value(amount.number)


def claim_backed(claim: Claim, chunk: str) -> bool:
    """Whether a place of the chunk states the claim's figure (or date) and none gives the thing
    the claim's words name most another figure."""
    return _backing(claim, chunk) is not None


def _backing(claim: Claim, chunk: str) -> float | None:
    """How much the best place stating the claim names its thing (the claim's words' weights it
    holds), or None when no place states it or one naming the thing more gives another figure."""
    held, rivals = 0.0, []
    stated: set[int] = set()
    for place in places(chunk):
        states, other = agrees(claim, place)
        if place.former and not claim.change:  # a former value is given only as one
            states, other = False, False
        score = sum(weight for word, weight in claim.words if word in place.words)
        if not states and _meets(claim, place):
            states, other = True, False  # "a fee of EUR 150k" is a case of "a fee above EUR 100k"
        if not (states or other):
            continue
        if states:
            stated.add(place.line)
            held = max(held, score)
        else:
            rivals.append((place.line, score))
    # A narrative holds many dates of many events: another date rivals only in the same sentence
    # or table; another figure anywhere in the chunk.
    rival = max((score for line, score in rivals if claim.date is None or line in stated), default=0.0)
    return held if stated and rival <= held else None


def coordinates_hold(found: tuple[Claim, ...], chunk: str) -> bool:
    """Whether each figure of a sentence that a table cell holds stands in the row and under the
    column of the sentence's figures that the table gives as a row label (its first column) or
    a column header ("12 claims open at 24 months for 2022" needs the 12 in 2022's row, under
    "24 months"). A figure is such a coordinate where the label or header is the bare figure or
    shares a word with the figure's own ("at 24 months"; not "12 claims" for "12 months")."""
    table = [p for p in places(chunk) if p.cell]
    sentences = [c.sentence for c in found]
    if not table or len(set(sentences)) == len(sentences):  # no table, or one figure a sentence
        return True
    coordinates, values = {}, {}
    for claim in found:
        near = {word for word, weight in claim.words if weight >= 0.5}
        stated = [p for p in table if agrees(claim, p)[0]]
        coordinates[claim] = [p.cell for p in stated if (p.cell[1] < 0 or p.cell[2] == 0)
                              and (not p.own or p.own & near)]
        values[claim] = [p.cell for p in stated if p.cell[1] >= 0 and p.cell[2] > 0]
    for claim in found:
        where = [coordinates[c] for c in found
                 if c.sentence == claim.sentence and c is not claim and coordinates[c]]
        if coordinates[claim] or not values[claim] or not where:
            continue
        if not any(all(any(t == table and (r == row or c == column) for t, r, c in cells)
                       for cells in where if any(t == table for t, _, _ in cells))
                   for table, row, column in values[claim]):
            return False
    return True


def claims_backed(segment: str, chunk: str) -> bool:
    """Whether the chunk states every figure and date of the segment for what the segment gives
    it for, and the segment's comparisons agree with its figures."""
    found = claims(segment)
    return comparisons_hold(segment) and all(claim_backed(c, chunk) for c in found) \
        and coordinates_hold(found, chunk)


# A name: a capitalised word after a sentence's first ("SeaFresh", "Gdańsk"), or a code.
_NAME = re.compile(r"(?<=\s)[A-Z][^\W_]*(?:[-'’][^\W_]+)*(?<!['’]s)|\b[A-Z]+-?\d[\w-]*")
NAMED = 0.75  # the weight of a claim's words a place must hold to state it for its thing


def claims_named(segment: str, chunk: str) -> bool:
    """Whether every sentence of the segment claims a figure or date, and the chunk states each
    for the thing the sentence names (a place holding its nearest words: the weights of
    NAMED): what the support model cannot read in a paraphrase or a key path ("We must give 90
    days' notice" of "term.notice_period_days: 90"). A year only has to stand in the chunk."""
    found = claims(segment)
    sentences = split_sentences(MARKER.sub("", segment))
    if not found or len({c.sentence for c in found}) < len(sentences):
        return False
    # Every name the sentences give their thing ("the SeaFresh contract") stands in the chunk:
    # another contract's clause states no figure of this one.
    text = folded(chunk).lower()
    if any(folded(name).lower() not in text for sentence in sentences for name in _NAME.findall(sentence)):
        return False
    backing = [(c, _backing(c, chunk)) for c in found]
    # Each figure as the chunk writes it: a case meeting its bound ("EUR 150 thousand" of "above
    # EUR 100 thousand") is the reader's inference, which a quote of the rule shows better.
    literal = all(any(agrees(c, p)[0] for p in places(chunk)) for c in found)
    return (literal and all(b is not None for _, b in backing) and any(not _year_claim(c) for c in found)
            and all(b >= NAMED for c, b in backing if not _year_claim(c))
            and comparisons_hold(segment) and coordinates_hold(found, chunk))


def _year_claim(claim: Claim) -> bool:
    return claim.amount is not None and _year(claim.amount)
