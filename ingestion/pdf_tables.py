"""Tables in a text PDF without a layout model: rows of words set apart in columns.

Docling's model-free pipeline gives a PDF's lines, and a table comes out as lines that run its
cells together ("Kellbrook Manganese (ug/L) 52 6.3", then "41 50" as another line), so no cell
of it could be asked for. Here the words of each page (pypdfium2's character boxes) are set in
visual rows; a row whose words stand in groups apart by more than a type size is a table row,
and three or more such rows one under the other, whose groups share the same column gutters, are
a table. A report's table

    Works       Parameter         n    Mean   Max
    Ashby Lane  Turbidity (NTU)   365  0.12   0.48
    Kellbrook   Turbidity (NTU)   365  0.15   0.61

becomes the header ["Works", "Parameter", "n", "Mean", "Max"] and two rows of five cells. A line
of a cell that wraps (a row with words in some columns only, under a full row, or lines set
closer than rows are: a header over three lines) joins that cell.
Two columns of prose are no table: their lines are long (`PROSE_WORDS`). Written by us because
pdfplumber or Camelot would be one more PDF stack beside pypdfium2 for this one job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

MIN_ROWS = 3  # a header and two rows: fewer is a label beside a value, not a table
COLUMN_GAP = 0.9  # type sizes between two cells' words: wider than any word space of prose
ROW_GAP = 2.0  # type sizes between two rows of one table: more is a paragraph break
WRAP_GAP = 1.0  # type sizes between a row and its cells' wrapped line: a paragraph's line spacing
LINE_GAP = 0.25  # type sizes between two lines of one row's cells (a cell's lines, centred, overlap
# its neighbours'); two rows are set a cell's padding apart
PROSE_WORDS = 6  # mean words in a cell above which the "columns" are prose set in two columns


@dataclass
class Word:
    text: str
    left: float
    right: float
    top: float  # from the page's top, as Docling's top-left boxes
    bottom: float
    size: float  # type size in points


Row = list[list[Word]]  # a visual row's words, in groups parted by column gaps


@dataclass
class PdfTable:
    page: int
    top: float
    bottom: float
    rows: list[list[str]] = field(default_factory=list)  # the first is the header

    def covers(self, top: float, bottom: float) -> bool:
        """A line with its middle inside the table is one of its rows."""
        return self.top <= (top + bottom) / 2 <= self.bottom


def pdf_tables(path: Path) -> list[PdfTable]:
    """The tables of every page of a text PDF, top to bottom."""
    import pypdfium2 as pdfium

    tables: list[PdfTable] = []
    pdf = pdfium.PdfDocument(str(path))
    try:
        for number, page in enumerate(pdf, 1):
            textpage = page.get_textpage()
            tables.extend(page_tables(number, page_words(textpage, page.get_height())))
            textpage.close()
            page.close()
    finally:
        pdf.close()
    return tables


def page_words(textpage, height: float) -> list[Word]:
    """The page's words in content order: characters split at white space, and at a gap wider
    than a quarter of the type size (a space pdfium did not generate between two cells; in loose
    boxes a word's letters touch)."""
    import pypdfium2.raw as pdfium_c

    words: list[Word] = []
    chars: list[tuple[str, float, float, float, float, float]] = []

    def flush() -> None:
        if chars:
            words.append(Word(
                "".join(c[0] for c in chars), min(c[1] for c in chars), max(c[2] for c in chars),
                min(c[3] for c in chars), max(c[4] for c in chars), max(c[5] for c in chars),
            ))
            chars.clear()

    for index in range(textpage.count_chars()):
        char = chr(pdfium_c.FPDFText_GetUnicode(textpage.raw, index))
        if char.isspace() or not char.isprintable():
            flush()
            continue
        left, bottom, right, top = textpage.get_charbox(index, loose=True)
        size = pdfium_c.FPDFText_GetFontSize(textpage.raw, index) or (top - bottom)
        box = (char, left, right, height - top, height - bottom, size)
        gap = left - chars[-1][2] if chars else 0.0
        # A gap, or letters set over the last (a header cell running into the next one).
        if chars and (gap > size / 4 or gap < -size / 10 or abs(box[4] - chars[-1][4]) > size / 2):
            flush()
        chars.append(box)
    flush()
    return words


def _rows(words: list[Word]) -> list[Row]:
    """Words in visual rows (middles within half a type size), top down, each left to right in
    its groups."""
    rows: list[list[Word]] = []
    for word in sorted(words, key=lambda w: (w.top + w.bottom) / 2):
        middle = (word.top + word.bottom) / 2
        if rows and abs(middle - _middle(rows[-1])) <= word.size / 2:
            rows[-1].append(word)
        else:
            rows.append([word])
    return [_groups(sorted(row, key=lambda w: w.left)) for row in rows]


def _middle(row: list[Word]) -> float:
    return sum((w.top + w.bottom) / 2 for w in row) / len(row)


def _groups(row: list[Word]) -> Row:
    """A row's words in groups parted by a column gap."""
    groups = [[row[0]]]
    for word in row[1:]:
        if word.left - groups[-1][-1].right > COLUMN_GAP * word.size:
            groups.append([word])
        else:
            groups[-1].append(word)
    return groups


def _words(row: Row) -> list[Word]:
    return [word for group in row for word in group]


def page_tables(page: int, words: list[Word]) -> list[PdfTable]:
    """The tables among one page's words: runs of rows of two or more groups, close one under
    the other, with the wrapped lines of their cells."""
    tables, run = [], []
    for row in _rows(words):
        size = row[0][0].size
        gap = _top(row) - _bottom(run[-1]) if run else 0.0
        if len(row) >= 2 and gap <= ROW_GAP * size:
            run.append(row)
        elif run and gap <= WRAP_GAP * size and _wraps(row, _columns(run)):
            run.append(row)
        else:
            tables.extend(_table(page, run))
            run = [row] if len(row) >= 2 else []
    tables.extend(_table(page, run))
    return tables


def _top(row: Row) -> float:
    return min(w.top for w in _words(row))


def _bottom(row: Row) -> float:
    return max(w.bottom for w in _words(row))


def _columns(rows: list[Row]) -> list[tuple[float, float]]:
    """The columns, left to right: over the rows that have the most common number of groups,
    the x range of their first groups, of their second groups, and so on (a header set over
    right-aligned figures covers other x than they do, and a header cell may run into the next,
    so all rows' groups merged would be too many columns or one), merged where two overlap."""
    counts = [len(row) for row in rows if len(row) >= 2]
    if not counts:
        return []
    most = max(set(counts), key=lambda n: (counts.count(n), n))
    columns: list[list[float]] = []
    for groups in zip(*(row for row in rows if len(row) == most)):
        left, right = min(g[0].left for g in groups), max(g[-1].right for g in groups)
        if columns and left <= columns[-1][1]:
            columns[-1][1] = max(columns[-1][1], right)
        else:
            columns.append([left, right])
    return [(left, right) for left, right in columns]


def _column(word: Word, columns: list[tuple[float, float]]) -> int:
    """The column a word overlaps most; in a gutter, the column after it (a header is set from
    its column's left, figures to its right)."""
    overlaps = [min(word.right, right) - max(word.left, left) for left, right in columns]
    if max(overlaps) > 0:
        return overlaps.index(max(overlaps))
    return max([0] + [i for i in range(1, len(columns)) if word.left >= columns[i - 1][1]])


def _wraps(row: Row, columns: list[tuple[float, float]]) -> bool:
    """A line of one group set close under a table row, within a column: the rest of a cell
    too long for one line. A word across a gutter is the next paragraph's."""
    return len(columns) >= 2 and all(
        sum(left < w.right and w.left < right for left, right in columns) <= 1 for w in _words(row)
    )


def _table(page: int, run: list[Row]) -> list[PdfTable]:
    """The run as a table, or nothing when it is too short, has one column, or is prose."""
    if sum(len(row) >= 2 for row in run) < MIN_ROWS:
        return []
    columns = _columns(run)
    if len(columns) < 2:
        return []
    cells: list[list[str]] = []
    for i, row in enumerate(run):
        texts = [[] for _ in columns]
        for group in row:  # a group's words stay in one cell: "Cleaning &" over "sanitation"
            texts[_column(group[0], columns)].extend(word.text for word in group)
        joined = [" ".join(text) for text in texts]
        # lines of one row's cells: a header's words over two or three lines ("Temperature" over
        # "control"), a date wrapped under its row: set closer than two rows ever are
        tight = i > 0 and _top(row) - _bottom(run[i - 1]) < LINE_GAP * row[0][0].size
        if cells and (len(row) < 2 or tight):  # a wrapped line goes on the cells of the row above
            cells[-1] = [f"{above} {text}".strip() for above, text in zip(cells[-1], joined)]
        else:
            cells.append(joined)
    filled = [text for row in cells for text in row if text]
    if sum(len(text.split()) for text in filled) > PROSE_WORDS * len(filled):
        return []
    return [PdfTable(page, _top(run[0]), _bottom(run[-1]), cells)]
