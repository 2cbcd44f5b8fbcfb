"""Answers computed over a table's rows as a whole, with no LLM (rag/cells.py asks them of the
tables a question names no one cell of): how many rows hold the values named (`count`), the one
row that does (`select`), and two rows set against each other (`compared`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from rag.fact_tables import FactTable
from rag.labels import content, is_code, meets, named, same
from rag.table_question import CellAnswer, TableQuestion, conditions, dated, shown_value
from rag.text import YEAR


def count(ask: TableQuestion, tables: Sequence[FactTable], noun: str | None = None,
          top: Sequence[FactTable] = ()) -> CellAnswer | None:
    """How many rows of one table hold the value the question names in one column; with no
    value named, how many rows the one table (of `tables`, else of the `top` chunks' tables)
    has whose row labels' header, or the header of a column naming its rows, is the counted `noun`
    ("how many layers does the programme have": its rows under "layer"; "how many items are on the
    checklist": "No. | Check item")."""
    # A question naming a row ("how many people work at the Brno plant") asks about that row.
    found = [hit for hit in ask.value_matches(tables) if
             len(ask.best(hit[0].rows, hit[0].aliases)) != 1]
    if not found and noun:
        def header(table: FactTable) -> str | None:
            return next((h for h in (table.label, *table.naming)
                         if any(same(w, noun) for w in content(h))), None)

        counted = next(filter(None, ([t for t in group if len(t.rows) > 1 and header(t)]
                                     for group in (tables, top))), [])
        if len(counted) != 1:
            return None
        table = counted[0]
        label = header(table)
        # a word naming one of its columns is a condition on it that no value matched: "how many
        # samples are still waiting for a result" is not every sample
        unread = tuple(w for w in ask.asked if not is_code(w) and not meets([w], [noun])
                       and not any(same(n_, w) for n_ in table.subject_words))
        unmet = [c for c in table.columns if c and c != label and named(c, unread)[2]]
        # but a year the question gives in the one date column it names: "how many contracts end
        # in 2025" counts the rows whose End_Dt is in 2025 (not those that start in it)
        years = [w for w in ask.asked if YEAR.fullmatch(w)]
        column = unmet[0] if len(unmet) == 1 and len(years) == 1 else ""
        if column and any(dated(f.value) for f in table.facts if f.column == column):
            rows_in = {f.row for f in table.facts if f.column == column and years[0] in f.value}
            table = replace(table, facts=tuple(f for f in table.facts if f.row in rows_in))
        elif unmet:
            return None
        n, rows = len(table.rows), table.listed(table.rows)
        within = f" ({column}: {years[0]})" if column else ""
        text = (f"{table.subject}에는 {label} {n}개가 있습니다{within} ({rows})." if ask.korean
                else f"{table.subject} lists {n} {label}{'s' * (n != 1)}{within}: {rows}.")
        return CellAnswer("count", text, tuple({f.row: f for f in table.facts[::-1]}.values())[::-1])
    if len(found) > 1:  # "on hold in the capex register": the table whose subject the question names
        hits = [ask.subject_hits(hit[0], [h[0] for h in found]) for hit in found]
        found = [hit for hit, n in zip(found, hits) if n == max(hits)]
    if len(found) != 1:
        return None
    table, named_values, cells = found[0]
    titled = (*table.subject_words, *table.name_words)  # and the rows counted ("how many courses")
    own = tuple(w for w in ask.asked
                if not any(same(t, w) for t in titled) and not (noun and meets([w], [noun])))
    # a column holding a code or year the question gives was read by it ("reported in 2024")
    coded = {f.column for f in table.facts for w in ask.asked if is_code(w) and w in f.value.lower()}
    if any(c and c not in dict(named_values) and c not in coded and named(c, own)[0] == 1
           for c in table.columns):
        return None  # "the Kellbrook assets at the top criticality rating": Crit, which no value matched
    n, rows = len(cells), table.listed([f.row for f in cells])
    text = (f"{table.subject}에서 {conditions(named_values, True)}인 행은 {n}개입니다 ({rows})."
            if ask.korean else
            f"In {table.subject}, {n} row{'s' * (n != 1)} {'have' if n != 1 else 'has'} "
            f"{conditions(named_values, False)}: {rows}.")
    return CellAnswer("count", text, tuple(cells))


def select(ask: TableQuestion, tables: Sequence[FactTable]) -> CellAnswer | None:
    """"Which test failed?": the one row holding the value the question names, in a table none
    of whose rows the question names ("which region is RO-2024-02 for" asks for no row)."""
    found = [hit for hit in ask.value_matches(tables) if
             len(ask.best(hit[0].rows, hit[0].aliases)) != 1]
    if len(found) != 1 or len(found[0][2]) != 1:
        return None
    table, named_values, (fact,) = found[0]
    row = table.shown(fact.row)
    text = (f"{table.subject}에서 {conditions(named_values, True)}인 것은 {row}입니다." if ask.korean
            else f"In {table.subject}, {row} has {conditions(named_values, False)}.")
    return CellAnswer("cell", text, (fact,))


def compared(ask: TableQuestion, tables: Sequence[FactTable]) -> CellAnswer | None:
    """Two rows of one table the question names ("Leeds vs Bristol", "Glasgow or Southampton")
    and the one figure column it names (or the table's one figure column): both cells, and
    which is higher and by how much. None unless exactly one table gives such a pair."""
    found = []
    for table in tables:
        names = {r: table.aliases.get(r, (r,)) for r in table.rows}
        holding = Counter(w for r in table.rows for w in {w for n in names[r] for w in content(n)})
        # each named whole, or by a word no other row's names hold ("Leeds" for Leeds Depot)
        rows = [r for r in table.rows if any(
            share >= ask.min_share or any(holding[h] == 1 for h in hits)
            for share, _, hits in (named(n, ask.asked) for n in names[r]))]
        filled = {(f.row, f.column) for f in table.facts if f.number is not None}
        figures = [c for c in table.columns if c and all((r, c) in filled for r in rows)]
        hits = {c: len(named(c, ask.asked)[2]) for c in figures}
        most_hits = max(hits.values(), default=0)
        most = [c for c in figures if hits[c] == most_hits > 0]
        columns = ask.best(figures, table.column_names) or (most if len(most) == 1 else [])
        if len(rows) == 2 and len(columns) == 1:
            cells = [next(f for f in table.facts if f.row == r and f.column == columns[0]) for r in rows]
            found.append((named(columns[0], ask.asked)[0], table, cells))
    # of two tables, the one whose column the question names whole: "in December 2024" is the
    # dashboard's "Dec 2024", not a slide's "OTIF Q4 2024"
    found = [hit for hit in found if hit[0] == max(share for share, _, _ in found)]
    if len(found) != 1:
        return None
    _, table, cells = found[0]
    high, low = sorted(cells, key=lambda f: f.number or 0.0, reverse=True)
    gap = (high.number or 0.0) - (low.number or 0.0)
    by = f"{gap:,.0f}" if gap == int(gap) else f"{gap:,.2f}".rstrip("0")
    one, two = (f"{table.shown(f.row)} {shown_value(f, table)}" for f in cells)
    if high.number == low.number:
        said = "같습니다" if ask.korean else "they are the same"
    elif ask.korean:
        said = f"{table.shown(high.row)}이(가) {by}만큼 높습니다"
    else:
        said = f"{table.shown(high.row)}'s is higher, by {by}"
    text = (f"{table.subject}의 {high.column}: {one}, {two}; {said}." if ask.korean
            else f"In {table.subject}, {high.column}: {one} and {two}; {said}.")
    return CellAnswer("cell", text, tuple(cells))
