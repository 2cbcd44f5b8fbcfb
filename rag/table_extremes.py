"""The highest or lowest row of a table (rag/cells.py asks it of superlatives, best and worst):
of the column the question names (or the measure its superlative implies, or the money column a
bill asks for), among the rows of the values it names, a total row left out; a table whose columns
are the compared things compares one row's; a column of repeating values ranks their sums.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Literal

from rag.fact_tables import FactTable, label_text
from rag.facts import Fact
from rag.labels import named, words
from rag.places import dates
from rag.table_question import MONEY_ASKED, CellAnswer, TableQuestion, shown_value
from rag.units import CURRENCIES, named_units

# A row that sums or averages the others ("Total", "All sites", "합계"): no row of its own to rank
_TOTAL_ROW = re.compile(r"^\s*(?:(?:grand|sub-?)\s*total|total|all|overall|average|합계|총계|전체|평균|계)\b",
                        re.IGNORECASE)
# Measures of which less is better: "the best" of them is the lowest ("the best shrink")
_LOWER_BETTER = frozenset("""loss losses lost waste wasted shrink excursion excursions defect defects
    defective incident incidents complaint complaints refund refunds return returns cost costs spend
    downtime error errors delay delays late accident accidents injury injuries ppm breach breaches
    손실 폐기 불량 결함 사고 비용 지연 민원""".split())


# Columns that hold no compared thing's figure but a yardstick or a sum: "Target", "Limit", "Total"
_REFERENCE = frozenset("target targets limit limits threshold budget plan goal benchmark standard spec total "
                       "average avg mean median sum 목표 기준 한도 합계 평균 계".split())


def _date_order(value: str) -> tuple[int, int, int] | None:
    """A cell's one full date as (year, month, day), for ordering; None for any other cell."""
    found = dates(value)
    if len(found) != 1 or None in found[0][0]:
        return None
    return found[0][0]


def _units(column: str) -> set[str]:
    """The units a column's header names ("odometer_km": km), as a measure's words are written."""
    return {unit.lower() for unit in named_units(column)}


def extreme_row(ask: TableQuestion, kind: Literal["max", "min", "best", "worst"], tables: Sequence[FactTable],
            measure: frozenset[str] = frozenset(), time: bool = False,
            noun: str = "") -> CellAnswer | None:
    """The row of the highest (lowest) figure in the column the question names (or else the
    one column of the `measure` the superlative implies, or of a unit the question names), in
    one table, among the rows holding a value the question names ("which Karrow engagement") if
    any; of the latest
    (earliest) date where the superlative is one of `time` (or else the table's one date
    column); None when the question names a row itself (it asks about that row, not for one).
    A `noun` ("which client") naming a column whose values repeat over the rows asks for the
    value with the highest (lowest) total: a receipts log's containers summed per client. The
    best (worst) is the highest (lowest), or the lowest (highest) of a measure of which less is
    better (a loss, a defect rate). A total row is no row of its own."""
    found = []
    measure = measure | {unit for w in ask.asked for unit in _units(w)}  # "the most kilometres": km

    def order(fact: Fact) -> float | tuple[int, int, int] | None:
        return _date_order(fact.value) if time else fact.number

    for table in tables:
        ordered = {f.column for f in table.facts if order(f) is not None}  # "English-language" names
        named_ = ask.best(table.columns, table.column_names)
        columns = [c for c in named_ if c in ordered] or [  # a filter, not a measure
            c for c in table.columns if c in ordered and (set(words(c)) | _units(c)) & measure]
        if not columns:  # "hit the most customers": of the figures' columns, the one a word names
            partly = [c for c in table.columns if c in ordered and named(c, ask.asked)[2]]
            columns = partly if len(partly) == 1 else []
        money = [c for c in table.columns if c in ordered and named(c, ask.asked)[2] and any(
            f.column == c and f.unit in CURRENCIES for f in table.facts)]
        if len(money) == 1 and set(ask.asked) & MONEY_ASKED:
            columns = money  # "the biggest refund bill": "Refund value", not "Refunds (number)"
        named_column = bool(columns)
        if not columns and time and len(ordered) == 1:
            columns = sorted(ordered)  # "which asset is the oldest": the table's one date
        rows = ask.best(table.rows, table.aliases)
        if not columns and len(rows) == 1 and not time:
            found += _across(table, rows[0], order)
            continue
        if len(columns) != 1 or len(rows) == 1:
            continue
        chosen = {f.row for _, named_values, cells in ask.value_matches([table])
                  if all(column != columns[0] for column, _ in named_values) for f in cells}
        cells = [f for f in table.facts if f.column == columns[0] and order(f) is not None
                 and (not chosen or f.row in chosen) and not _TOTAL_ROW.match(label_text(f.row))]
        if len({f.row for f in cells}) >= 2:
            found.append((named_column, table, cells))
    # a table whose column the question names before one whose only date it is; two: no answer
    found = [(table, cells) for named_column, table, cells in found
             if named_column or not any(n for n, _, _ in found)]
    if len(found) != 1:
        return None
    table, cells = found[0]
    if kind in ("best", "worst"):
        lower = bool({w for w in words(cells[0].column)} & _LOWER_BETTER)
        kind = "min" if (kind == "best") == lower else "max"
    if noun and not time and (total := _total(ask, kind, table, cells, noun)) is not None:
        return total
    best = (max if kind == "max" else min)(order(f) for f in cells)
    top = [f for f in cells if order(f) == best]
    if len(top) > 1:
        return None
    fact = top[0]
    row = table.shown(fact.row)
    across = len({f.row for f in cells}) == 1  # one row's columns: "which site used the least energy"
    shown = shown_value(fact, table)
    if ask.korean:
        word = ("가장 최근인" if kind == "max" else "가장 이른") if time else (
            "가장 높은" if kind == "max" else "가장 낮은")
        text = (f"{table.subject}의 {row}에서 {word} 것은 {fact.column}({shown})입니다." if across
                else f"{table.subject}에서 {fact.column} 값이 {word} 것은 {row}({shown})입니다.")
    else:
        word = ("latest" if kind == "max" else "earliest") if time else (
            "highest" if kind == "max" else "lowest")
        text = (f"In {table.subject}, {fact.column} has the {word} {row}: {shown}." if across
                else f"In {table.subject}, {row} has the {word} {fact.column}: {shown}.")
    return CellAnswer(kind, text, (fact,))

