"""Where the shown sources disagree on what the answer states. For each figure or date the answer
claims (rag/claims.py), the sources that back it, and any other shown source, of a document that
no currency relation orders against the backer's (rag/currency.py), that gives the same thing
(the words the claim names most, the same unit) another figure: the Answer's `conflicts`, both
values cited, and one sentence in the answer's text ("Sources disagree: [1] gives 14%, [2] gives
12%."). An answer with no figure (a refusal) is checked for the question's thing instead: the
place that names most of the question's words. Only what the answer concerns is compared, not
every number two chunks hold.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from rag.claims import Claim, claim_backed, claims, keys, places
from rag.text import MARKER, split_sentences
from rag.settings import Settings
from rag.units import Amount

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

    def to_dict(self) -> dict[str, Any]:
        return {"what": self.what, "values": list(self.values), "current": self.current}


def shown(claim: Claim) -> str:
    """A claim's figure or date as a reader reads it: "14%", "3 mm", "2024-09-30"."""
    if claim.date is not None:
        return "-".join(f"{p:02d}" if i else str(p) for i, p in enumerate(claim.date) if p is not None)
    amount: Amount = claim.amount
    unit = amount.unit or ""
    return f"{amount.number}{unit}" if unit in ("", "%") else f"{amount.number} {unit}"


def _rivals(claim: Claim, text: str) -> list[Claim]:
    """The claims like `claim`, of the same kind and unit, whose other figure or date a place of
    `text` gives the thing the claim's nearest word names."""
    nearest = {word for word, weight in claim.words if weight >= 1.0}
    total = sum(weight for _, weight in claim.words)
    found = []
    for place in places(text):
        # The same thing: its nearest word and most of the claim's words.
        if not nearest & place.words or sum(w for k, w in claim.words if k in place.words) < total / 2:
            continue
        if claim.date is not None:
            found += [replace(claim, date=d) for d in place.dates if d != claim.date]
        else:
            found += [replace(claim, amount=a) for a in place.amounts
                      if a.unit == claim.amount.unit and a.value != claim.amount.value]
    return [rival for rival in found if claim_backed(rival, text)]


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

    def find(self, question: str, answer: str, sources: Sequence[Any],
             gate: str | None = None) -> list[Conflict]:
        """The conflicts among `sources` (rag.answer.Source: ref, doc, text) over the answer's
        claims, or the question's thing when the answer claims no figure; none when a gate other
        than the model's refused (`gate`: Answer.refused_by): then nothing was read."""
        if not self.enabled or gate not in (None, "model") or len({s.doc for s in sources}) < 2:
            return []
        stated = [(c, _words(c, answer)) for c in claims(answer) if c.amount or c.date]
        newer_than = cache(self.newer)  # the relation is read once for this answer
        found: dict[tuple, Conflict] = {}
        for claim, what in stated or self._asked(question, sources):
            backers = [s for s in sources if claim_backed(claim, s.text)]
            for backer in backers:
                newer = newer_than(backer.doc)
                for other in sources:
                    # A newer document disagrees even where it states the answer's value too ("should
                    # read EUR 180, not EUR 150"); an unordered one only where it does not.
                    stale = other.doc in newer
                    unordered = other.doc != backer.doc and other not in backers \
                        and backer.doc not in newer_than(other.doc)
                    if not (stale or (unordered and backer is backers[0])):
                        continue
                    for rival in _rivals(claim, other.text)[:1]:
                        values = ({"value": shown(claim), "ref": backer.ref, "doc": backer.doc},
                                  {"value": shown(rival), "ref": other.ref, "doc": other.doc})
                        key = (what, values[0]["value"], values[1]["value"])
                        found.setdefault(key, Conflict(what, values, other.ref if stale else None))
        return list(found.values())

    def _asked(self, question: str, sources: Sequence[Any]) -> list[tuple[Claim, str]]:
        """The question's thing as a claim: the first figure of the place, among the sources, that
        names most of the question's words (at least half of them)."""
        words = {k for k, _, _ in keys(question)}
        best, score = None, len(words) / 2
        for source in sources:
            for place in places(source.text):
                if (place.amounts or place.dates) and len(words & place.words) > score:
                    best, score = place, len(words & place.words)
        if best is None:
            return []
        weights = tuple((word, 1.0) for word in sorted(words & best.words))
        amount = best.amounts[0] if best.amounts else None
        claim = Claim(amount, None if amount else best.dates[0], weights)
        what = " ".join(question[s:e] for k, s, e in keys(question) if k in best.words)
        return [(claim, what)]


def _words(claim: Claim, answer: str) -> str:
    """The answer's words, as spelled, that name what the claim's figure measures (its nearest
    three keys)."""
    sentences = split_sentences(MARKER.sub("", answer))
    sentence = sentences[claim.sentence] if claim.sentence < len(sentences) else answer
    near = {word for word, weight in claim.words if weight > 0.3}
    return " ".join(dict.fromkeys(sentence[s:e] for k, s, e in keys(sentence) if k in near))


def said(text: str, conflicts: Sequence[Conflict], language: str) -> str:
    """The answer's text with one sentence per conflict: "Sources disagree: [1] gives 14, [2] gives 12."."""
    lead, each, current = _SAID.get(language, _SAID["English"])
    lines = [f"{lead}{f' ({c.what})' if c.what else ''}: "
             + ", ".join(each.format(ref=f"[{v['ref']}]", value=v["value"]) for v in c.values)
             + (current.format(ref=f"[{c.current}]") if c.current else "") + "."
             for c in conflicts]
    return " ".join([text, *lines]) if lines else text
