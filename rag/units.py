"""A figure's unit and the comparisons a sentence draws between figures: part of what it claims,
which the support model, reading bare numbers, misses ("a HIC15 of 388 mm" against a row holding
388 and no unit). `units_backed`: each figure the segment gives a unit, and the chunk holds,
stands with that unit there (after it, or named by its sentence, table row or column header).
`comparisons_hold`: a comparison word between two figures of one unit ("within", "exceeded",
"이내", "초과") agrees with their order. Units are known by their spellings (`UNITS`); a word after
a number that is no unit ("12 August") claims nothing.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rag.text import TABLE_RULE, cells, split_sentences

# Each unit by its spellings; single Latin letters count only in this case ("5 s", not "50M").
UNITS: dict[str, tuple[str, ...]] = {
    "mm": ("mm", "millimetre", "millimetres", "millimeter", "millimeters", "밀리미터"),
    "cm": ("cm", "centimetre", "centimetres", "centimeter", "centimeters", "센티미터"),
    "m": ("m", "metre", "metres", "meter", "meters", "미터"),
    "km": ("km", "kilometre", "kilometres", "kilometer", "kilometers", "킬로미터"),
    "km/h": ("km/h", "kmh", "kph", "km/hr", "kilometres per hour", "kilometers per hour", "킬로미터/시"),
    "mph": ("mph", "miles per hour"),
    "mm/s": ("mm/s",),
    "m/s": ("m/s", "metres per second", "meters per second"),
    "ms": ("ms", "msec", "millisecond", "milliseconds", "밀리초"),
    "s": ("s", "sec", "secs", "second", "seconds", "초"),
    "min": ("min", "mins", "minute", "minutes", "분"),
    "h": ("h", "hr", "hrs", "hour", "hours", "시간"),
    "day": ("day", "days"),
    "g": ("g", "gram", "grams", "그램"),
    "kg": ("kg", "kilogram", "kilograms", "킬로그램"),
    "kN": ("kn", "kilonewton", "kilonewtons", "킬로뉴턴"),
    "N": ("newton", "newtons", "뉴턴"),
    "Nm": ("nm", "newton metres", "newton meters"),
    "%": ("%", "percent", "per cent", "퍼센트"),
    # Angles too: rarely swapped for temperatures.
    "°C": ("°c", "℃", "°", "degrees celsius", "degrees c", "deg c", "degrees", "degree", "도"),
    "V": ("V", "volt", "volts", "볼트"),
    "A": ("A", "amp", "amps", "ampere", "amperes", "암페어"),
    "Ah": ("ah", "amp-hours", "ampere-hours"),
    "W": ("W", "watt", "watts", "와트"),
    "kW": ("kw", "kilowatt", "kilowatts", "킬로와트"),
    "Wh": ("wh", "watt-hours"),
    "kWh": ("kwh", "kilowatt-hours", "킬로와트시"),
    "Hz": ("hz", "hertz", "헤르츠"),
    "kHz": ("khz", "kilohertz"),
    "MB": ("mb", "megabyte", "megabytes"),
    "GB": ("gb", "gigabyte", "gigabytes"),
}
_SPELLING = {spelling if len(spelling) == 1 else spelling.lower(): unit
             for unit, spellings in UNITS.items() for spelling in spellings}
_ALTERNATION = "|".join(re.escape(s) for s in sorted(_SPELLING, key=len, reverse=True))
_NUMBER = r"(?<![\w.,])\d+(?:[.,]\d+)*(?![\d])"
# A unit ends where a Latin word would go on; a Korean particle may follow a unit ("438초 만에",
# "3.1 kN이었다"), but not every syllable after 초 or 분 is one ("초과": exceeding, "분의": a fraction).
_UNIT_END = r"(?![A-Za-z0-9]|(?<=초)과|(?<=분)의)"
_FIGURE = re.compile(rf"({_NUMBER})(?:\s?({_ALTERNATION}){_UNIT_END})?", re.IGNORECASE)
_NAMED = re.compile(rf"[\[(]\s*({_ALTERNATION})\s*[\])]|(?:^|[\s_|])({_ALTERNATION})\s*(?:\||$)",
                    re.IGNORECASE)


def _unit(spelling: str | None) -> str | None:
    if not spelling:
        return None
    if len(spelling) == 1:
        return _SPELLING.get(spelling)
    return _SPELLING.get(spelling) or _SPELLING.get(spelling.lower())


def figures(text: str) -> list[tuple[str, str | None, int]]:
    """(number, unit or None, where it starts) of each figure standing alone (not "HIC15")."""
    return [(m.group(1), _unit(m.group(2)), m.start()) for m in _FIGURE.finditer(text)]


def _named_units(text: str) -> set[str]:
    """Units a text names for the figures near it: after a number, in brackets ("(mm)"), or as
    a header cell's last word ("speed_kmh", "Force kN")."""
    found = {unit for _, unit, _ in figures(text) if unit}
    for match in _NAMED.finditer(text):
        found.add(_unit(match.group(1) or match.group(2)))
    return found - {None}


