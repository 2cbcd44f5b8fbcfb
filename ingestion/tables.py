"""The Markdown table the readers write for data that is not a table in Docling's output (JSON
records, chart data), and a spreadsheet table that a blank row split in two made whole again."""

from __future__ import annotations

import re
from collections.abc import Sequence

_FIGURE = re.compile(r"^[-+]?[\d.,]+%?$")
_SEPARATOR = re.compile(r"\|(?:\s*:?-+:?\s*\|)+")


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A header row, the separator and the rows; a `|` in a cell is escaped."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *(line(row) for row in rows)])


def continued_table(previous: str, table: str) -> str | None:
    """`previous` with `table`'s rows appended where `table` continues it: a spreadsheet's totals
    below a blank row, which Docling reads as a table of its own headed by its first data row
    (as many cells as `previous`'s header, some of them figures); else None.

    >>> print(continued_table("| Month | Site | Litres |\\n|---|---|---|\\n| 2024-04 | NDC | 161887 |",
    ...                       "| FY total | NDC | 2002200 |\\n|---|---|---|\\n| FY total | MDC | 2448981 |"))
    | Month | Site | Litres |
    |---|---|---|
    | 2024-04 | NDC | 161887 |
    | FY total | NDC | 2002200 |
    | FY total | MDC | 2448981 |
    >>> continued_table("| Month | Site |\\n|---|---|", "| Site | Manager |\\n|---|---|") is None
    True
    """
    def cells(line: str) -> list[str]:
        return [c.strip() for c in line.strip().strip("|").split("|")]

    head, *rows = table.splitlines()
    if len(cells(head)) != len(cells(previous.splitlines()[0])) or not any(map(_FIGURE.match, cells(head))):
        return None
    return "\n".join([previous, head, *(row for row in rows if not _SEPARATOR.fullmatch(row))])
