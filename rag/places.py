"""Where a chunk states figures: its places (each sentence or list item, each "label: value"
field, each table cell read with its row and its column's header), each with its figures and
dates, the keys of the words it owns and the units its header or label names. rag/claims.py
reads a sentence's claims with the same functions, so a sentence copied from a chunk agrees.

>>> chunk = "A deductible of EUR 2.5m and a limit of EUR 40m."
>>> [(p.amounts[0].number, sorted(p.words)) for p in places(chunk)]
[('2.5', ['deduc']), ('40', ['limit'])]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from rag.corrections import former_sentences, lead_label, old_sides
from rag.layout import fields, following, title, unwrapped
from rag.text import HEADER, TABLE_RULE, cells, split_sentences
from rag.units import (CURRENCIES, FREQUENCY_PATTERN, SCALES, UNITS, Amount, amounts, bounds, named_scales,
                       named_units)


Date = tuple[int | None, int | None, int | None]  # (year, month, day), None where not given

_MONTHS = {name: i + 1 for i, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
    ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
    ("october", "oct"), ("november", "nov"), ("december", "dec"))) for name in names}
# Month names capitalised ("May", not "may"); a month before its day first ("August 12, 2024").
_NAMES = sorted(_MONTHS, key=len, reverse=True)
_MONTH = r"(?P<{}>" + "|".join(f"{m.capitalize()}|{m.upper()}" for m in _NAMES) + r")\.?"
# A time of day ("06:00-16:00") is no figure: its hours and minutes would each claim a thing's words.
_TIME = re.compile(r"(?<![\d:])(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?![\d:])")
# The weekday before a date is the date's ("Thursday 5 December 2024"), no word of its thing.
_WEEKDAY_NAME = r"(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day"
_DAY = rf"(?:\b{_WEEKDAY_NAME},?\s+)?"
_DATES = [re.compile(pattern) for pattern in (
    r"(?<![\w-])(?P<y>\d{4})[-./](?P<m>\d{1,2})(?:[-./](?P<d>\d{1,2}))?(?![\w-])",
    _DAY + r"(?<!\w)" + _MONTH.format("mn")
    + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(?P<y>\d{4}))?(?!\w)",
    _DAY + r"(?<!\w)(?:(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+)?" + _MONTH.format("mn")
    + r"(?:,?\s+(?P<y>\d{4}))?(?!\w)",
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
approximately approx around roughly nearly almost exactly pound pounds sterling
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
# A figure or date withdrawn: "the audit will no longer take place on 11 June", "is cancelled".
_NO_LONGER = re.compile(r"\bno longer\b|\b(?:is|are|was|were|has been|have been)\s+(?:now\s+)?"
                        r"(?:cancelled|canceled)\b|\bwill not (?:take place|be held|go ahead)\b|더 이상|취소",
                        re.IGNORECASE)
_FROM_TO = re.compile(r"\s*(?:to|->|→|–>)\s*|\s*(?:에서|→)\s*", re.IGNORECASE)
# The same change written with its verb between the two sides: "the test set for 14 November has
# been moved to 5 December", "the outage planned for 23 November will now take place on 11 January".
_MOVED_TO = re.compile(
    r"\s*,?\s*(?:(?:has|have|had)\s+been\s+|(?:was|were|is|are|will\s+be)\s+(?:now\s+)?)?"
    r"(?:moved|postponed|put|pushed|pulled|brought|rescheduled|changed|revised|deferred|delayed|extended"
    r"|raised|lowered|increased|reduced|cut|updated|amended|corrected)(?:\s+(?:back|forward))?\s+(?:to|until)\s*"
    r"|\s*,?\s*(?:will\s+)?now\s+(?:take\s+place|be\s+held|happen|run|start|go\s+ahead)\s+on\s*",
    re.IGNORECASE)
_WEEKDAY = re.compile(rf"\b{_WEEKDAY_NAME},?\s*$", re.IGNORECASE)
_NOT = re.compile(r"\s*,?\s*\(?\s*(?:not|instead of|rather than|replacing|대신)\s*", re.IGNORECASE)
# A later figure's clause that refers back to the sentence's thing ("the cap is EUR 175 in all
# cities except Seoul, where it is EUR 230"; "..., while in Hamburg they are 14"): it measures
# what the earlier figure measures.
_REFERS = re.compile(r"\b(?:where|whereas|while|it|they|its|their)\b", re.IGNORECASE)


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
    periods: frozenset[str] = frozenset()  # the quarters its cell's column header or its sentence names



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


_PERIOD = re.compile(r"\b(?:Q[1-4]|H[12]|FY ?\d{2}(?:\d{2})?|[1-4]Q)\b", re.IGNORECASE)


def periods(text: str) -> frozenset[str]:
    """The quarters, halves and fiscal years a text names ("Q3", "H1", "FY24"), lower-cased, no
    space: too short to be keys, yet what tells a table's Q2 column from its Q3 column."""
    return frozenset(m.group().lower().replace(" ", "") for m in _PERIOD.finditer(text))


