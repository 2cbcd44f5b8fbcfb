"""A table of one candidate document as rag/cells.py reads it: its cell facts (rag/facts.py), its
rows' other names and the words of its subject."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from rag.facts import Fact
from rag.labels import BRACKETS, KEY_PATH, SHORT_NAME, words
from rag.places import dates
from rag.premise_words import MONTHS


_NAMING_SHARE = 0.8  # the distinct values of a first worded column, of its rows, to name them


@dataclass(frozen=True)
class FactTable:
    """One table of a candidate document: its facts, its rows' other names (the cells of its
    columns of distinct words: a register's names and titles), and the words of its subject (the
    document's name and header fields, the section, and the values of columns that never change:
    a triangle's cedent and line)."""

    doc: str
    key: str
    facts: tuple[Fact, ...]
    aliases: dict[str, tuple[str, ...]]
    subject_words: frozenset[str]
    name_words: frozenset[str]  # of the document's name alone
    top: bool  # one of the best-ranked candidate chunks holds part of it
    currency: str = ""  # the document's own currency field ("currency": "GBP" atop a JSON rate card)
    # a column's names: as headed, and with the initialisms its document spells out written out
    column_names: dict[str, tuple[str, ...]] = field(default_factory=dict)
    naming: tuple[str, ...] = ()  # the headers of the columns whose values name its rows ("Check item")

    @classmethod
    def of(cls, doc: str, key: str, facts: list[Fact], fields: Sequence[str], top: bool) -> FactTable:
        rows = list(dict.fromkeys(f.row for f in facts))
        columns: dict[str, list[Fact]] = {}
        for fact in facts:
            columns.setdefault(fact.column, []).append(fact)
        constant = [cells[0].value for cells in columns.values()
                    if len(rows) > 1 and len(cells) == len(rows) and len({c.value for c in cells}) == 1]
        worded = [cells for cells in columns.values() if len(cells) == len(rows) > 1
                  and all(c.number is None and not c.blank and c.value[:1] not in "{[" for c in cells)]
        # A register's first worded column names its rows even where two share a value ("Karl
        # Fischer volumetric titrator" beside two "HPLC system"s: those two are a tie in `best`).
        described = next((cells for cells in worded if not any(dates(c.value) for c in cells)), [])
        naming = [cells for cells in worded if len({c.value for c in cells}) == len(rows) or (
            cells is described and len({c.value for c in cells}) >= _NAMING_SHARE * len(rows))]
        aliases = {row: [row, *_month_names(row)] for row in rows}
        for cell in (c for cells in naming for c in cells):
            aliases[cell.row].append(cell.value)
            if short := SHORT_NAME.search(cell.value):  # "X-ray photoelectron spectrometer (XPS)": XPS
                aliases[cell.row].append(short.group(1))
        name = doc.rsplit(".", 1)[0]
        name = f"{name} {name.replace('-', ' ')}"
        subject = frozenset(words(" ".join([name, *fields, facts[0].section, *constant])))
        return cls(doc, key, tuple(facts), {row: tuple(names) for row, names in aliases.items()}, subject,
                   frozenset(words(name)), top, naming=tuple(cells[0].column for cells in naming))

    @property
    def subject(self) -> str:
        """The document's name, as a sentence calls it."""
        return self.doc.rsplit(".", 1)[0]

    @property
    def rows(self) -> list[str]:
        return list(dict.fromkeys(f.row for f in self.facts))

    @property
    def columns(self) -> list[str]:
        return list(dict.fromkeys(f.column for f in self.facts))

    @property
    def fields(self) -> bool:
        """Whether it holds a JSON document's `path: value` fields ("#pricing", rows the paths'
        parents), not rows of a table ("#/tables/0|...", "#/layers")."""
        return self.key.startswith("#") and not {"/", "|"} & set(self.key)

    @property
    def label(self) -> str:
        """The header of its row labels' column ("layer"), "" where it has none."""
        return self.key.partition("|")[2].split("|")[0].strip()

    def listed(self, rows: Sequence[str]) -> str:
        return ", ".join(self.shown(r) for r in rows[:10]) + (", ..." if len(rows) > 10 else "")

    def shown(self, row: str) -> str:
        """A row as a sentence names it: its label, and its first other name ("S-01 (Ingrid Valen)")."""
        names = self.aliases.get(row, (row,))
        return label_text(row) + (f" ({names[1]})" if len(names) > 1 else "")

    def context(self, fact: Fact, subject: bool = True) -> set[str]:
        """The words a question may name a fact by: its row's names, its column, the subject."""
        names = " ".join(self.aliases.get(fact.row, (fact.row,)))
        return {*(self.subject_words if subject else ()), *words(names), *words(fact.column)}


LIST_INDEX = re.compile(r"\[\d+\]")  # a JSON list item's index in a key path
_ISO_MONTH = re.compile(r"(?<![\w-])((?:19|20)\d\d)[-/.](0?[1-9]|1[0-2])(?![\w-])")
_ISO_QUARTER = re.compile(r"(?<![\w-])((?:19|20)\d\d)[-/ ]?(Q[1-4])(?![\w-])", re.IGNORECASE)


def _month_names(row: str) -> list[str]:
    """A row's names with its months and quarters in words: "2024-07" is "July 2024" and "Jul
    2024"; "NDC 2024-Q3" is "NDC Q3 2024".

    >>> _month_names("NDC 2024-Q3")
    ['NDC Q3 2024']
    >>> _month_names("2024-07")
    ['July 2024', 'Jul 2024']
    """
    quarters = _ISO_QUARTER.sub(lambda m: f"{m.group(2).upper()} {m.group(1)}", row)
    if _ISO_MONTH.search(quarters) is None:
        return [quarters] if quarters != row else []
    return [_ISO_MONTH.sub(lambda m: f"{spelled(m)} {m.group(1)}", quarters)
            for spelled in (lambda m: MONTHS[int(m.group(2)) - 1].capitalize(),
                            lambda m: MONTHS[int(m.group(2)) - 1].capitalize()[:3])]


def key_path_names(column: str) -> tuple[str, ...]:
    """A JSON record's nested key as a question may name it: by its last keys, the outer ones being
    the file's structure ("gross weight" is `cargo.weights.gross_kg`).

    >>> key_path_names("cargo.weights.gross_kg")
    ('weights.gross_kg', 'gross_kg')
    >>> key_path_names("sla[0].service_credit")
    ('service_credit',)
    >>> key_path_names("Ref. no")
    ()
    """
    path = LIST_INDEX.sub("", column)  # a list item's index is structure too: "sla[0]" is the sla list
    if not KEY_PATH.fullmatch(path):
        return ()
    parts = path.split(".")
    return tuple(".".join(parts[i:]) for i in range(1, len(parts)))


def label_text(text: str) -> str:
    """A row label as a sentence says it, its brackets left out."""
    return BRACKETS.sub("", text).strip() or text
