"""Cells reached across two registers through an id one gives and the other labels its rows by
(rag/cells.py asks these after no one table answers): "the annual value of the contract Helen
Okafor manages" goes from the staff roster's S012 to the contracts row whose Mgr_ID is S012
(`joined`); "the Daejeon chiller contract's manager, and their job title" from the contract's
contract_manager_id S1017 to the roster's row S1017 (`through`), "the 2023 FPY at the plant
Priya Ramanathan runs" from the site register's row TLF, by its own label, to the report's TLF,
and "the technician on WO-24-0192 - when does their IPC-A-610 certificate expire" from the work
order's technician.employee_id T-0301 to the training register's rows holding it as employee_id,
one per certificate: the IPC-A-610 one."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from rag.facts import Fact
from rag.fact_tables import FactTable
from rag.labels import is_code, named
from rag.table_question import CellAnswer, TableQuestion, conditions, shown_value


def keys(ask: TableQuestion, tables: Sequence[FactTable]) -> list[str]:
    """The ids of the rows the question names by their values ("Helen Okafor": S012): what
    another register may give in a column of its own."""
    return list(dict.fromkeys(row for t in tables for row in ask.valued(t) if is_code(row.lower())))


def joined(ask: TableQuestion, tables: Sequence[FactTable]) -> CellAnswer | None:
    """A cell of one register reached through another's id: "the annual value of the contract
    Helen Okafor manages" is the contracts register's Ann_Val_GBP on the row whose Mgr_ID is
    S012, the staff roster's id of the row holding Helen Okafor. One such cell, or None."""
    picked = []
    for first in tables:
        rows = ask.valued(first)
        if len(rows) != 1 or not is_code(rows[0].lower()):
            continue
        for second in (t for t in tables if (t.doc, t.key) != (first.doc, first.key)):
            holding = {f.row: f for f in second.facts if f.column and f.value.strip() == rows[0]}
            if len(holding) != 1:
                continue
            (row, via), = holding.items()
            columns = [c for c in ask.best(second.columns, second.column_names) if c != via.column]
            if len(columns) > 1:  # "Ann_Val_GBP | Ann_Val_KRW_m": the one the row fills
                columns = [c for c in columns if any(f.row == row and f.column == c and not f.blank
                                                     for f in second.facts)]
            if len(columns) == 1:
                picked += [(first, second, via, f) for f in second.facts
                           if f.row == row and f.column == columns[0]]
    if len(picked) != 1:
        return None
    first, second, via, fact = picked[0]
    bridge = next(f for f in first.facts if f.row == via.value.strip())
    by = conditions(ask.value_matches([first])[0][1], ask.korean)
    row = second.shown(fact.row)
    value = ("비어 있습니다" if ask.korean else "blank: the table gives no value") if fact.blank \
        else shown_value(fact, second)
    said = (f"{second.subject}에서 {via.column} 값이 {via.value}({first.subject}에서 {by})인 {row}의 "
            f"{fact.column} 값은 {value}." if ask.korean else
            f"In {second.subject}, {row}, whose {via.column} is {via.value} ({by} in {first.subject}), "
            f"has {fact.column} {value}.")
    return CellAnswer("blank" if fact.blank else "cell", said, (fact, bridge))


