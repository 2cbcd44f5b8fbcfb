"""Where the shown sources disagree on what the answer states. For each figure or date the answer
claims (rag/claims.py), the sources that back it, and any other shown source, of a document that
no currency relation orders against the backer's (rag/currency.py), that gives the same thing
(the words the claim names most, the same unit) another figure: the Answer's `conflicts`, both
values cited, and one sentence in the answer's text ("Sources disagree: [1] gives 14%, [2] gives
12%."). An answer with no figure (a refusal) is checked for the question's thing instead: the
place that names most of the question's words. Only what the answer concerns is compared, not
every number two chunks hold. Beyond the shown sources, the next-ranked `candidates` are read
too: one that gives the thing another figure joins the sources, so the disagreement is shown
even where it ranked below the kept chunks. Where the answer gave an older version's value,
`restated` puts the current version's sentence in its place.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from rag.answer import AnswerSegment
from rag.claims import Claim, agrees, claim_backed, claims, coordinates_hold, states_former
from rag.layout import fields, following, title, unwrapped
from rag.asked import asks_figure, asks_quantity
from rag.places import Date, Place, is_year, keys, places, titles
from rag.references import marked
from rag.text import MARKER, NUMBER, TABLE_RULE, YEAR, cells, split_sentences
from rag.settings import Settings
from rag.units import FREQUENCY, Amount

# A name: a capitalised word after a sentence's first ("Solvik Mutual", "Hamburg"), or a code.
_NAME = re.compile(r"(?<=[\w,;:)] )[A-Z][A-Za-z]+|\b[A-Z]+\d[\w-]*")

# A code the sentence spells out: "TLF (Telford)", as rag/codes.py writes it into an answer.
_SPELLED = re.compile(r"\b([A-Z]{2,}[A-Z0-9-]*)\s+\(([A-Z][A-Za-z'-]+(?: [A-Z][A-Za-z'-]+){0,3})\)")

_YEAR_ASKED = re.compile(r"\b(?:when|year|years)\b|언제|연도|몇 년", re.IGNORECASE)

Newer = Callable[[str | None], list[str]]  # the documents that supersede or correct a document

_SAID = {
    "English": ("Sources disagree", "{ref} gives {value}", "; {ref} is current"),
    "Korean": ("출처마다 값이 다릅니다", "{ref}: {value}", "; 현재 기준은 {ref}"),
}


@dataclass(frozen=True)
class Conflict:
    what: str  # the words that name the thing, as the answer (or question) spells them
    values: tuple[dict[str, Any], ...]  # {value, ref, doc}, the answer's first
    current: int | None = None  # the ref currency says is current (the answer gave an older value)
    stated: str = ""  # the current source's sentence that gives its value (not in the Answer record)

    def to_dict(self) -> dict[str, Any]:
        return {"what": self.what, "values": list(self.values), "current": self.current}


def shown(claim: Claim) -> str:
    """A claim's figure or date as a reader reads it: "14%", "3 mm", "2024-09-30"."""
    if claim.date is not None:
        return "-".join(f"{p:02d}" if i else str(p) for i, p in enumerate(claim.date) if p is not None)
    amount: Amount = claim.amount
    unit = amount.unit or ""
    if unit == FREQUENCY:  # "quarterly" says its unit
        return amount.number
    return f"{amount.number}{unit}" if unit in ("", "%") else f"{amount.number} {unit}"


