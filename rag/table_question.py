"""A question read against the tables of the candidate documents (rag/cells.py picks the tables
and guards the answer): which row and column it names (`best`, `columns`, `keyed`), and the cell,
the highest or lowest row, the count or the one row it asks for, each a `CellAnswer` of one
sentence in the question's language and the facts it rests on.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from rag.fact_tables import LIST_INDEX, FactTable, label_text
from rag.corrections import in_force
from rag.facts import Fact, value_unit
from rag.labels import STOP, content, is_code, named, same, words
from rag.places import dates
from rag.units import CURRENCIES

# A row-label header that only numbers the rows: the row is said by its name
_ITEM = frozenset("no nr number item ref 번호 순번".split())
# Columns that hold "the" value of a measure named by the row: the default when no column is named.
_GENERIC = frozenset("value values result results measured actual amount 값 결과 측정값 수치".split())
# A yes/no column's spellings: a count of the rows it marks ("are mandatory") reads the yes side.
_YES = frozenset({"yes", "y", "true", "x", "✓", "✔", "예", "o"})
_NO = frozenset({"no", "n", "false", "-", "아니오", "아니요"})


@dataclass(frozen=True)
class CellAnswer:
    """An answer computed from cells: its kind, one sentence in the question's language, and the
    cells it rests on (each with its chunk id, for the citation)."""

    # premise: the cell contradicts it; conflict: two documents' cells differ
    kind: Literal["cell", "blank", "max", "min", "count", "premise", "conflict"]
    text: str
    facts: tuple[Fact, ...]


def _coded(value: str) -> bool:
    """A site's, team's or item's code: "ALW", "SI-2024-05"."""
    return is_code(value.lower()) or (2 <= len(value) <= 6 and value.isupper() and value.isalpha())


def conditions(named_values: Sequence[tuple[str, str]], korean: bool) -> str:
    """"plant Brno and status in repair"; "plant 값이 Brno, status 값이 in repair"."""
    if korean:
        return ", ".join(f"{column} 값이 {value}" for column, value in named_values)
    return " and ".join(f"{column} {value}" for column, value in named_values)


def dated(value: str) -> bool:
    """A date or a year: what a "when" question asks."""
    return bool(dates(value) or re.fullmatch(r"\s*(?:19|20)\d\d\s*", value))


def _common_words(table: FactTable) -> dict[str, set[str]]:
    """Per worded column of three values or more, the words half its values hold or more
    ("maintenance" in a contracts register's services): no value is named by them."""
    values: dict[str, set[str]] = {}
    for fact in table.facts:
        if fact.column and fact.number is None and not fact.blank:
            values.setdefault(fact.column, set()).add(fact.value.strip().lower())
    shared = {column: Counter(w for v in held for w in set(content(v))) for column, held in values.items()}
    return {column: {w for w, n in shared[column].items() if 2 * n >= len(held)}
            for column, held in values.items() if len(held) >= 3}


# A column that gives the currency of its row's figures ("Currency": EUR beside "Annual cost":
# 24600), or what they are per ("Unit": day beside "Rate": 385)
_CURRENCY_COLUMN = frozenset("currency 통화".split())
_UNIT_COLUMN = frozenset("unit units uom 단위".split())
_MONEY_COLUMN = frozenset("rate rates price prices cost costs fee fees charge charges amount tariff "
                          "요금 가격 단가 금액 비용".split())

# A rate or share asked ("the loss rate") is the one column in per cent
_RATE = frozenset("rate rates percentage percent share 비율 비중".split())
_PERCENT = frozenset("pct percent percentage 비율".split())
# A question's words that ask for money: of the columns its words name, the one in a currency
MONEY_ASKED = frozenset("bill bills spend spent spending cost costs paid pay value worth 비용 금액".split())


def currency_field(fact: Fact) -> str:
    """The currency code a document's own currency field gives ("currency": "GBP" atop a JSON
    rate card), else ""."""
    code, named_ = fact.value.strip().upper(), set(words(fact.row))
    return code if named_ and named_ <= _CURRENCY_COLUMN and code in CURRENCIES else ""


def _row_text(table: FactTable, fact: Fact) -> str:
    """The row's label as a sentence says it: "layer 2", not "2"; a numbered item by its name
    ("Incorporation of Aerolith Coatings Ltd", not "# 4")."""
    row = label_text(fact.row)
    if not row.isdigit():
        return row
    names = table.aliases.get(fact.row, ())
    if table.label and any(c.isalpha() for c in table.label) and not set(words(table.label)) & _ITEM:
        return f"{table.label} {row}"
    return f"{names[1]} ({row})" if len(names) > 1 else f"{table.label} {row}".strip()


