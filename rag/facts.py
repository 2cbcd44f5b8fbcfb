"""Table cells as facts: every cell of a chunk's Markdown tables (CSV/XLSX/PPTX/DOCX/HTML/PDF
tables, JSON records, chart data) read as (document, table, row label, column, value, unit,
place), kept in the lexical index's SQLite file (`facts` table, by document) and written and
deleted in the same transaction as the document's lexical rows (rag/lexical.py), so ingest,
sync by hash and `ragqa remove` keep them level with nothing more.

A row's label is its label column's cell: the first column when its cells are all filled and
distinct (ids, years, measurement names); in long-format data, the key cells that name it together
("NDC 2024-Q3"); else the first column of words. The other cells are the row's facts, each under
its column's header. A unit comes from the value ("31 mm"), else from
the row label or the column header ("Chest deflection (mm)", "speed_kmh"). A one-column table of
"key: value" cells, and JSON's `path: value` lines, read as row = key. A table split over chunks
repeats its header, so its parts share one table key (its id, else its header) and one choice of
label columns.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass

from llama_index.core.schema import BaseNode, MetadataMode

from rag.text import YEAR, markdown_tables
from rag.units import CELSIUS_KEY, CURRENCIES, SCALES, amounts, figures, value

FACTS_VERSION = 10  # raise when extraction changes: `LexicalIndex.sync` then reads every document again

FACTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (
    doc TEXT NOT NULL, chunk_id TEXT NOT NULL, tab TEXT NOT NULL, row_label TEXT NOT NULL,
    col TEXT NOT NULL, value TEXT NOT NULL, number REAL, unit TEXT NOT NULL,
    page INTEGER, slide INTEGER, section TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS facts_doc ON facts (doc);
"""

BLANKS = frozenset({"", "-", "–", "—", "n/a", "na", "none", "null", "nan"})
_KEY_VALUE = re.compile(r"^\s*([^:|]{1,80}?)\s*:\s+(.+?)\s*$")
_KEY_PATH = re.compile(r"^[\w\[\]-]+(?:\.[\w\[\]-]+)+$")  # a JSON key path: "programme.lead"
_KEY = re.compile(r"^[\w-]+$")
_PLAIN_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)*")
_CURRENCY = re.compile(r"^(?:[$€£¥₩]|EUR|USD|KRW|GBP|JPY)\s*|\s*(?:[$€£¥₩]|EUR|USD|KRW|GBP|JPY|원)$", re.I)
_PARENTHESIS = re.compile(r"[(\[]([^)\]]{1,20})[)\]]")
_KEY_WORDS = 5  # a key cell's words at most: a name or a course, not a description
_MAX_KEYS = 3  # key columns of one row's label at most ("site", "year", "loss type")
_MONEY = {spelling.lower(): code for code, spellings in CURRENCIES.items() for spelling in spellings}


@dataclass(frozen=True)
class Fact:
    """One cell: its document and chunk, its table, row label, column header, value as written
    ("" for a blank cell), the value as a number (None when it is no plain figure), its unit ("" when
    none) and its place (page, slide, section) for the citation."""

    doc: str
    chunk_id: str
    table: str
    row: str
    column: str
    value: str
    number: float | None
    unit: str
    page: int | None
    slide: int | None
    section: str

    @property
    def blank(self) -> bool:
        return self.value.strip().lower() in BLANKS


def unit_word(word: str, money: bool = False) -> str:
    """The unit, currency or scale a label's word is ("mm", "eur", "thousand", "pct", "gbpk"), else "";
    "m" and "k" are scales only beside a currency ("eur_m"), "m" alone is metres."""
    lowered = word.lower()
    if any(c.isdigit() for c in word):
        return ""
    if lowered in _MONEY:
        return _MONEY[lowered]
    if (joined := re.fullmatch(r"([a-z]{3})(k|m|mn|bn)", lowered)) and joined.group(1) in _MONEY:
        return f"{_MONEY[joined.group(1)]} {joined.group(2)}"  # "GBPk": a currency and its scale, one word
    if lowered in ("pct", "percent", "%"):
        return "%"
    if lowered in SCALES and (money or len(lowered) > 2):
        return lowered
    return next((unit for _, unit, _ in figures(f"1 {word}") if unit), "")


# A currency sign written with its scale: "Revenue (£k)", "(€m)", "(£000)"
_SYMBOL_SCALE = re.compile(r"([£€$¥₩])\s?(k|m|mn|bn|000)(?![A-Za-z0-9])", re.IGNORECASE)
_SCALE_WORD = {"000": "thousand"}