def through(ask: TableQuestion, tables: Sequence[FactTable], wanted: Sequence[str] = ()) -> CellAnswer | None:
    """A cell of another register reached from the row the question names by the id one of
    its cells holds: "the Daejeon chiller contract's manager, and their job title" is the staff
    roster's job_title on the row S1017, the contract's contract_manager_id. The other
    register's column is the one it names most (no share needed: the id already chose the
    row); where two of the row's ids reach a named column, the one whose column is named."""
    picked = []
    for first in tables:
        rows = ask.best(first.rows, first.aliases) or ask.valued(first)
        if len(rows) != 1:
            continue
        # an id is one token: "Floor 4 handover", a milestone's name, leads nowhere
        vias = [f for f in first.facts if f.row == rows[0] and f.number is None
                and is_code(f.value.strip().lower()) and " " not in f.value.strip()
                and f.value.strip().lower() not in ask.asked]
        if rows[0].lower() not in ask.asked:
            # a row named by another of its names ("the plant Priya Ramanathan runs" is TLF) leads
            # by its own label too: another register's rows may be labelled by it
            cell = next(f for f in first.facts if f.row == rows[0])
            vias.append(replace(cell, column=first.label, value=rows[0]))
        for via in (v for v in vias if not _other_of_form(v.value, ask.asked)):
            for second in (t for t in tables if (t.doc, t.key) != (first.doc, first.key)):
                for row in _entries(second, via, ask):
                    # by the row's own label, only a column the question names whole, and by the
                    # words it asks for (`wanted`, rag/hop_question.py): the label labels many a
                    # table's rows (an engagement's id in the audit report, whose lead is no grade)
                    label = via.value == via.row
                    column = _asked_column(ask, second, row, whole=label)
                    if column and label and wanted and not any(
                            named(name, wanted)[2] for name in second.column_names.get(column, (column,))):
                        continue
                    if column:
                        picked.append((len(named(via.column, ask.asked)[2]), first, via, second, row[column]))
    most = max((p[0] for p in picked), default=0)
    picked = [p for p in picked if p[0] == most]
    if len(picked) != 1:
        return None
    _, first, via, second, fact = picked[0]
    value = ("비어 있습니다" if ask.korean else "blank: the table gives no value") if fact.blank \
        else shown_value(fact, second)
    row, reached = first.shown(via.row), second.shown(fact.row)
    named_by = ask.value_matches([first])
    if via.value == via.row and named_by:  # the row's own label: say what named the row
        by = conditions(named_by[0][1], ask.korean)
        said = (f"{first.subject}에서 {by}인 행은 {row}이며, {second.subject}에서 {reached}의 {fact.column} "
                f"값은 {value}." if ask.korean else
                f"In {first.subject}, {by} is {row}; in {second.subject}, {reached} has {fact.column} "
                f"{value}.")
    else:
        said = (f"{first.subject}에서 {row}의 {via.column} 값은 {via.value}이며, {second.subject}에서 "
                f"{reached}의 {fact.column} 값은 {value}." if ask.korean else
                f"In {first.subject}, {row} has {via.column} {via.value}; in {second.subject}, {reached} "
                f"has {fact.column} {value}.")
    return CellAnswer("blank" if fact.blank else "cell", said, (fact, via))


def _entries(table: FactTable, via: Fact, ask: TableQuestion) -> list[dict[str, Fact]]:
    """The rows of a register the id `via` reaches, each column -> its cell: those it labels, else
    those holding it under the same key ("technician.employee_id" T-0301 is the training
    register's employee_id, where a person's rows are labelled otherwise: one per certificate);
    of several, those with a worded value the question names whole ("IPC-A-610"), if any."""
    value, key = via.value.strip(), via.column.rsplit(".", 1)[-1]
    labels = [value] if value in table.rows else list(dict.fromkeys(
        f.row for f in table.facts if f.value.strip() == value and f.column == key))
    rows: list[dict[str, Fact]] = []
    for label in labels:
        first = len(rows)
        for fact in (f for f in table.facts if f.row == label):
            if len(rows) == first or fact.column in rows[-1]:  # a column again: the next row
                rows.append({})
            rows[-1][fact.column] = fact
    named_rows = [r for r in rows if any(f.number is None and not f.blank
                                         and named(f.value, ask.asked)[0] == 1 for f in r.values())]
    return named_rows if len(rows) > 1 and named_rows else rows


def _asked_column(ask: TableQuestion, table: FactTable, row: dict[str, Fact],
                  whole: bool = False) -> str | None:
    """The one column of the row the question names (the column it names whole, else, unless
    `whole`, the one it names most words of)."""
    hits = {c: len(named(c, ask.asked)[2]) for c in row if c}
    most = max(hits.values(), default=0)
    columns = ask.best(list(hits), table.column_names) or (
        [] if whole else [c for c, n in hits.items() if n == most])
    return columns[0] if most and len(columns) == 1 else None


def _other_of_form(code: str, asked: Sequence[str]) -> bool:
    """Whether the question gives another code of the same form ("EQ-2047" where the row's
    asset is EQ-2022): the row reached would be another thing than the one asked.

    >>> _other_of_form("EQ-2022", ("aoi", "eq-2047", "calibrated")), _other_of_form("T-0301", ("wo-24-0192",))
    (True, False)
    """
    form = re.sub(r"\d", "0", code.strip().lower())
    return any(is_code(w) and w != code.strip().lower() and re.sub(r"\d", "0", w) == form for w in asked)