def shown_value(fact: Fact, table: FactTable | None = None) -> str:
    """The value with its unit, when the cell alone does not carry it: its column's, else the one
    its row gives in a unit column."""
    if fact.unit and not value_unit(fact.value):
        return f"{fact.value} {fact.unit}"
    if fact.unit or fact.number is None or table is None:
        return fact.value
    given = [(f.value.strip(), bool(set(words(f.column)) & _CURRENCY_COLUMN)) for f in table.facts
             if f.row == fact.row and len(f.value.split()) == 1
             and set(words(f.column)) & (_CURRENCY_COLUMN | _UNIT_COLUMN)]
    # the document's currency, for a price of a row that names none ("rate": 385.0 in a GBP rate card)
    money = table.currency if set(words(fact.column)) & _MONEY_COLUMN else ""
    if len(given) != 1:
        return f"{fact.value} {money}".strip()
    unit, currency = given[0]
    if currency or unit.upper() in CURRENCIES:
        return f"{fact.value} {unit}"
    return f"{fact.value} {money} per {unit}" if money else f"{fact.value} per {unit}"


@dataclass(frozen=True)
class TableQuestion:
    """The question's words and language, and what it asks of the tables."""

    asked: tuple[str, ...]
    min_share: float
    korean: bool
    when: bool = False  # the question asks when
    names: tuple[str, ...] = ()  # the question's proper names, lower-cased (rag/names.py)
    who: bool = False  # the question asks who: a column of names, never one of figures

    def best(self, labels: Sequence[str], names: dict[str, tuple[str, ...]] | None = None) -> list[str]:
        """The labels named best (ties kept), each named whole or by a word the other labels lack;
        a row is named by any of its names."""
        names = names or {}
        holders: dict[str, set[str]] = {}  # the labels holding each word
        for label in labels:
            for w in {w for n in names.get(label, (label,)) for w in content(n)}:
                holders.setdefault(w, set()).add(label)
        scored = []
        for label in labels:
            share, plain, hits = max((named(n, self.asked) for n in names.get(label, (label,))),
                                     key=lambda named: (*named[:2], len(named[2])))
            # named whole, by a word no other label holds, or by words no other label holds all
            # of ("UK DC total food waste" among "SWD food waste" and "UK DC total redistributed")
            distinct = share == 1 or any(len(holders[h]) == 1 for h in hits) or (
                len(hits) >= 2 and set.intersection(*(holders[h] for h in hits)) == {label})
            if max(share, plain) >= self.min_share and distinct:
                scored.append(((share, plain, len(hits)), label))  # more words named: more specific
        top = max((s for s, _ in scored), default=None)
        return [label for s, label in scored if s == top]

    def columns(self, table: FactTable, row: str) -> list[str]:
        """The columns the question names (not those whose value in this row it states: "the
        TR-106 Reinsurance structuring course" asks no course), else the one generic column."""
        stated = {f.column for f in table.facts if f.row == row and f.number is None and not f.blank
                  and named(f.value, self.asked)[0] == 1}
        columns = [c for c in table.columns if c not in stated]
        # "in the budget tracker, how much was spent": the document's name names no column, where
        # the question's other words name one ("spent to date" is "Actual to date", not "Budget 2025")
        own = tuple(w for w in self.asked if not any(same(n, w) for n in table.name_words))
        chosen = self.best(columns, table.column_names)
        if own != self.asked:
            chosen = replace(self, asked=own).best(chosen if len(chosen) > 1 else columns,
                                                   table.column_names) or chosen
        if len(chosen) > 1 and len({LIST_INDEX.sub("[]", c) for c in chosen}) == 1:
            chosen = self._list_item(table, row, chosen) or chosen
        if chosen:
            return chosen
        default = self._default(table, row, columns)
        # "who owns EDI-CX-0270" is no figure of its row: an "Actual to date" column answers no who
        return [c for c in default if any(f.column == c and f.number is None and not f.blank
                                          for f in table.facts)] if self.who else default

    def _default(self, table: FactTable, row: str, columns: list[str]) -> list[str]:
        """The column a question naming none asks of this row: the one in a currency for money,
        in per cent for a rate, the one in force, a code's one date, else the generic column."""
        if set(self.asked) & MONEY_ASKED:  # "what did MDC spend on fuel": "Fuel cost (GBP)"
            money = [c for c in columns if named(c, self.asked)[2] and any(
                f.column == c and f.row == row and f.unit in CURRENCIES for f in table.facts)]
            if len(money) == 1:
                return money
        if set(self.asked) & _RATE:  # "the known loss rate": pct_of_sales, not value_gbp
            shares = [c for c in columns if "%" in c or set(words(c)) & _PERCENT]
            if len(shares) == 1:
                return shares
        valued = [c for c in columns
                  if any(f.row == row and f.column == c and not f.blank for f in table.facts)]
        if current := in_force(valued):  # "Previous date | Revised date": the date now in force
            return [current]
        if self.when and is_code(row.lower()) and row.lower() in self.asked:
            # "when was PMP-2023-118 put into service": the one date of a row the question names by
            # its code (a row named by words may be the subject of another date: "the final report
            # of the Tern Harbour review")
            with_date = [c for c in columns
                         if any(f.row == row and f.column == c and dated(f.value) for f in table.facts)]
            if len(with_date) == 1:
                return with_date
        generic = [c for c in columns if not c or set(words(c)) & _GENERIC]
        return generic if len(generic) == 1 else (columns if len(columns) == 1 else [])

    def _list_item(self, table: FactTable, row: str, chosen: list[str]) -> list[str]:
        """Of one key in each item of a JSON list (`sla[0].service_credit`, `sla[1].service_credit`),
        the item whose other fields hold a value the question names: "the service credit if the
        laundry misses its on-time delivery target" is the item whose metric is "On-time delivery"."""
        def item(column: str) -> str:
            return column[: column.rfind("]") + 1]

        def names_item(column: str) -> bool:
            return any(f.column.startswith(item(column)) and f.column != column and f.number is None
                       and not f.blank and self._named_item(f.value, set())
                       for f in table.facts if f.row == row)

        named_items = [c for c in chosen if names_item(c)]
        return named_items if len(named_items) == 1 else []

    def subject_hits(self, table: FactTable, tables: Sequence[FactTable]) -> int:
        """How many of the question's words name this table's subject, and its document's name
        (counted again), and not every table's."""
        def holds(t: FactTable, q: str, name: bool) -> bool:
            return any(same(w, q) for w in (t.name_words if name else t.subject_words))
        return sum(holds(table, q, name) and not all(holds(t, q, name) for t in tables)
                   for q in self.asked for name in (False, True))

    def _cell_hits(self, table: FactTable, fact: Fact) -> int:
        """How many of the question's words the fact's row names and column hold, its subject not."""
        return sum(any(same(w, q) for w in table.context(fact, subject=False))
                   and not any(same(w, q) for w in table.subject_words) for q in set(self.asked))

    def keyed(self, table: FactTable) -> list[str]:
        """A JSON record's row (its key path's parent) for the one key the question names whole: a
        path is the file's structure, which a question rarely names ("the express surcharge" is
        `pricing.express_surcharge_pct`); of several rows holding that key, the one whose path the
        question names most ("executive double in Kraków": `properties.krakow.rates_per_night`)."""
        keys = [c for c in self.best(table.columns) if c and named(c, self.asked)[0] == 1]
        if len(keys) != 1:
            return []
        holding = list(dict.fromkeys(f.row for f in table.facts if f.column == keys[0]))
        share = {row: named(row, self.asked)[0] for row in holding}
        most = max(share.values(), default=0.0)
        best = [row for row in holding if share[row] == most]
        return best if len(best) == 1 and (most > 0 or len(holding) == 1) else []

    def cell(self, tables: Sequence[FactTable], noun: str | None, count: bool,
             every: bool = False) -> CellAnswer | None:
        """The cell of the one row and column named, in the tables whose subject the question names
        best; None when those give two values, or when the question asks for a thing its row and
        column do not name ("in which office is the lead": not the lead; `every` word of the
        noun for "who is the lead reinsurer")."""
        picked: list[tuple[int, FactTable, Fact]] = []
        for table in tables:
            rows = self.best(table.rows, table.aliases)
            if len(rows) != 1 and table.fields:
                rows = self.keyed(table)
            one = self.valued(table) if len(rows) != 1 else []
            # a row named by its values ("chemicals at KBW"), or of rows named alike by the values
            # named ("Liam Porter's Allergen Awareness course": one of his two)
            valued = bool(one) and (not rows or one[0] in rows)
            rows = one if valued else rows
            columns = self.columns(table, rows[0]) if len(rows) == 1 else []
            if valued:  # not by its label (CC-202): the column must be named too, not the row's one
                # other value
                columns = [c for c in columns if c in self.best(table.columns, table.column_names)]
            if len(columns) == 1:
                # the subject's words and the cell's own: "litres of diesel at SWD in November 2024"
                # is the fuel sheet's row and column, not the OTIF dashboard's (of 2024 by its name)
                picked += [(self.subject_hits(table, tables) + self._cell_hits(table, f), table, f)
                           for f in table.facts if f.row == rows[0] and f.column == columns[0]]
        most = max((hits for hits, _, _ in picked), default=0)
        picked = [(hits, table, f) for hits, table, f in picked if hits == most]
        if any(f.column for _, _, f in picked):  # a row and a column named beat a lone field ("programme")
            picked = [(hits, table, f) for hits, table, f in picked if f.column]
        if len({(f.value, f.unit) for _, _, f in picked}) != 1:
            return self._disagreement([(table, f) for _, table, f in picked])
        picked = [(hits, table, f) for hits, table, f in picked if table.top]
        if not picked:
            return None
        _, table, fact = picked[0]
        if count and not fact.blank and fact.number is None:
            return None  # "how many" is answered by a figure
        if count and fact.blank and not set(content(label_text(fact.row))) <= set(self.asked):
            return None  # "how many projects are on hold": a row a value names is counted, not read
        nouns = noun.split()[:1] + [w for w in noun.split()[1:2] if w not in STOP] if noun else []
        # the row, the column, or the table's own heading ("3. Per diem allowances")
        named_by = table.context(fact, subject=False) | set(words(fact.section.split(">")[-1]))
        if nouns and not (all if every else any)(any(same(w, n) for w in named_by) for n in nouns):
            return None
        facts = tuple(f for _, _, f in picked)
        if fact.blank:
            row, column, subject = _row_text(table, fact), fact.column, table.subject
            text = (f"표에는 {subject}의 {row} {column} 값이 없습니다." if self.korean
                    else f"The table gives no value for {column or row} of {row} in {subject}.")
            return CellAnswer("blank", text, facts)
        return CellAnswer("cell", self._said(table, fact), facts)

    def _said(self, table: FactTable, fact: Fact) -> str:
        """"In sites, Brno (headcount) is 286."."""
        row = _row_text(table, fact)
        cell = row if not fact.column or set(words(fact.column)) & _GENERIC else f"{row} ({fact.column})"
        return (f"{table.subject}의 {cell} 값은 {shown_value(fact, table)}입니다." if self.korean
                else f"In {table.subject}, {cell} is {shown_value(fact, table)}.")

    def _disagreement(self, picked: Sequence[tuple[FactTable, Fact]]) -> CellAnswer | None:
        """Two documents' cells of the row and column named, one value each, that differ (a staff
        directory's extension and the intranet's): each said and cited, so the pipeline shows the
        sources disagree; None for one document's two values, a blank, or none best-ranked."""
        values: dict[str, set[tuple[str, str]]] = {}
        for _, fact in picked:
            values.setdefault(fact.doc, set()).add((fact.value, fact.unit))
        columns = sorted((set(content(f.column)) for _, f in picked), key=len)
        if len(values) < 2 or any(len(v) != 1 for v in values.values()) or any(f.blank for _, f in picked) \
                or not any(table.top for table, _ in picked) or not all(c <= columns[-1] for c in columns):
            return None  # of one column: "Extension" and "extension", "rate" and "Internal rate (GBP)"
        per_doc = list({fact.doc: (table, fact) for table, fact in picked}.values())  # one value each
        return CellAnswer("conflict", " ".join(self._said(table, fact) for table, fact in per_doc),
                          tuple(fact for _, fact in per_doc))

    def value_matches(self, tables: Sequence[FactTable]
                      ) -> list[tuple[FactTable, list[tuple[str, str]], list[Fact]]]:
        """Per table, the columns whose word values the question names (the named columns, if
        any of them hold one), as (table, [(column, the value named)], the first column's cells
        of the rows holding a named value in every such column): "how many assets at Brno are
        in repair" is plant Brno and status "in repair". A list cell ("hydraulic testing; PLC
        programming") holds each of its items."""
        found = []
        for table in (t for t in tables if len(t.rows) > 1):
            by_column: dict[str, list[tuple[Fact, str]]] = {}
            flags = {c for c in table.columns if c and named(c, self.asked)[0] == 1 and all(
                f.value.strip().lower() in _YES | _NO for f in table.facts if f.column == c and not f.blank)}
            common = _common_words(table)
            for fact in table.facts:  # words, in a column (a JSON key of its own has none)
                worded = fact.column and fact.number is None and not fact.blank
                # a JSON list's items are one column: "non_conformities[1].severity" is major too
                column = LIST_INDEX.sub("[]", fact.column)
                if fact.column in flags:  # "how many courses are mandatory": Mandatory is "Yes"
                    if fact.value.strip().lower() in _YES:
                        by_column.setdefault(column, []).append((fact, fact.value.strip()))
                elif worded and (item := self._named_item(fact.value, common.get(fact.column, set()))):
                    by_column.setdefault(column, []).append((fact, item))
            for column, hits in by_column.items():  # the value named most fully: "final water pump 1",
                # not "raw water pump 1"; of those, the longest: "hydraulic testing", not "hydraulics"
                full = max(named(item, self.asked)[0] for _, item in hits)
                hits = [(f, item) for f, item in hits if named(item, self.asked)[0] == full]
                most = max(len(content(item)) for _, item in hits)
                by_column[column] = [(f, item) for f, item in hits if len(content(item)) == most]
            listed = list(dict.fromkeys(LIST_INDEX.sub("[]", c) for c in table.columns))
            columns = [c for c in self.best(listed) if c in by_column]
            # a code the question gives is a condition wherever it stands: "the Ashby Lane (ALW)
            # people on the on-call rota" is site ALW as well as on call; so is a name of two words
            # or more given whole ("Liam Porter's Allergen Awareness course": name and course)
            coded = [c for c in by_column if c not in columns and all(
                _coded(i) or (i[:1].isupper() and len(content(i)) >= 2 and named(i, self.asked)[0] == 1)
                for _, i in by_column[c])]
            columns = [*columns, *coded] if columns else list(by_column)
            if not columns or any(len({item.lower() for _, item in by_column[c]}) != 1 for c in columns):
                continue  # two values named in one column: "Brno or Linz" is no one condition
            rows = set.intersection(*({f.row for f, _ in by_column[c]} for c in columns))
            cells = list({f.row: f for f, _ in by_column[columns[0]][::-1] if f.row in rows}.values())[::-1]
            if cells:
                found.append((table, [(c, by_column[c][0][1]) for c in columns], cells))
        return found

    def pinned(self, table: FactTable) -> bool:
        """Whether the question names one row of the table by two of its values and one of its
        other columns ("when does the Voltex contract at Castlebrook run out"): a question of that
        register wherever it ranks, as prose ranked above a register seldom gives its cell."""
        found = self.value_matches([table])
        if not found or len({f.row for f in found[0][2]}) != 1 or len(found[0][1]) < 2:
            return False
        by_value = {c for c, _ in found[0][1]}
        return len([c for c in self.best(table.columns, table.column_names) if c not in by_value]) == 1

    def reads(self, table: FactTable) -> bool:
        """Whether the question names one row of the table and one of its columns, each by its
        own words: "the EHS lead at Lancaster (LNC)" reads a site register's LNC row, ehs_lead."""
        return len(self.best(table.rows, table.aliases)) == 1 \
            and len(self.best(table.columns, table.column_names)) == 1

    def valued(self, table: FactTable) -> list[str]:
        """The one row of the table whose values the question names, each in its column: "the
        forecast for chemicals at Kellbrook (KBW)" is the row of Cat Chemicals and Site KBW."""
        found = self.value_matches([table])
        rows = {f.row for f in found[0][2]} if found else set()
        return list(rows) if len(rows) == 1 else []

    def _named_item(self, value: str, common: set[str]) -> str:
        """The value, or the item of a list cell, that the question names: all its words, or
        all but those most of its column's values share ("the lift contract" is service "Lift
        maintenance" where most services are some maintenance), or two thirds of those and two
        at least ("the bulk nitrogen supply contract" is "Bulk liquid nitrogen"), or its proper name."""
        items = [i.strip() for i in value.split(";")] if ";" in value else [value]
        def said(item: str) -> bool:
            own = [w for w in content(item) if w not in common]
            hits = len(named(" ".join(own), self.asked)[2]) if own else 0
            return named(item, self.asked)[0] == 1 or self._by_name(item) or (
                bool(own) and (hits == len(own) or (hits >= 2 and 3 * hits >= 2 * len(own))))
        return next((i for i in items if content(i) and said(i)), "")

    def _by_name(self, item: str) -> bool:
        """Whether the question names the item by its proper name alone: "the Voltex contract" is
        supplier "Voltex Power Services" (a name the question writes as one, past its first word)."""
        head = item.split()[0] if item.split() else ""
        return head[:1].isupper() and not is_code(head.lower()) and head.lower() in self.names