@lru_cache(maxsize=4096)
def titles(chunk: str) -> frozenset[str]:
    """The keys of the chunk's header values and Markdown headings: words every place under
    them holds, so they tell no place from another."""
    header = HEADER.match(chunk)
    lines = [header.group(0) if header else "", *(m.group(1) for m in _HEADING.finditer(chunk))]
    return frozenset(k for line in lines for k, _, _ in keys(line))


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
    """The text's figures outside its dates and times of day (a figure glued to a word, "1st",
    "3A" or "100-year", is a code, and so is an ordinal: "3분기" is Q3) and its dates; cached (read-only)."""
    if not re.search(r"\d", text) and not FREQUENCY_PATTERN.search(text):
        return (), ()
    found = dates(text)
    times = [m.span() for m in _TIME.finditer(text)]
    kept = [a for a in amounts(text) if not any(s <= a.start < e for _, s, e in found)
            and not any(s <= a.start < e for s, e in times)
            and not re.match(r"-?[A-Za-z]|\s?(?:분기|번째)", text[a.end:a.end + 3])]
    return tuple(kept), tuple(found)



@lru_cache(maxsize=4096)
def places(chunk: str) -> tuple[Place, ...]:
    """The chunk's places: each sentence or list item, and each cell of a Markdown table read
    with its row's other text and its column's header. Cached: each chunk meets every run of
    sentences of an answer."""
    found: list[Place] = []
    lines = unwrapped(chunk.splitlines())
    sides = old_sides(lines)
    header: list[str] = []
    table = row_number = sentences = 0
    # The header's values (the document's title, its key fields) and the section heading name
    # what stands under them.
    prefix = HEADER.match(chunk)
    named = frozenset(k for line in (prefix.group(0) if prefix else "").splitlines() if ": " in line
                      for k, _, _ in keys(re.sub(r"[-_]", " ", line.split(": ", 1)[1])))
    titled = named
    # A year in the header's values ("q3-2024-trading-report-erratum") is the period every figure
    # under it is of, as "in Q3 2024" says in a sentence.
    years = dict.fromkeys(_YEAR.findall(prefix.group(0) if prefix else ""))
    found += [_labelled(place, "", named) for year in years for place in _clauses(year)]
    for i, line in enumerate(lines):
        row = cells(line) if line.lstrip().startswith("|") else []
        if row and i + 1 < len(lines) and TABLE_RULE.match(lines[i + 1].strip()):
            header, table, row_number = row, table + 1, 0  # its figures too ("24 months") are places
            found += [_labelled(_place(cell, line, line, (table, -1, j), -table), "", titled)
                      for j, cell in enumerate(row) if any(_figures(cell))]
            continue
        if not row:
            header = [] if not line.strip() else header
            if heading := _HEADING.match(line) or title(line, following(lines, i)):
                titled = named | frozenset(k for k, _, _ in keys(heading.group(1)))
            split = split_sentences(line)
            paired = sides[i]  # "Printed: 78.6%" above "Correct: 76.8%": an erratum's old side
            lead, label = lead_label(split)  # "2. Written customer complaints. The report states ..."
            item = titled | frozenset(k for k, _, _ in keys(label))
            olds = former_sentences(split)
            for n, sentence in enumerate(split):
                sentences += 1
                quarters = periods(sentence)  # "Customer returns in Q1: DBY 7": each is Q1's
                for label, text in fields(CLAUSE_NUMBER.sub("", sentence) if n == 0 else sentence):
                    former = label.strip() in paired or n in olds
                    found += [replace(_labelled(place, label, item if n > lead >= 0 else titled),
                                      former=place.former or former, periods=quarters)
                              for place in _clauses(text, sentences)]
            continue
        if TABLE_RULE.match(line.strip()):
            continue
        row_number += 1
        for j, cell in enumerate(row):
            if any(_figures(cell)):
                column = header[j] if j < len(header) else ""
                place = _place(cell, f"{' '.join(row)} {column}", f"{line} {column} |",
                               (table, row_number, j) if header else None, -table)
                place = replace(place, column=frozenset(k for k, _, _ in keys(column)),
                                periods=periods(column))
                found.append(_labelled(place, "", titled))
    return tuple(found)


