"""Rows counted by a figure's bound (rag/cells.py asks it of "how many" questions that give one):
"in how many quarters did SWD's compliance drop below 99%" is the rows of SWD whose compliance is
under 99, counted and listed, each a cited cell. Ours: a table's rows are no text a model can
count reliably, and no library reads a bound out of a question.

>>> Bound.of("In how many quarters did compliance drop below 99%?")
Bound(op='<', number=99.0, said='below 99')
>>> Bound.of("how many sites had 3 or more incidents")
Bound(op='>=', number=3.0, said='3 or more')
>>> Bound.of("불량률이 2% 이상인 라인은 몇 개입니까?")
Bound(op='>=', number=2.0, said='2 이상')
>>> Bound.of("how many audits raised at least one major finding") is None  # a word, no figure
True
"""

from __future__ import annotations

import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.fact_tables import FactTable
from rag.labels import same, words
from rag.table_question import CellAnswer, TableQuestion, conditions

_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_BEFORE = {  # the words before a figure, by the bound they set
    "<": r"below|under|less than|fewer than|lower than|beneath",
    "<=": r"at most|no more than|not more than|up to",
    ">": r"above|over|more than|greater than|higher than|exceed(?:s|ed|ing)?",
    ">=": r"at least|no less than|not less than",
}
_AFTER = {"<": r"미만", "<=": r"or (?:less|fewer|below)|이하", ">": r"초과",
          ">=": r"or (?:more|above|over)|이상"}
_NUMBER = r"(\d[\d,]*(?:\.\d+)?)\s*(?:%|per ?cent|percent)?"
_PATTERNS = [(op, re.compile(rf"\b({words})\s+(?:of\s+)?{_NUMBER}", re.IGNORECASE))
             for op, words in _BEFORE.items()] + [
    (op, re.compile(rf"(?<![\w.,]){_NUMBER}\s*({words})", re.IGNORECASE)) for op, words in _AFTER.items()]


@dataclass(frozen=True)
class Bound:
    """A bound the question sets on a figure: its comparison, its number and its words."""

    op: str
    number: float
    said: str

    @classmethod
    def of(cls, question: str) -> Bound | None:
        for op, pattern in _PATTERNS:
            if match := pattern.search(question):
                figure = next(g for g in match.groups() if g and g[0].isdigit())
                words = next(g for g in match.groups() if g and not g[0].isdigit())
                said = f"{words.lower()} {figure}" if match.group(1) == words else f"{figure} {words.lower()}"
                return cls(op, float(figure.replace(",", "")), said)
        return None

    def holds(self, number: float) -> bool:
        return _OPS[self.op](number, self.number)


def bounded_count(ask: TableQuestion, bound: Bound, tables: Sequence[FactTable]) -> CellAnswer | None:
    """How many rows of one table have a figure within the bound in the one figure column the
    question names, among the rows holding the values it names ("SWD's compliance": site_code
    SWD); None unless exactly one table gives such a column, or where the question names one row
    (it asks about that row: the annual table's SWD row, not the quarters')."""
    found = []
    for table in tables:
        if len(table.rows) < 2 or len(ask.best(table.rows, table.aliases)) == 1:
            continue
        figures = [c for c in table.columns
                   if c and any(f.column == c and f.number is not None for f in table.facts)]
        columns = ask.best(figures, table.column_names)
        if len(columns) != 1:
            continue
        matches = [(named, cells) for t, named, cells in ask.value_matches([table])
                   if all(column != columns[0] for column, _ in named)]
        chosen = {f.row for f in matches[0][1]} if matches else set(table.rows)
        # a word of the question that some rows' names hold: "SWD's" is rows "SWD 2024-Q1".."Q4"
        names = {row: set(words(" ".join(table.aliases.get(row, (row,))))) for row in chosen}
        for asked in ask.asked:
            holding = {row for row, held in names.items() if any(same(w, asked) for w in held)}
            chosen = holding if holding and holding != set(names) else chosen
        cells = [f for f in table.facts
                 if f.column == columns[0] and f.row in chosen and f.number is not None]
        found.append((table, matches[0][0] if matches else [], cells))
    if len(found) != 1 or not found[0][2]:
        return None
    table, named, cells = found[0]
    within = [f for f in cells if bound.holds(f.number or 0.0)]
    column = cells[0].column
    rows = table.listed([f.row for f in within]) if within else ""
    where = f"{conditions(named, ask.korean)}, " if named else ""
    if ask.korean:
        text = f"{table.subject}에서 {where}{column} 값이 {bound.said}인 행은 {len(within)}개입니다" + (
            f" ({rows})." if rows else ".")
    else:
        text = (f"In {table.subject}, {where}{len(within)} of {len(cells)} rows have {column} "
                f"{bound.said}" + (f": {rows}." if rows else "."))
    return CellAnswer("count", text, tuple(within or cells))
