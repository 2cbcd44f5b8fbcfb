"""The tables a context shows, read back as rows of {column: value}, and the swapped-row premise:
a question that names one row of a shown table by a value of its own and gives another column a
value other rows hold, not this row's.

    >>> rows = "| asset | plant |\\n|---|---|\\n| Test bench 400 bar | Brno |\\n| Test bench 250 bar | Linz |"
    >>> swapped("When was the 400 bar test bench at the Linz plant commissioned?", [rows])
    ('Test bench 400 bar', 'plant', 'Brno', 'Linz')
    >>> swapped("When was the 400 bar test bench at the Brno plant commissioned?", [rows]) is None
    True

Written here, not taken from a library: the rows are the context's own Markdown and `column:
value` lines, and the rule is ours (rag/premise.py calls it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag.labels import content, named, words
from rag.text import cells, table_rows

_CELL = re.compile(r"([^:;]+):\s*([^;]*)")
NUMBERED = re.compile(r"^\s*\d+\.\s+")  # a unit's number where the model picks units (rag/compose.py)


def shown_tables(texts: Sequence[str]) -> list[list[dict[str, str]]]:
    """The tables the evidence shows, as rows of {column: value}: consecutive lines of
    `column: value` pairs with the same columns (how the context writes rows), and Markdown tables
    (lines under a header and its rule)."""
    tables: list[list[dict[str, str]]] = []
    for text in texts:
        previous: set[str] = set()
        for line in text.splitlines():
            line = NUMBERED.sub("", line)
            row = {k.strip(): v.strip() for k, v in _CELL.findall(line)} if "; " in line else {}
            if len(row) >= 2 and set(row) == previous:
                tables[-1].append(row)
            elif len(row) >= 2:
                tables.append([row])
            previous = set(row)
        for run in re.findall(r"(?m)(?:^\|.*\n?)+", text):
            if parsed := table_rows(run):
                (header, _rule), lines = parsed
                tables.append([dict(zip(cells(header), cells(line))) for line in lines])
    return [rows for rows in tables if len(rows) >= 2]


def swapped(question: str, texts: Sequence[str]) -> tuple[str, str, str, str] | None:
    """(the row's naming value, the column, the row's value there, the value the question gives)
    when the question names exactly one row of a shown table by a cell of at least two words that
    no other row's cell matches, and names, for another column, a value other rows hold while
    this row's value there goes unnamed; else None."""
    asked = words(question)

    def names(value: str) -> bool:
        return bool(content(value)) and named(value, asked)[0] == 1

    for rows in shown_tables(texts):
        naming = [(row, value) for row in rows for value in row.values()
                  if len(content(value)) >= 2 and names(value)]
        if len({id(row) for row, _ in naming}) != 1:
            continue
        row, name = naming[0]
        for column, value in row.items():
            others = {r.get(column, "") for r in rows if r is not row}
            given = [v for v in others if v and v != value and names(v)]
            if value and not names(value) and len(given) == 1 and value not in name:
                return name, column, value, given[0]
    return None
