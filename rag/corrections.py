"""Which side of a correction a text gives, so a reader sees the value in force: a field pair
("Printed: 78.6%" over "Correct: 76.8%"; "Published:", "Stated in the report:"), and an erratum
written as prose, one numbered item per correction, whose label names what its sentences are
about and whose "The report states 1,284." gives the value it corrects. rag/places.py reads the
old side as former (no claim rests on it); rag/context.py shows the model the value in force
alone.

>>> item = ["2. Written customer complaints.", "The report states 1,284.",
...         "Complaints by web chat were left out.", "The corrected figure is 1,348."]
>>> lead_label(item), former_sentences(item)
((0, 'Written customer complaints'), {1})
>>> lead_label(["2.", "Written customer complaints.", "The report states 1,284."])
(1, 'Written customer complaints')
>>> former_sentences(["The report states 1,284 complaints.", "Complaints rose in Q4."])
set()
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag.layout import LIST_NUMBER, fields
from rag.text import YEAR
from rag.units import figures, value

# A field label naming the value a correction or change replaces.
_OLD_SIDE = re.compile(r"(?:printed|published|reported|was|old|incorrect|wrong|previously|"
                       r"previous(?: value)?|original(?:ly)?|before|stated|formerly|정정 전|기존|변경 전)"
                       r"(?:\s+(?:in|as|on)\b.*)?", re.IGNORECASE)
# A field label giving the value in force: only beside one is an old side's label a correction
# ("Published: 15 October 2024" alone dates a document).
_NEW_SIDE = re.compile(r"(?:correct|corrected|correction|revised|amended|should read|now|new|actual|current|"
                       r"updated|after|정정 후|변경 후)\b", re.IGNORECASE)
# The corrected document's own words: "the report states 38.4", "was printed as", "incorrectly".
_STATES_OLD = re.compile(
    r"\b(?:the (?:report|document|table|original|publication|deck|notice|text|summary|release)"
    r"(?: \w+)? (?:states|stated|says|said|gives|gave|shows|showed|reads|read|printed|reported|lists|listed)"
    r"|(?:was|were|is|are) (?:printed|published|given|stated|shown|reported|listed) as"
    r"|(?:printed|published) as"
    r"|incorrectly|erroneously|in error)\b|(?:보고서|원문)에는|잘못", re.IGNORECASE)
# The correction itself; only a paragraph that gives one has a former side.
_CORRECTION = re.compile(
    r"\b(?:correct(?:ed)? (?:figure|value|number|total|amount|date|rate|count)|should (?:read|be|have been)"
    r"|corrected to|the correct|revised (?:figure|value))\b|정정|바로잡", re.IGNORECASE)
# A correction as a pair of fields, read as one sentence: "Reported: 3.8 % Corrected: 1.9 %".
_FIELD_PAIR = re.compile(r"\b(?:reported|printed|published|stated|was|old|previous|original|incorrect)"
                         r"(?: value| figure| amount)?\s*:.*\b(?:correct|corrected|revised|amended|new|now|"
                         r"actual)(?: value| figure| amount)?\s*:"
                         r"|정정 전\s*:.*정정 후\s*:", re.IGNORECASE | re.DOTALL)
_FIELD_END = re.compile(r"(?: value| figure| amount)?\s*:")  # "Corrected:", "Corrected value:"
_VERBS = frozenset("is are was were be been has have had will would must should may can do does did".split())
_NUMBER_ALONE = re.compile(r"\s*\d{1,3}[.)]\s*")
_DIGIT = re.compile(r"\d")


def in_force(labels: Sequence[str]) -> str | None:
    """Of a change table's column labels, the one giving the value in force ("Revised date" beside
    "Previous date"); None unless exactly one new side stands beside an old side."""
    def starts(pattern: re.Pattern, label: str) -> bool:
        found = pattern.match(label.strip())  # a whole word: "was", not "Washington"
        return bool(found) and not label.strip()[found.end():found.end() + 1].isalpha()
    new = [label for label in labels if starts(_NEW_SIDE, label)]
    return new[0] if len(new) == 1 and any(starts(_OLD_SIDE, label) for label in labels) else None


def corrected_figure(sentence: str, old: float, unit: str) -> str | None:
    """The figure, as written, that a correction gives in place of the value `old` (in `unit`, ""
    for none): the sentence says it corrects, holds `old`, and holds one other figure in that unit,
    or several, of which those following the correction's words are its candidates and the one
    nearest `old` is its correction (a paragraph may correct a second figure after the first).

    >>> corrected_figure("Pile TP-3, settlement at working load: the value should read 8.9 mm "
    ...                  "(Issue 1 incorrectly gave 6.4 mm).", 6.4, "mm")
    '8.9'
    >>> corrected_figure("TP-3 settled 6.4 mm, within the 10 mm limit.", 6.4, "mm") is None
    True
    >>> corrected_figure("Pump P-3 noise Reported: 74 Corrected: 79 Reason: read at 1 m", 74, "")
    '79'
    >>> corrected_figure("Pallets handled in 2023 were printed as 412,300.", 412300, "") is None
    True
    >>> corrected_figure("Pallets handled in 2023 were printed as 412,300. The correct figure is 421,300.",
    ...                  412300, "")
    '421,300'
    >>> corrected_figure("Published value: 18,420 MWh Corrected value: 16,840 MWh. The total changes from "
    ...                  "27,310 MWh to a corrected value of 25,730 MWh.", 27310, "MWh")
    '25,730'
    """
    if not (_CORRECTION.search(sentence) or _STATES_OLD.search(sentence) or _FIELD_PAIR.search(sentence)):
        return None
    # in its unit, or bare where fields give it ("Printed value: 12.4", the unit in the label)
    # a year is the figure's period ("pallets handled in 2023 were printed as 412,300"), unless
    # the value corrected is one
    found = [(number, start) for number, their_unit, start in figures(sentence)
             if (not unit or not their_unit or their_unit.lower() == unit.lower())
             and not (YEAR.fullmatch(number) and not YEAR.fullmatch(f"{old:g}"))]
    if not any(value(number) == old for number, _ in found):
        return None
    others = [(number, start) for number, start in found if value(number) != old]
    if len(others) > 1:  # "should read 8.9 mm, within the 10 mm limit": the one after the correction
        cues = [m.end() for m in _CORRECTION.finditer(sentence)] + [  # a new side's field: "Corrected:"
            m.end() for m in _NEW_SIDE.finditer(sentence) if _FIELD_END.match(sentence, m.end())]
        others = [(number, start) for number, start in others if any(0 <= start - end <= 12 for end in cues)]
    # "Published value: 18,420 MWh / Corrected value: 16,840 MWh", then a consequence's pair: the
    # correction set nearest the old figure
    old_at = min((start for number, start in found if value(number) == old), default=0)
    others.sort(key=lambda other: (abs(other[1] - old_at), other[1] < old_at))  # a tie: the one after
    return others[0][0] if others else None


def former_sentences(sentences: Sequence[str]) -> set[int]:
    """The indices of a paragraph's sentences that give the corrected document's value, where
    another of its sentences gives the correction (see the module's example)."""
    if not any(_CORRECTION.search(s) for s in sentences):
        return set()
    return {i for i, s in enumerate(sentences)
            if _STATES_OLD.search(s) and not _CORRECTION.search(s) and _DIGIT.search(s)}


def lead_label(sentences: Sequence[str]) -> tuple[int, str]:
    """(which sentence, the label) of a list item whose first sentence is a bare label of a few
    words without a figure ("2. Written customer complaints."; its number may be split off as a
    sentence of its own): what the item's later sentences are about; else (-1, "")."""
    first = 1 if sentences and _NUMBER_ALONE.fullmatch(sentences[0]) else 0
    if len(sentences) < first + 2 or not (first or LIST_NUMBER.match(sentences[0])):
        return -1, ""
    label = LIST_NUMBER.sub("", sentences[first]).strip().rstrip(".:")
    words = label.split()
    # a noun phrase: no figure, and no verb ("1. All values stayed below their limits.")
    verb = any(w.lower() in _VERBS or (i and w.endswith("ed")) for i, w in enumerate(words))
    return (first, label) if 0 < len(words) <= 6 and not verb and not _DIGIT.search(label) else (-1, "")


def item_label(sentences: Sequence[str]) -> tuple[int, str]:
    """`lead_label`, else the label its printed figure's sentence opens with: what an erratum
    item's sentences are about, when that sentence is not shown.

    >>> item_label(["2.", "Lancaster (LNC), defects ppm 2023: published as 412 ppm.",
    ...             "Corrected value: 214 ppm."])
    (-1, 'Lancaster (LNC), defects ppm 2023')
    """
    at, label = lead_label(sentences)
    if label:
        return at, label
    for i in sorted(former_sentences(sentences)):
        before, colon, _ = sentences[i].partition(":")
        if colon and 0 < len(before.split()) <= 8:
            return -1, LIST_NUMBER.sub("", before).strip()
    return -1, ""


def old_sides(lines: Sequence[str]) -> list[set[str]]:
    """Per line, the labels of its fields that give a correction's old side: an old side's label
    ("Printed", "Published", "Stated in the report") with a field of the value in force on its
    line or within the next two.

    >>> old_sides(["Published: 1,284,000", "Correct: 1,248,000", "Published: 15 October 2024"])
    [{'Published'}, set(), set()]
    >>> old_sides(["Reported: 2.4", "Corrected: 1.4", "Reason: a sigma of 0.65 % was used"])
    [{'Reported'}, set(), set()]
    """
    labels = [[label.strip() for label, _ in fields(line.strip()) if label] for line in lines]
    new = [any(_NEW_SIDE.match(label) for label in found) for found in labels]
    return [{label for label in found if _OLD_SIDE.fullmatch(label)} if any(new[i:i + 3]) else set()
            for i, found in enumerate(labels)]


def current_fields(lines: Sequence[str]) -> list[str]:
    """A block's lines without the fields that give a correction's or change's former value, when
    the block also gives the value in force; the small model reads the wrong side of a pair often.

    >>> current_fields(["Stated in the report: EUR 33.1M", "Corrected ARR figure: EUR 32.6M"])
    ['Corrected ARR figure: EUR 32.6M']
    >>> current_fields(["Printed: 78.6%"])
    ['Printed: 78.6%']
    """
    read, olds = [fields(line.strip()) for line in lines], old_sides(lines)
    if not all(pairs[0][0] for pairs in read) or not any(olds):
        return [line.strip() for line in lines]
    kept = [[(label, value) for label, value in pairs if label.strip() not in old]
            for pairs, old in zip(read, olds)]
    return [" ".join(f"{label}: {value}" for label, value in pairs) for pairs in kept if pairs]
