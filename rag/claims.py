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
from dataclasses import dataclass
from functools import lru_cache

from rag.places import CLAUSE_NUMBER, Date, Place, is_year, keys, owned, periods, places, titles
from rag.names import FILE_NAME, held, names
from rag.text import MARKER, split_sentences
from rag.units import Amount, bounds, comparisons_hold, satisfies, value

_CHANGE_CUE = re.compile(r"\b(?:from|not|instead|originally|previously|formerly|earlier|initially|"
                         r"planned|old|superseded)\b|에서|당초|기존|원래|이전|종전", re.IGNORECASE)


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
    periods: frozenset[str] = frozenset()  # the quarters its sentence names ("q3", "fy24")
    named: frozenset[str] = frozenset()  # the keys of its sentence's place names ("Leeds"): where, not what


_MONTH_NAME = re.compile(r"\s+[a-z]{3,}")  # a month before a noun: "the January board"


@lru_cache(maxsize=4096)
def claims(segment: str) -> tuple[Claim, ...]:
    """The figures and dates each sentence of the segment claims, each with the words it owns
    (list markers and citation marks are no figures: "1. The HIC15 ...", "... 3 mm [1].")."""
    found = []
    for number, sentence in enumerate(split_sentences(MARKER.sub("", segment))):
        sentence = CLAUSE_NUMBER.sub("", re.sub(r"^\s*(?:\d+[.)]|[-*•·])\s+", "", sentence))
        sentence = FILE_NAME.sub("", sentence)
        stated = {b[0].start for b in bounds(sentence)}
        coded = periods(sentence)
        # places ("Leeds"), not codes ("ENG-2024-022" is the row itself)
        scope = frozenset(k for name in names(sentence) if not any(c.isdigit() for c in name)
                          for k, _, _ in keys(name))
        for amount, date, start, end, words in owned(sentence):
            if date is not None and date[0] is None and date[2] is None \
                    and _MONTH_NAME.match(sentence[end:]) and sentence[:start].lower().endswith("the "):
                continue  # "after the January surveillance visit" names the visit, claims no date
            distance: dict[str, int] = {}
            for word, gap in words:
                distance[word] = min(distance.get(word, gap), gap)
            near = sorted(distance, key=distance.get)
            weights = tuple((word, 1 / rank) for rank, word in enumerate(near, 1))
            found.append(Claim(amount, date, weights, number, bool(_CHANGE_CUE.search(sentence)),
                               amount is not None and amount.start in stated, coded, scope))
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
             and is_year(a) == is_year(wanted)]  # a year and a score rival neither the other
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



def _bare(amount: Amount) -> bool:
    return bool(re.fullmatch(r"[\d.,]+", amount.number)) and amount.value == value(amount.number)


def _other_column(claim: Claim, place: Place) -> bool:
    """A table cell under a column named by a period ("Q2 2024", "FY24") that the claim's
    sentence, which names periods of its own, does not name."""
    return place.cell is not None and bool(place.periods) and bool(claim.periods) \
        and not place.periods & claim.periods


def _named_score(claim: Claim, place: Place, common: frozenset[str] = frozenset()) -> float:
    """The weights of the claim's words the place holds; none where it holds only the names, or
    besides them only the `common` words of the chunk's title and headings: "recorded 18
    incidents across the Leeds and Rotterdam sites" names no near misses."""
    measure = [word for word, _ in claim.words if word not in claim.named]
    if claim.named and measure and not any(word in place.words and word not in common for word in measure):
        return 0.0
    return sum(weight for word, weight in claim.words if word in place.words)


def claim_backed(claim: Claim, chunk: str) -> bool:
    """Whether a place of the chunk states the claim's figure (or date) and none gives the thing
    the claim's words name most another figure."""
    return _backing(claim, chunk) is not None


def _backing(claim: Claim, chunk: str) -> float | None:
    """How much the best place stating the claim names its thing (the claim's words' weights it
    holds), or None when no place states it or one naming the thing more gives another figure."""
    held, rivals = 0.0, []
    stated: set[int] = set()
    common = titles(chunk)
    for place in places(chunk):
        states, other = agrees(claim, place)
        if place.former and not claim.change:  # a former value is given only as one
            states, other = False, False
        if states and _other_column(claim, place):  # Q2's cell where the sentence says Q3
            states, other = False, True
        score = _named_score(claim, place, common)
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
    if not held([name for sentence in sentences for name in names(sentence)], chunk):
        return False
    backing = [(c, _backing(c, chunk)) for c in found]
    # Each figure as the chunk writes it: a case meeting its bound ("EUR 150 thousand" of "above
    # EUR 100 thousand") is the reader's inference, which a quote of the rule shows better.
    literal = all(any(agrees(c, p)[0] for p in places(chunk)) for c in found)
    return (literal and all(b is not None for _, b in backing) and any(not _year_claim(c) for c in found)
            and all(b >= NAMED for c, b in backing if not _year_claim(c))
            and comparisons_hold(segment) and coordinates_hold(found, chunk))


def _year_claim(claim: Claim) -> bool:
    return claim.amount is not None and is_year(claim.amount)