@dataclass(frozen=True)
class Thing:
    """What a claim's figure is of beyond its words: the question's figures its sentence repeats
    ("layer 2", "2025"; they are given, not claimed) and the names the question and the sentence
    give ("Solvik Mutual")."""

    figures: frozenset[str]
    names: frozenset[frozenset[str]]  # each name with the code it is given by, either naming it

    @classmethod
    def of(cls, sentence: str, question: str) -> Thing:
        """The thing a sentence's figure is of, with the question.

        >>> sorted(map(sorted, Thing.of("In the report, TLF (Telford) is 23.", "").names))
        [['telford', 'tlf']]
        """
        both = f"{question} {sentence}"
        given = set(NUMBER.findall(question)) & set(NUMBER.findall(sentence))
        spelled = {code.lower(): name.lower() for code, name in _SPELLED.findall(both)}
        coded = {name: code for code, name in spelled.items()}
        named = (m.lower() for m in _NAME.findall(both))
        return cls(frozenset(given), frozenset(frozenset({n, spelled.get(n, coded.get(n, n))})
                                               for n in named))

    @property
    def year(self) -> bool:
        """Whether the question's year is the sentence's: a year's figure, not a quarter's."""
        return any(YEAR.fullmatch(f) for f in self.figures)

    def named_in(self, text: str) -> bool:
        """Whether `text` names each of the names (a code spelled out in the sentence, "TLF
        (Telford)", by either)."""
        lowered = text.lower()
        return all(any(n in lowered for n in name) for name in self.names)

    def placed(self, place: Place, text: str) -> bool:
        """Whether the place's sentence or table row in `text` holds each of the figures (a year
        anywhere in the text: "the 2025 programme" is the document's)."""
        if not self.figures:
            return True
        around = {a.number for p in places(text) if _together(p, place) for a in p.amounts}
        if place.cell is not None:  # a period over the column ("Q3 2024") is the cell's
            around |= set(NUMBER.findall(_column_header(text, place.cell)))
        anywhere = set(NUMBER.findall(text))
        return all(f in around or (YEAR.fullmatch(f) and f in anywhere) for f in self.figures)


def _column_header(text: str, cell: tuple[int, int, int]) -> str:
    """The header of a table cell's column, as `places` numbers tables (from 1) and columns."""
    lines = text.splitlines()
    headers = [cells(line) for line, below in zip(lines, lines[1:])
               if line.lstrip().startswith("|") and TABLE_RULE.match(below.strip())]
    table, _, column = cell
    row = headers[table - 1] if 0 < table <= len(headers) else []
    return row[column] if column < len(row) else ""


def _together(one: Place, other: Place) -> bool:
    """The two places are one sentence, or one table row."""
    if one.cell is None or other.cell is None:
        return one.cell is other.cell is None and one.line == other.line
    return one.cell[:2] == other.cell[:2]


def _rivals(claim: Claim, text: str, thing: Thing, sentence: tuple[Claim, ...] = ()) -> list[Claim]:
    """The claims like `claim`, of the same kind and unit (a table cell's bare figure takes the
    unit its column names: "rate_on_line_pct"; a year is no count's rival), whose other figure or
    date a place of `text` gives the same thing: the claim's nearest word (in a table, its column
    header's), most of its words, its `thing`, and in a table the row the sentence's other figures
    name ("layer 1 ... 15.0%" meets layer 1's rate, not layer 2's)."""
    if replaced := _replacements(claim, text):
        return replaced
    if not thing.named_in(text):
        return []
    nearest = {word for word, weight in claim.words if weight >= 1.0}
    total = sum(weight for _, weight in claim.words)
    found = []
    # A change's new value rivals only the value it replaces ("should read 76.9, not 78.4" is no
    # rival of "31 audits").
    changes = [p for p in places(text) if p.former and p.cell is None]
    others = {p.line for p in changes} - {p.line for p in changes if agrees(claim, p)[0]}
    for place in places(text):
        # A cell measures what its column names; under a period ("Q3 2024"), what its row does.
        measured = place.column if place.cell is not None and place.column else place.words
        if not nearest & measured or sum(w for k, w in claim.words if k in place.words) < total / 2 \
                or not thing.placed(place, text) or (place.cell is None and place.line in others):
            continue
        if place.periods and not place.periods & claim.periods and (claim.periods or thing.year):
            continue  # "returns in Q1" is not the year's returns the claim gives, nor another quarter's
        if claim.date is not None:
            found += [replace(claim, date=d) for d in place.dates if d != claim.date]
        else:
            unit, year = claim.amount.unit, YEAR.fullmatch(claim.amount.number)
            found += [replace(claim, amount=replace(a, unit=unit)) for a in place.amounts
                      if a.value != claim.amount.value
                      and (a.unit == unit or (a.unit is None and place.cell and unit in place.units))
                      and (year or not (a.unit is None and YEAR.fullmatch(a.number)))]
    return [rival for rival in found if claim_backed(rival, text)
            and coordinates_hold(tuple(rival if c is claim else c for c in sentence) or (rival,), text)]