def label_unit(label: str) -> str:
    """The unit a row label or column header names for its figures, as it names it: its words in
    brackets ("(mm)", "(EUR thousand)") or its last words ("speed_kmh", "fee_eur_k", "Force kN");
    "" when none ("status_12m" holds a figure, not a unit).

    >>> label_unit("cargo.temperature_control.setpoint_c"), label_unit("Zone C")
    ('°C', '')
    """
    # a bracket's words after a comma, or "of", qualify its unit: "(GBP, excl. VAT)", "(% of revenue)"
    parts = [(re.split(r"\s+of\s+", part.split(",")[0])[0], True) for part in _PARENTHESIS.findall(label)] + [
        (_PARENTHESIS.sub(" ", label), False)]
    for part, bracketed in parts:
        part = _SYMBOL_SCALE.sub(lambda m: f"{m.group(1)} {_SCALE_WORD.get(m.group(2), m.group(2))}", part)
        part = CELSIUS_KEY.sub(" °C", part)
        words = [w for w in re.split(r"[\s_]+", part.strip()) if w]
        money = any(w.lower() in _MONEY for w in words)
        tail: list[str] = []
        for word in reversed(words):
            unit = unit_word(word, money)
            if not unit:
                break
            tail.insert(0, unit)
        if tail and (bracketed or len(tail) < len(words)):
            return " ".join(tail)
    return ""


def value_unit(cell: str) -> str:
    """The unit written with a figure in a cell ("31 mm"); "" when none."""
    return next((unit for _, unit, _ in figures(cell) if unit), "")


_PER_PERIOD = re.compile(r"(?:^|\s)(?:per|an?)\s+[a-z]+$|\s*/\s*[a-z]+$", re.IGNORECASE)


def number_of(text: str) -> float | None:
    """The value as a number when the cell is one figure (a unit, currency or % around it allowed):
    "1,500 kg" is 1500, "2024-07-12" and "SL-05" are None."""
    bare = _CURRENCY.sub("", text.strip()).strip().rstrip("%").strip()
    match = _PLAIN_NUMBER.match(bare)
    if not match:
        return None
    rest = re.sub(r"\([^)]*\)$", "", bare[match.end():]).strip()  # "3.5 t (gross)"
    rest = _PER_PERIOD.sub("", rest).strip()  # a rate: "£6 per day", "EUR 55 / night"
    unit = amounts(f"1 {rest}")[:1] if rest else ()
    if rest and not (unit and unit[0].unit and unit[0].end == len(rest) + 2):
        return None  # words beyond the unit: "14 m telehandler" names a thing
    try:
        return value(match.group().lstrip("+-")) * (-1 if match.group().startswith("-") else 1)
    except ValueError:
        return None


def _label_columns(rows: Sequence[Sequence[str]]) -> tuple[int, ...]:
    """The columns that name the rows: the first whose cells are all filled and distinct (an id,
    a year: a triangle's cedent and line repeat; past the first column, not a measure's figures);
    else, in long-format data, the fewest short key columns that name every row together ("NDC" and
    "2024-Q3", "E2203" and "Allergen Awareness": one label column would merge those rows' cells);
    else the first column whose cells are mostly words.

    >>> _label_columns([["NDC", "2024-Q1", "40915"], ["NDC", "2024-Q2", "41388"],
    ...                 ["MDC", "2024-Q1", "38001"]])
    (0, 1)
    >>> _label_columns([["No. 1", "Check the oven"], ["No. 2", "Check the belt"]])
    (0,)
    """
    width = max(len(row) for row in rows)
    columns = [[row[i].strip() if i < len(row) else "" for row in rows] for i in range(width)]
    keys = [i for i, column in enumerate(columns) if all(_key_cell(c) for c in column)]
    for i, column in enumerate(columns):
        if all(c.lower() not in BLANKS for c in column) and len(set(column)) == len(column) \
                and (i == 0 or i in keys):
            return (i,)

    def named(chosen: list[int]) -> int:  # how many rows the columns' cells tell apart
        return len({tuple(columns[i][r] for i in chosen) for r in range(len(rows))})

    chosen = keys[:1]
    while chosen and len(chosen) < _MAX_KEYS:
        wider = max((sorted([*chosen, i]) for i in keys if i not in chosen), key=named, default=None)
        if wider is None or named(wider) == named(chosen):
            break
        chosen = wider
        if named(chosen) == len(rows):
            return tuple(chosen)
    for i, column in enumerate(columns):
        if sum(number_of(c) is None and c.lower() not in BLANKS for c in column) * 2 > len(column):
            return (i,)
    return (0,)


def _key_cell(cell: str) -> bool:
    """A cell that may name its row: filled, short, and a code, word or year, not a measure."""
    return cell.lower() not in BLANKS and len(cell.split()) <= _KEY_WORDS \
        and (number_of(cell) is None or bool(YEAR.fullmatch(cell)))


def _place(node: BaseNode) -> tuple[int | None, int | None, str]:
    meta = node.metadata
    return meta.get("page"), meta.get("slide"), str(meta.get("section") or "")