_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
# A clause's number opening its line ("6.1 Medical gas alarms must be tested monthly") numbers the
# clause; as a figure it would take the clause's words from the figure the clause states.
CLAUSE_NUMBER = re.compile(r"^\s*(?:#{1,6}\s+)?\d{1,2}(?:\.\d{1,2}){1,3}\.?\s+(?=[A-Z])")  # a heading's too
_YEAR = re.compile(r"(?<![\d.,])(?:19|20)\d\d(?![\d.,])")
# A clause naming the source of a figure, not its thing: "according to the corrected report", "as
# stated in the erratum", "(see the Q3 memo)".
_ATTRIBUTION = re.compile(
    r"\b(?:according to|as (?:stated|given|shown|reported|corrected|noted|listed|confirmed|set out) (?:in|by)"
    r"|as per|see|per)\s+(?:the\s+)?(?:[\w'’-]+\s+){0,4}?(?:report|erratum|errata|memo|document|policy|notes?"
    r"|minutes|table|register|file|deck|sheet|passage|source|context|text|review|log|catalogue|directory)s?\b",
    re.IGNORECASE)
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
    spans = sorted(owned(sentence), key=lambda o: o[2])
    stated = bounds(sentence)
    if len(spans) < 2:  # "will no longer take place on 11 June": the date is a former one
        return [_place(sentence, sentence, sentence, line=line, bounded=stated,
                       former=bool(spans) and bool(_NO_LONGER.search(sentence)))]
    words = [frozenset(w for w, _ in o[4]) for o in spans]
    later: dict[int, int] = {}  # a change's old side -> its new side
    former = set()
    verb = bool(_CHANGE_VERB.search(sentence))
    for i in range(len(spans) - 1):
        between = sentence[spans[i][3]:spans[i + 1][2]]
        # "from week 32 to week 34", "from 12 April to Saturday 24 May": the noun before the first
        # figure, or a weekday, may stand before the second.
        before = re.search(r"([A-Za-z]+)\s*$", sentence[:spans[i][2]])
        between = re.sub(rf"\b{before.group(1)}\s*$", "", between) if before else between
        between = _WEEKDAY.sub("", between)
        old, new = (i, i + 1) if (verb and _FROM_TO.fullmatch(between)) or _MOVED_TO.fullmatch(between) else \
            (i + 1, i) if _NOT.fullmatch(between) else (None, None)
        if old is not None:
            words[new] = words[new] | words[old]
            former.add(old)
            later[old] = new  # "from 12 May to 2 June 2025": the old side's year is the new side's
        elif _REFERS.search(between):
            words[i + 1] = words[i + 1] | words[i]
    found = [_place(sentence[o[2]:o[3]], words[k], sentence, line=line, former=k in former,
                    bounded=tuple(b for b in stated if o[2] <= b[0].start < o[3]))
             for k, o in enumerate(spans)]
    for k, new in later.items():
        year = spans[new][1][0] if spans[new][1] else None
        if year is not None:
            found[k] = replace(found[k], dates=tuple((d[0] or year, d[1], d[2]) for d in found[k].dates))
    return found


def owned(sentence: str) -> list[tuple[Amount | None, Date | None, int, int, list[tuple[str, int]]]]:
    """(figure, date, start, end, [(word, distance)]) of each figure or date of a sentence with
    the words nearer to it than to any other ("a deductible of EUR 2.5m and a limit of EUR 40m":
    "limit" is the 40m's); the sentence and the chunk split alike, so a copied sentence agrees."""
    figures, spans = _figures(sentence)
    found = [(a, None, a.start, a.end, []) for a in figures] + [(None, d, s, e, []) for d, s, e in spans]
    cited = [m.span() for m in _ATTRIBUTION.finditer(sentence)]
    # "27 customer returns in 2023": a year after its preposition qualifies what comes before it,
    # whose words are the other figure's
    after = {i: m.start() for i, (a, _, start, _, _) in enumerate(found) if a and is_year(a)
             and (m := _YEAR_PREPOSITION.search(sentence[:start]))}
    for word, s, e in keys(sentence):
        if any(a <= s < b for a, b in cited):
            continue  # "according to the corrected report" says where, not what is measured
        if found and not any(s < end and start < e for _, _, start, end, _ in found):
            blocked = {i for i, at in after.items() if e <= at and len(found) > len(after)}
            gaps = [len(sentence) if i in blocked else max(s - end, start - e, 0)
                    for i, (_, _, start, end, _) in enumerate(found)]
            nearest = gaps.index(min(gaps))
            if found[nearest][3] <= s and _CLAUSE_END.match(sentence, found[nearest][3]):
                # a figure that ends its clause takes no word of the next: in "1,140, at a
                # replacement cost of £185" the cost is the 185's, however near the 1,140
                nearest = next((i for i, (_, _, start, _, _) in enumerate(found)
                                if start >= e and i not in blocked), nearest)
            found[nearest][4].append((word, gaps[nearest]))
    # A year qualifies the sentence's other figures: in "the average score in 2024 was 78.4" the
    # year is nearer every word, and the score keeps them too.
    years = [i for i, (a, d, _, _, _) in enumerate(found)
             if (a and is_year(a)) or (a is None and d[1] is None)]
    for figure in found:
        if not figure[4] and years and figure[0] is not None and not is_year(figure[0]):
            year = min(years, key=lambda i: abs(found[i][2] - figure[2]))
            figure[4].extend((word, gap + abs(found[year][2] - figure[2])) for word, gap in found[year][4])
    return found




_CLAUSE_END = re.compile(r"[,;]\s")
_YEAR_PREPOSITION = re.compile(r"\b(?:in|for|during|over|of)\s+$", re.IGNORECASE)


def is_year(amount: Amount) -> bool:
    """Whether a bare figure is a year (\"2024\")."""
    return amount.unit is None and bool(re.fullmatch(r"(?:19|20)\d\d", amount.number))