def _replacements(claim: Claim, text: str) -> list[Claim]:
    """The values that `text` puts in place of the claim's where it gives the claim's as a former
    one: the other side of that change, in its sentence ("moved from 3 March to 17 March") or in
    the next ("Printed: 78.6%" over "Correct: 76.8%"). The change itself says what they measure,
    whatever words the answer put around the figure."""
    listed = places(text)
    for old in (p for p in listed if p.former and agrees(claim, p)[0]):
        for line in (old.line, old.line + 1):  # its own sentence first
            found = []
            for new in (p for p in listed if p.line == line and not p.former and agrees(claim, p)[1]):
                if claim.date is not None:
                    found += [replace(claim, date=d) for d in new.dates if d != claim.date]
                else:
                    found += [replace(claim, amount=replace(a, unit=claim.amount.unit)) for a in new.amounts
                              if a.value != claim.amount.value
                              and (a.unit == claim.amount.unit or a.unit is None)]
            if found:
                return found
    return []


@dataclass
class ConflictFinder:
    """Finds the conflicts of one answer; `newer(doc)`: the documents currency says supersede or
    correct `doc` (rag/currency.py). Between those, the newer is the answer: no conflict, unless
    the answer gave the older's value, which is then reported with the newer as `current`."""

    newer: Newer
    enabled: bool = True

    @classmethod
    def from_settings(cls, settings: Settings, newer: Newer) -> ConflictFinder:
        return cls(newer, settings.currency.conflicts)

    def find(self, question: str, answer: str, sources: Sequence[Any], gate: str | None = None,
             candidates: Sequence[Any] = ()) -> tuple[list[Conflict], list[Any]]:
        """The conflicts among `sources` (rag.answer.Source: ref, doc, text) over the answer's
        claims, or the question's thing when the answer claims no figure; none when a gate other
        than the model's refused (`gate`: Answer.refused_by): then nothing was read. With them,
        the `candidates` (Sources numbered after `sources`) that a conflict cites, renumbered on
        from the last source: the sources to add."""
        if not self.enabled or gate not in (None, "model", "references"):
            return [], []
        asked = set(NUMBER.findall(question))  # "layer 2", "2025": given, not claimed
        # a year the answer mentions ("the 2023 launch") is what it is about, unless one is asked
        years = bool(_YEAR_ASKED.search(question))
        stated = [(c, _words(c, answer)) for c in claims(answer) if c.date or (
            c.amount and c.amount.number not in asked and (years or not is_year(c.amount)))]
        sentences = split_sentences(MARKER.sub("", answer))
        others = [*sources, *candidates] if stated else list(sources)
        if len({s.doc for s in others}) < 2:
            return [], []
        newer_than = cache(self.newer)  # the relation is read once for this answer
        found: dict[tuple, Conflict] = {}
        if not stated:  # a refusal, or an answer around a figure asked: the question's thing read
            answered = gate is None and not asks_figure(question)  # a name given ("who is ...")
            return ([] if answered else self._asked(question, sources, newer_than)), []
        for claim, what in stated:
            sentence = tuple(c for c in claims(answer) if c.sentence == claim.sentence)
            thing = Thing.of(sentences[claim.sentence], question)
            backers = [s for s in sources if claim_backed(claim, s.text)]
            for backer in backers:
                newer = newer_than(backer.doc)
                for other in others:
                    # A newer document disagrees even where it states the answer's value too ("should
                    # read EUR 180, not EUR 150"); an unordered one only where it does not.
                    # So does one that gives the answer's value as a former one ("moves from week 32
                    # to week 34"), though no currency link orders the two documents.
                    stale = other.doc in newer or (other.doc != backer.doc
                                                   and states_former(claim, other.text))
                    unordered = other.doc != backer.doc and not claim_backed(claim, other.text) \
                        and backer.doc not in newer_than(other.doc)
                    if not (stale or (unordered and backer is backers[0])):
                        continue
                    for rival in _rivals(claim, other.text, thing, sentence)[:1]:
                        if not stale and states_former(rival, backer.text):
                            continue  # the backer moved away from it: "revised from 8 hours to 10 hours"
                        values = ({"value": shown(claim), "ref": backer.ref, "doc": backer.doc},
                                  {"value": shown(rival), "ref": other.ref, "doc": other.doc})
                        key = (what, values[0]["value"], values[1]["value"])
                        found.setdefault(key, Conflict(what, values, other.ref if stale else None,
                                                       _stating(rival, other.text) if stale else ""))
        return _numbered(list(found.values()), sources, candidates)

    def _asked(self, question: str, sources: Sequence[Any], newer_than: Newer) -> list[Conflict]:
        """Where the answer claims no figure: per source, the sentence or table row naming the
        most of the question's words (more than half), and its first figure the question does not
        give (no year, no former value; else its first date); two sources of documents no
        currency relation orders whose figures, in one unit, differ disagree on the asked thing."""
        words = {k for k, _, _ in keys(question)}
        given = set(NUMBER.findall(question))  # "Scope 1 and 2 ... in 2024": the question's, not asked
        dated = not asks_quantity(question)  # "how warm did it get" is no date's question
        picks = []
        for source in sources:
            groups: dict[tuple, list[Place]] = {}
            for place in places(source.text):  # a sentence's places, or a table row's cells
                groups.setdefault(place.cell[:2] if place.cell else (place.line,), []).append(place)
            best: tuple[tuple[int, int], Any, frozenset[str]] | None = None
            titled = titles(source.text)
            for group in groups.values():
                held = words & frozenset().union(*(p.words for p in group))
                # its own words first (a title names every sentence under it), then the question's
                # own figures it holds: they tell "Scope 1 and 2" from "Scope 1"
                score = (len(held - titled),
                         len(held) + len(given & {a.number for p in group for a in p.amounts}))
                # a row's cell under the column of the question's figures ("2023/24"), else the
                # figure whose own words name most of the question's, else the first
                values = [((len(given & _header_figures(source.text, p)), len(words & p.words), -i), v)
                          for i, p in enumerate(group) if not p.former
                          for v in [*(replace(a, unit=_unit_of(a, p)) for a in p.amounts
                                      if a.number not in given and not is_year(a)),
                                    *(p.dates if dated else ())]]
                value = max(values, key=lambda v: v[0])[1] if values else None
                if value is not None and len(held) >= len(words) / 2 and (best is None or score > best[0]):
                    best = (score, value, held)
            if best is not None:
                picks.append((source, best[1], best[2]))
        found = []
        for i, (one, first, held) in enumerate(picks):
            for other, second, _ in picks[i + 1:]:
                ordered = one.doc in newer_than(other.doc) or other.doc in newer_than(one.doc)
                if one.doc == other.doc or ordered or _same_or_unlike(first, second):
                    continue
                what = " ".join(question[s:e] for k, s, e in keys(question) if k in held)
                found.append(Conflict(what, tuple({"value": _shown(v), "ref": s.ref, "doc": s.doc}
                                                  for s, v in ((one, first), (other, second)))))
        return found[:1]