def _fact(node: BaseNode, table: str, row: str, column: str, cell: str, *labels: str) -> Fact:
    """A cell's fact; a figure's unit is its own, else the one its row label or column names."""
    page, slide, section = _place(node)
    number = number_of(cell)
    unit = "" if number is None else value_unit(cell) or next(filter(None, map(label_unit, labels)), "")
    return Fact(str(node.metadata.get("doc", node.ref_doc_id or "")), node.node_id, table, row, column,
                cell, number, unit, page, slide, section)


def _table_facts(node: BaseNode, header: list[str], rows: list[list[str]],
                 labels: tuple[int, ...] | None = None) -> list[Fact]:
    """One chunk's part of a table; `labels`: its label columns, as chosen over all its parts."""
    table = _table_key(node, header)
    if len(header) == 1:  # a one-column table of "key: value" cells
        pairs = [m.groups() for row in rows if (m := _KEY_VALUE.match(row[0]))]
        return [_fact(node, table, key, header[0], cell, key) for key, cell in pairs]
    labels = labels or _label_columns(rows)
    found = []
    for row in rows:
        name = " ".join(row[i] for i in labels if i < len(row))
        for i, column in enumerate(header):
            if i != labels[0]:  # a long table's other keys stay cells: "loss_type: unknown" is a condition
                found.append(_fact(node, table, name, column, row[i] if i < len(row) else "", name, column))
    return found


def _table_key(node: BaseNode, header: Sequence[str]) -> str:
    return str(node.metadata.get("table_id") or "") + "|" + " | ".join(header)


def _key_path_facts(node: BaseNode, text: str) -> list[Fact]:
    """JSON's scalar fields, written `path.to.key: value` (ingestion/plain.py): row = the path
    above the key, column = the key; a top-level key of a JSON document is a row of its own."""
    json_document = str(node.metadata.get("doc", "")).lower().endswith(".json")
    found = []
    for line in text.splitlines():
        match = _KEY_VALUE.match(line)
        if match and (_KEY_PATH.match(match.group(1)) or (json_document and _KEY.match(match.group(1)))):
            path, _, key = match.group(1).rpartition(".")
            row, column = (path, key) if path else (key, "")
            found.append(_fact(node, "#" + path.split(".")[0], row, column, match.group(2), key))
    return found


def facts_of(*nodes: BaseNode) -> list[Fact]:
    """The facts of one document's chunks: every cell of their Markdown tables and their JSON
    key-path lines. A table split over chunks is labelled as one: "E2203" in two chunks is two
    rows where the whole table gives its id twice (two courses of one person)."""
    parts = []  # (node, header, rows, the table's key in its document) of each chunk's table
    found = []
    for node in nodes:
        text = node.get_content(metadata_mode=MetadataMode.NONE)
        if "|" not in text and ":" not in text:
            continue
        found += _key_path_facts(node, text)
        for header, rows in markdown_tables(text):
            rows = [list(row) for row in rows if any(cell.strip() for cell in row)]
            if rows:
                key = (str(node.metadata.get("doc", "")), _table_key(node, header))
                parts.append((node, list(header), rows, key))
    whole: dict[tuple[str, str], list[list[str]]] = {}
    for _, _, rows, key in parts:
        whole.setdefault(key, []).extend(rows)
    labels = {key: _label_columns(rows) for key, rows in whole.items()}
    for node, header, rows, key in parts:
        found += _table_facts(node, header, rows, labels[key])
    return found


# ------------------------------------------------------------------ SQL, in LexicalIndex's transactions

_COLUMNS = "doc, chunk_id, tab, row_label, col, value, number, unit, page, slide, section"


def write_facts(db: sqlite3.Connection, nodes: Iterable[BaseNode]) -> int:
    """Insert the facts of these chunks (the caller deleted the document's old ones); how many."""
    rows = [astuple(fact) for fact in facts_of(*nodes)]
    db.executemany(f"INSERT INTO facts ({_COLUMNS}) VALUES ({', '.join('?' * 11)})", rows)
    return len(rows)


def delete_facts(db: sqlite3.Connection, doc: str | None = None) -> None:
    """Drop one document's facts, or every fact."""
    if doc is None:
        db.execute("DELETE FROM facts")
    else:
        db.execute("DELETE FROM facts WHERE doc = ?", (doc,))


def read_facts(db: sqlite3.Connection, docs: Sequence[str]) -> list[Fact]:
    """The facts of these documents, in their tables' order."""
    if not docs:
        return []
    marks = ", ".join("?" * len(docs))
    return [Fact(*row) for row in db.execute(
        f"SELECT {_COLUMNS} FROM facts WHERE doc IN ({marks}) ORDER BY rowid", list(docs))]


def rebuild_facts(db: sqlite3.Connection, nodes_of) -> None:
    """Extract every document's facts again from the chunks the lexical index holds
    (`nodes_of(meta, text)` makes a node of a stored row), when FACTS_VERSION changed."""
    delete_facts(db)
    rows = db.execute("SELECT meta, text FROM chunks ORDER BY id").fetchall()
    write_facts(db, [nodes_of(json.loads(meta), text) for meta, text in rows])
