"""An erratum's corrections carried into the document it corrects, as the context shows it: the
report's own sentence or table row still gives the printed figure, which the small model repeats
however plainly the erratum beside it is marked "corrects [2]". Each numbered item of an erratum
that says what it is about ("Lancaster (LNC), defects ppm 2023"), the figure printed and the one
in force, replaces that figure in the corrected document's units that name the same thing.

>>> item = ("2. Lancaster (LNC), defects ppm 2023: published as 412 ppm. Corrected value: 214 ppm. "
...         "Lancaster's defect rate therefore fell in 2023 (2022: 377 ppm).")
>>> [fix] = errata(item)
>>> fix.applied("The defect rate increased to 412 ppm, driven by bridging.", ("3.3 Lancaster",))
'The defect rate increased to 214 (corrected) ppm, driven by bridging.'
>>> pairs = [("Site", "LNC"), ("Downtime h", "412"), ("Defects ppm 2023", "412"), ("Returns 2023", "12")]
>>> fix.applied("; ".join(f"{c}: {v}" for c, v in pairs), (), pairs)
'Site: LNC; Downtime h: 412; Defects ppm 2023: 214 (corrected); Returns 2023: 12'
>>> fix.applied("The defect rate increased to 412 ppm.", ("3.1 Derby",))  # another site's 412
'The defect rate increased to 412 ppm.'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.corrections import corrected_figure, former_sentences, item_label
from rag.labels import content, same
from rag.text import YEAR, split_sentences
from rag.units import amounts, figures, value

# The names an item is about: a capitalised word or a code ("Lancaster", "LNC", "TP-3").
_NAME = re.compile(r"\b(?:[A-Z][A-Za-z]+|[A-Z0-9]+(?:-[A-Z0-9]+)+)\b")


@dataclass(frozen=True)
class Correction:
    """One figure an erratum item corrects: the names the item is about, its label's words, the
    figure printed (`old`, in `unit`) and the figure in force as written (`new`)."""

    names: frozenset[str]
    label: tuple[str, ...]
    old: float
    unit: str
    new: str

    def applied(self, text: str, lead: Sequence[str], pairs: Sequence[tuple[str, str]] | None = None) -> str:
        """The unit's text with the printed figure replaced, where the unit (or the heading over
        it) names what the item is about; in a row's `column: value` `pairs` (as
        rag/context.py's `row_pairs` reads the unit), only in the column the item's label names."""
        said = {w.lower() for w in re.findall(r"[\w-]+", " ".join([text, *lead]))}
        if not self.names & said:
            return text
        if pairs:
            return "; ".join(f"{column}: {self._replaced(value) if self._names(column) else value}"
                             for column, value in pairs)
        return self._replaced(text)

    def _names(self, column: str) -> bool:
        return any(same(w, label) or same(label, w) for w in content(column) for label in self.label)

    def _replaced(self, text: str) -> str:
        out, end = [], 0
        for amount in amounts(text):
            if amount.value == self.old and (amount.unit or "") in ("", self.unit) \
                    and not YEAR.fullmatch(amount.number):
                out += [text[end:amount.start], self.new, text[amount.start + len(amount.number):amount.end],
                        " (corrected)"]
                end = amount.end
        return "".join(out) + text[end:]


def errata(text: str) -> list[Correction]:
    """The corrections of an erratum's paragraphs: each paragraph whose sentences state a printed
    figure ("published as 412 ppm", "the report states 1,284") beside its correction."""
    found = []
    for paragraph in re.split(r"\n\s*\n", text):
        one = " ".join(paragraph.split())
        sentences = split_sentences(one)
        olds = former_sentences(sentences)
        if not olds:
            continue
        label = item_label(sentences)[1]
        names = frozenset(n.lower() for n in _NAME.findall(label))
        if not names:
            continue  # an item that names nothing is applied to nothing
        for i in sorted(olds):
            for number, unit, _ in figures(sentences[i]):
                if YEAR.fullmatch(number):
                    continue
                new = corrected_figure(one, value(number), unit or "")
                if new is not None:
                    found.append(Correction(names, content(label), value(number), unit or "", new))
    return found