def _header_figures(text: str, place: Place) -> set[str]:
    return set(NUMBER.findall(_column_header(text, place.cell))) if place.cell else set()


def _unit_of(amount: Amount, place: Place) -> str | None:
    """A figure's unit, or the one its cell's or field's label names ("Compliance (%)")."""
    if amount.unit or not (place.cell or place.field) or len(place.units) != 1:
        return amount.unit
    return next(iter(place.units))


def _same_or_unlike(first: Amount | Date, second: Amount | Date) -> bool:
    """The two values agree, or are of different kinds or units: no disagreement."""
    if isinstance(first, Amount) != isinstance(second, Amount):
        return True
    if isinstance(first, Amount):
        return first.unit != second.unit or first.value == second.value
    return all(a is None or b is None or a == b for a, b in zip(first, second))  # "7 Dec" is 2024-12-07


def _shown(value: Amount | Date) -> str:
    return shown(Claim(value, None, ()) if isinstance(value, Amount) else Claim(None, value, ()))


def _stating(claim: Claim, text: str) -> str:
    """The first sentence or list item of `text` that states the claim (no heading, no table row:
    a row read alone loses its header), or ""."""
    lines = unwrapped(text.splitlines())  # a hard-wrapped sentence whole
    for i, line in enumerate(lines):
        line = re.sub(r"^\s*(?:\d+[.)]|[-*•·])\s+", "", line)
        if line.lstrip().startswith(("#", "|")):
            continue
        for sentence in split_sentences(line):
            if claim_backed(claim, sentence):
                # a field read alone loses the title it stands under: "Correction 1 - Kraków occupancy"
                over = next((heading.group(1).strip() for j in range(i - 1, max(i - 4, -1), -1)
                             if (heading := title(lines[j], following(lines, j)))), "") \
                    if fields(sentence)[0][0] else ""
                return f"{over}. {sentence.strip()}" if over else sentence.strip()
    return ""