def _across(table: FactTable, row: str, order: Callable[[Fact], float | None]
            ) -> list[tuple[bool, FactTable, list[Fact]]]:
    """A table whose columns are the things compared (sites, products: "KPI | ALW | KBW | GMH |
    Target"): the named row's figures, a target, limit or total column left out."""
    cells = [f for f in table.facts if f.row == row and f.column and order(f) is not None
             and not set(words(f.column)) & _REFERENCE]
    return [(True, table, cells)] if len(cells) >= 2 else []

def _total(ask: TableQuestion, kind: Literal["max", "min"], table: FactTable, cells: Sequence[Fact],
           noun: str) -> CellAnswer | None:
    """The value of the column the noun names with the highest (lowest) sum of the cells over
    its rows, where that column holds some value on two rows; None where none does."""
    measure = cells[0].column
    groups = [c for c in table.columns if c != measure and c and named(c, (noun,))[0] == 1]
    if len(groups) != 1:
        return None
    of = {f.row: f.value.strip() for f in table.facts if f.column == groups[0] and not f.blank}
    totals: dict[str, list[Fact]] = {}
    for fact in cells:
        if fact.row in of:
            totals.setdefault(of[fact.row], []).append(fact)
    if all(len(facts) < 2 for facts in totals.values()):
        return None  # each row its own value: the row's figure is its total
    sums = {value: sum(f.number or 0.0 for f in facts) for value, facts in totals.items()}
    best = (max if kind == "max" else min)(sums.values())
    top = [value for value, total in sums.items() if total == best]
    if len(top) != 1:
        return None
    value, facts = top[0], totals[top[0]]
    total = f"{best:,.0f}" if best == int(best) else f"{best:,.2f}"
    if ask.korean:
        word = "가장 높은" if kind == "max" else "가장 낮은"
        text = (f"{table.subject}에서 {measure} 합계가 {word} {groups[0]}는 {value}입니다"
                f"({total}, {len(facts)}행).")
    else:
        word = "highest" if kind == "max" else "lowest"
        text = (f"In {table.subject}, {groups[0]} {value} has the {word} total {measure}: {total} "
                f"over {len(facts)} rows ({table.listed([f.row for f in facts])}).")
    return CellAnswer(kind, text, tuple(facts))