@lru_cache(maxsize=4096)
def chunk_units(chunk: str) -> dict[str, frozenset[str | None]]:
    """Per number of the chunk, the units it stands with: its own (None when it has none), and
    where it has none, those named by its sentence, its table row and its column's header.
    Cached: each chunk meets every run of sentences of an answer."""
    units: dict[str, set[str | None]] = {}
    lines = chunk.splitlines()
    header: list[str] = []
    for i, line in enumerate(lines):
        row = cells(line) if line.lstrip().startswith("|") else []
        if row and i + 1 < len(lines) and TABLE_RULE.match(lines[i + 1].strip()):
            header = row
            continue
        if not row:
            header = [] if not line.strip() else header
            for sentence in split_sentences(line) or [line]:
                _collect(units, [(sentence, _named_units(sentence))])
            continue
        named = _named_units(line)
        _collect(units, [(cell, named | (_named_units(header[j] + " |") if j < len(header) else set()))
                         for j, cell in enumerate(row)])
    return {number: frozenset(found) for number, found in units.items()}


def _collect(units: dict[str, set[str | None]], places: list[tuple[str, set[str]]]) -> None:
    for text, named in places:
        for number, unit, _ in figures(text):
            units.setdefault(number, set()).update({unit} if unit else {None, *named})


def units_backed(segment: str, chunk: str) -> bool:
    """Whether every figure the segment gives a unit, and the chunk holds, stands with that unit
    in the chunk (a figure the chunk lacks is the support model's `numbers_missing`)."""
    held = chunk_units(chunk)
    return all(unit in held[number] for number, unit, _ in figures(segment) if unit and number in held)


# Comparison words: the figure before the word (English) or the first of the two before it
# (Korean) is at most (-1) or at least (+1) the other; "not" or "never" just before turns it
# (Korean negation follows the verb: its own entries), and a passive "exceeded by" swaps them.
_ENGLISH = {
    -1: ("within", "below", "under", "less than", "lower than", "smaller than", "shorter than", "fewer than",
         "beneath", "short of"),
    1: ("above", "over", "exceeded", "exceeds", "exceeding", "exceed", "more than", "greater than",
        "higher than", "larger than", "longer than", "beyond", "surpassed", "surpasses", "surpassing"),
}
_KOREAN = {-1: ("이내", "이하", "미만", "밑돌", "못 미치", "못미치", "넘지 않", "초과하지 않", "웃돌지 않"),
           1: ("초과", "웃돌", "상회", "넘었", "넘어", "넘는", "넘긴")}
_WORDS = {word: sign for table in (_ENGLISH, _KOREAN) for sign, words in table.items() for word in words}
_COMPARISON = re.compile(
    r"(?P<neg>(?:\b(?:not|never)|n't)\s+(?:\w+\s+)?)?(?<![A-Za-z])(?P<word>"
    + "|".join(re.escape(w) for w in sorted(_WORDS, key=len, reverse=True))
    + r")(?![A-Za-z])(?P<by>\s+by\b)?",
    re.IGNORECASE,
)
_TOLERANCE = re.compile(r"\s*\d+(?:[.,]\d+)*\s*\S*\s+of\b", re.IGNORECASE)  # "within 5 mm of the target"


def value(number: str) -> float:
    """"1,200" is 1200, "31,5" 31.5, "1,200.5" 1200.5."""
    if "," in number and ("." in number or re.search(r",\d{3}$", number)):
        return float(number.replace(",", ""))
    return float(number.replace(",", "."))


def comparisons_hold(segment: str) -> bool:
    """Whether each comparison the segment draws between two figures of one unit (or without
    units) agrees with their order: "142 mm, within the target of 120 mm" does not."""
    found = figures(segment)
    for match in _COMPARISON.finditer(segment):
        word = match.group("word").lower()
        sign = _WORDS[word] * (-1 if match.group("neg") else 1)
        before = [f for f in found if f[2] < match.start()]
        if word in _KOREAN[1] or word in _KOREAN[-1]:  # "142 mm로 기준 120 mm 이내": the two before it
            pair = (before[-2], before[-1]) if len(before) >= 2 else None
        elif _TOLERANCE.match(segment, match.end()):
            continue
        else:
            after = [f for f in found if f[2] >= match.end()]
            pair = (before[-1], after[0]) if before and after else None
            if pair and match.group("by"):
                pair = pair[::-1]
        if pair is None or (pair[0][1] and pair[1][1] and pair[0][1] != pair[1][1]):
            continue
        if (value(pair[0][0]) - value(pair[1][0])) * sign < 0:
            return False
    return True
