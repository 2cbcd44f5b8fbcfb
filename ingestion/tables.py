"""The Markdown table the readers write for data that is not a table in Docling's output (JSON
records, chart data), a spreadsheet table that a blank row split in two made whole again, and a
sheet's title row taken out of its header."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag.text import cells

_FIGURE = re.compile(r"^[-+]?[\d.,]+%?$")
_SEPARATOR = re.compile(r"\|(?:\s*:?-+:?\s*\|)+")


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A header row, the separator and the rows; a `|` in a cell is escaped."""
    return "\n".join([_line(header), "|" + "---|" * len(header), *(_line(row) for row in rows)])


def continued_table(previous: str, table: str) -> str | None:
    """`previous` with `table`'s rows appended where `table` continues it: a spreadsheet's totals
    below a blank row, which Docling reads as a table of its own headed by its first data row
    (as many cells as `previous`'s header, or fewer where its last are empty, some of them figures);
    else None.

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
    head, *rows = table.splitlines()
    width = len(cells(previous.splitlines()[0]))
    # a block as wide as the table, or narrower where its last columns (a note) are empty
    if not 2 <= len(cells(head)) <= width or not any(map(_FIGURE.match, cells(head))):
        return None
    padded = [_line(cells(row) + [""] * (width - len(cells(row))))
              for row in (head, *rows) if not _SEPARATOR.fullmatch(row)]
    return "\n".join([previous, *padded])


def titled_table(table: str) -> tuple[str, str]:
    """(the title, the table) of a sheet whose first row is its title in one cell above the
    header row, which Docling reads as the header; ("", the table) for any other table.

    >>> title, table = titled_table("| Occupancy 2024 | | |\\n|---|---|---|\\n"
    ...                             "| Site | Rooms | Occ % |\\n| EDI | 142 | 82.4 |")
    >>> print(title); print(table)
    Occupancy 2024
    | Site | Rooms | Occ % |
    |---|---|---|
    | EDI | 142 | 82.4 |
    """
    lines = table.splitlines()
    if len(lines) < 4 or not _SEPARATOR.fullmatch(lines[1].strip()):
        return "", table
    head, below = cells(lines[0]), cells(lines[2])
    filled = [c for c in head if c]
    if len(head) < 3 or len(filled) != 1 or len([c for c in below if c]) < 2 \
            or any(map(_FIGURE.match, below)):
        return "", table
    return filled[0], "\n".join([lines[2], "|" + "---|" * len(below), *lines[3:]])


def _line(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"