def restated(text: str, segments: list[AnswerSegment], conflicts: Sequence[Conflict],
             sources: Sequence[Any]) -> tuple[str, list[AnswerSegment]]:
    """The answer with each supported segment that gives an older version's value (a conflict
    with `current`) replaced by the current source's sentence that gives its value, cited to it
    at 1.0: the answer is the current version's, and the conflict's note still says what the
    older one gave. Unchanged where no such sentence was found. The segment may cite another
    source of the older value than the conflict's ("scheduled for 11 June" cited to the minutes
    that repeat the notice a memo postpones)."""
    stale = [c for c in conflicts if c.current and c.stated]
    out = []
    for segment in segments:
        fix = next((c for c in stale if segment.supported
                    and all(r.ref != c.current for r in segment.references)
                    and any(shown(claim) == c.values[0]["value"] for claim in claims(segment.text))), None)
        source = fix and next((s for s in sources if s.ref == fix.current), None)
        out.append(segment if source is None else AnswerSegment(
            marked(fix.stated, [source.ref]), segment.sentences, True, [source.reference(1.0)]))
    if out == segments:
        return text, segments
    return " ".join(segment.text for segment in out), out


def _numbered(conflicts: list[Conflict], sources: Sequence[Any],
               candidates: Sequence[Any]) -> tuple[list[Conflict], list[Any]]:
    """The conflicts with each cited candidate renumbered on from the last source, and those
    candidates so numbered."""
    cited = {v["ref"] for c in conflicts for v in c.values}
    joining = [c for c in candidates if c.ref in cited]
    added = [replace(c, ref=len(sources) + i) for i, c in enumerate(joining, 1)]
    refs = {old.ref: new.ref for old, new in zip(joining, added)}
    conflicts = [replace(c, values=tuple({**v, "ref": refs.get(v["ref"], v["ref"])} for v in c.values),
                         current=refs.get(c.current, c.current)) for c in conflicts]
    return conflicts, added


def _words(claim: Claim, answer: str) -> str:
    """The answer's words, as spelled, that name what the claim's figure measures (its nearest
    three keys)."""
    sentences = split_sentences(MARKER.sub("", answer))
    sentence = sentences[claim.sentence] if claim.sentence < len(sentences) else answer
    near = {word for word, weight in claim.words if weight > 0.3}
    return " ".join(dict.fromkeys(sentence[s:e] for k, s, e in keys(sentence) if k in near))


def said(text: str, conflicts: Sequence[Conflict], language: str) -> str:
    """The answer's text with one sentence per conflict: "Sources disagree: [1] gives 14, [2] gives 12."."""
    lines = [_line(c, language) for c in conflicts]
    return " ".join([text, *lines]) if lines else text


def disagreement(conflicts: Sequence[Conflict], sources: Sequence[Any],
                 language: str) -> tuple[str, list[AnswerSegment]]:
    """The answer where the model wrote none the sources back but they give the asked thing two
    values: one sentence per conflict, cited to both sources at 1.0 (read, not matched)."""
    by_ref = {s.ref: s for s in sources}
    segments = [AnswerSegment(_line(c, language), [i, i], True,
                              [by_ref[v["ref"]].reference(1.0) for v in c.values if v["ref"] in by_ref])
                for i, c in enumerate(conflicts)]
    return " ".join(s.text for s in segments), segments


def _line(conflict: Conflict, language: str) -> str:
    lead, each, current = _SAID.get(language, _SAID["English"])
    return (f"{lead}{f' ({conflict.what})' if conflict.what else ''}: "
            + ", ".join(each.format(ref=f"[{v['ref']}]", value=v["value"]) for v in conflict.values)
            + (current.format(ref=f"[{conflict.current}]") if conflict.current else "") + ".")
