"""The guards on a cell answer (rag/cells.py): whether another candidate gives the row another
figure (`contradicted`) or speaks of it first (`named_ahead`), whether the question asks another
thing through the cell (`through_another`), names another row's place (`named_otherwise`), a
thing the table never names (`unheld_name`) or a premise the cell contradicts (`given_otherwise`),
and whether a count is of this table's things
(`counted_here`) or stated in prose (`count_stated`); with the helpers they share: a table of a
fact (`table_of`) and a subject that names another period's code (`rules_out`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from llama_index.core.schema import MetadataMode, NodeWithScore

from rag.claims import claims
from rag.codes import given_codes
from rag.fact_tables import FactTable
from rag.facts import Fact
from rag.hop_question import asked
from rag.labels import STOP, content, is_code, meets, same, words
from rag.places import key, places
from rag.premise_words import CALENDAR, MONTHS
from rag.text import hangul_script, line_sentences, split_sentences

WHERE = re.compile(r"\bwhere\b|어디", re.IGNORECASE)
_RELATIVE = re.compile(r"\b(?:who|whoever|whom|that)\b", re.IGNORECASE)
_KEY_LINE = re.compile(r"^[\w\[\]-]+(?:[._][\w\[\]-]+)*:\s")  # a JSON field's line ("clauses.hours: 72")


def table_of(fact: Fact, tables: Sequence[FactTable]) -> FactTable | None:
    return next((t for t in tables if (t.doc, t.key) == (fact.doc, fact.table)), None)


def rules_out(subject: frozenset[str] | set[str], codes: Sequence[str]) -> bool:
    """Whether a subject holds, instead of a code of the question, another of its form that the
    question does not name (Q3 where Q2 is asked, SI-2024-05 where SI-2024-03, 2024 where 2023; not
    "the 2025 capacity plan" asked about December 2024)."""
    def shape(word: str) -> str:
        return re.sub(r"[a-z]", "a", re.sub(r"\d", "0", word))

    others = [w for w in subject if not any(same(w, c) for c in codes)]
    return any(not any(same(w, c) for w in subject) and any(shape(w) == shape(c) for w in others)
               for c in codes if re.search(r"[a-z]", c) or re.fullmatch(r"\d{4}", c))


def named_ahead(facts: Sequence[Fact], candidates: Sequence[NodeWithScore]) -> bool:
    """Whether a chunk of another document ranked above every chunk of the cells' documents (two
    that agree are one answer) names the first cell's row and column in a sentence or table row
    with a figure or date (a table the facts could not read, or prose about that row's value; a
    report naming the piling rig is no word on its replacement value, nor "Lighting commissioning
    is not affected" on its date)."""
    fact, docs, chunks = facts[0], {f.doc for f in facts}, {f.chunk_id for f in facts}
    needed = [*content(fact.row), *(content(fact.column) if fact.column else ())]
    for node in (c.node for c in candidates):
        if node.metadata.get("doc") in docs or node.node_id in chunks:  # a correction's chunk is the cell's
            return False
        for sentence in line_sentences(node.get_content(metadata_mode=MetadataMode.NONE)):
            said = words(sentence)  # one with a figure or date: "stays as agreed" gives none
            if any(is_code(w) for w in said) and all(any(same(w, q) for q in said) for w in needed):
                return True
    return False


def counted_here(noun: str, fact: Fact, tables: Sequence[FactTable], question: Sequence[str]) -> bool:
    """Whether the counted noun is a thing of the fact's table: its subject (the document's name,
    its title) names it, or a column, or a cell ("how many services" of the service catalogue,
    "how many Sev1 incidents" of an incident register's severities); or the `question`'s words
    name the table's document ("how many people listed in the staff directory")."""
    table = table_of(fact, tables)
    if table is None or sum(any(same(n, q) for q in question) for n in table.name_words) >= 2:
        return True
    held = set(table.subject_words) | {w for c in table.columns for w in words(c)} \
        | {w for f in table.facts if f.number is None for w in words(f.value)}
    return meets(held, (noun,))


def through_another(question: str, fact: Fact) -> bool:
    """Whether the question asks a thing (rag/hop.py `asked`: "the job title") through another a
    relative clause describes ("of the person who reported ...", "of whoever leads ...") and the
    cell's row and column name none of its words: the cell is the other thing's (the reporter's
    id), and the hop reads the asked one. "The street address of the Toronto headquarters"
    describes no other thing."""
    if not _RELATIVE.search(question):
        return False
    wanted = asked(question)
    held = words(f"{fact.row} {fact.column}")
    return wanted.through and bool(wanted.words) and not WHERE.search(question) \
        and not meets(held, wanted.words)


def given_otherwise(question: str, fact: Fact) -> str | None:
    """The name an English question puts before the row it asks ("the Toronto headquarters") where
    the cell's words give another ("Dublin, Ireland") and neither its row nor its column names it:
    the question's premise, which the cell contradicts. None otherwise. Read only in a table of one
    value column: in a register the name may stand for another column ("the Graz pump"), which
    the premise check's `swapped` reads."""
    if fact.number is not None or not fact.value.strip() or hangul_script(question):
        return None
    match = re.search(rf"(?<=\w\W)\s*\b([A-Z][a-z][\w-]+)\s+(?i:{re.escape(fact.row.strip())})\b", question)
    if match is None or match.group(1).lower() in STOP:
        return None
    given = words(match.group(1))
    held = words(f"{fact.value} {fact.row} {fact.column}")
    return None if meets(held, given) else match.group(1)


_CALENDAR = CALENDAR | {m[:3] for m in MONTHS} | {"sept"}  # with the months' short forms
_PROPER = re.compile(r"(?<![.?!]\s)(?<!^)\b[A-Z][a-z][\w-]+")  # a capitalised word not opening a sentence
_NAME_RUN = re.compile(r"(?<![.?!]\s)(?<!^)\b[A-Z][a-z][\w-]+(?:\s+[A-Z][a-z][\w-]+)+")  # two or more of them


def _held(table: FactTable) -> set[str]:
    """The words of the table's subject, headers, row labels and cells."""
    return {*table.subject_words, *(w for f in table.facts for w in words(f"{f.row} {f.column} {f.value}"))}


def unheld_name(question: str, table: FactTable) -> str | None:
    """A name of two or more capitalised words the question gives ("the Pennine Medical Gases
    contract"), not spelled out by a code, most words of which the table does not hold: the table
    speaks of other things, whatever row and column the question's other words meet. None
    otherwise."""
    runs = [m.group() for m in _NAME_RUN.finditer(question)]
    if not runs:  # most questions
        return None
    held, coded = _held(table), given_codes(question)

    def unheld(run: str) -> bool:  # most of its words held: "Gas" holds no "Pennine Medical Gases"
        named = [w for w in words(run) if w not in STOP | _CALENDAR]
        initialism = "".join(w[0] for w in named)  # "Net Promoter Score" is the column NPS
        return 2 * sum(meets(held, [w]) for w in named) < len(named) and not (
            len(named) >= 2 and initialism in held)

    return next((run for run in runs if not coded.get(run.split()[0]) and unheld(run)), None)


def named_otherwise(question: str, fact: Fact, table: FactTable) -> str | None:
    """The proper name (a site, an office; no month) the question gives that no cell or header of
    the table holds, nor its subject, where the row's label names another the question does not:
    the row is another site's. None otherwise."""
    names = [m.group() for m in _PROPER.finditer(question) if m.group().lower() not in STOP | _CALENDAR]
    if not names:  # most questions: the table's words are not read
        return None
    held = _held(table)
    coded = given_codes(question)  # "Kellbrook (KBW)": the code stands for the name
    asked = [name for name in names
             if not meets(held, words(name)) and not meets(held, words(coded.get(name, "")))]
    label = " ".join(table.aliases.get(fact.row, (fact.row,))[:2])  # its label and its name
    own = [m.group() for m in re.finditer(r"\b[A-Z][a-z][\w-]+", label)
           if m.group().lower() not in STOP and not meets(words(question), words(m.group()))]
    return asked[0] if asked and own else None


def count_stated(noun: str | None, doc: str, candidates: Sequence[NodeWithScore]) -> bool:
    """Whether a sentence of the table's document among the candidates gives a figure of the
    counted noun ("audited 42 suppliers"): the table then lists some of them, not all."""
    counted = key(noun) if noun else None
    return counted is not None and any(
        claim.amount is not None and claim.amount.unit is None and counted in dict(claim.words[:2])
        for node in candidates if node.node.metadata.get("doc") == doc
        for line in node.node.get_content(metadata_mode=MetadataMode.NONE).splitlines()
        if not line.lstrip().startswith("|") for claim in claims(line))


def contradicted(fact: Fact, candidates: Sequence[NodeWithScore], codes: Sequence[str]) -> bool:
    """Whether a sentence of prose of another candidate document (not one the question's codes rule
    out) names the cell's row and column and gives figures, none of them the cell's ("Hamburg
    (opened in 2017)" against a table's 2016). Other tables' cells were weighed by `cell` already."""
    if fact.number is None:
        return False
    needed = [*content(fact.row), *(content(fact.column) if fact.column else ())]
    for node in (c.node for c in candidates if c.node.metadata.get("doc") != fact.doc
                 and c.node.node_id != fact.chunk_id):
        name = str(node.metadata.get("doc", ""))
        # the day a note was written ("notes-2024-11-20") is no year its subject is of
        stem = re.sub(r"(?:19|20)\d\d[-_.]\d\d[-_.]\d\d(?!\d)", " ", name.rsplit(".", 1)[0])  # not SI-2024-05
        if rules_out(frozenset(words(f"{stem} {stem.replace('-', ' ')}")), codes):
            continue
        for sentence in split_sentences(node.get_content(metadata_mode=MetadataMode.NONE)):
            if "|" in sentence or (name.lower().endswith(".json") and _KEY_LINE.match(sentence)):
                continue
            said = words(sentence)
            figures = {w.replace(",", "") for w in said if w.replace(",", "").replace(".", "").isdigit()}
            # none of the cell's figure, or the cell's figure as the old side of a correction
            # ("should read 2.4, not 3.4")
            other = fact.value.replace(",", "") not in figures or any(
                p.former and any(a.value == fact.number for a in p.amounts) for p in places(sentence))
            if figures and other and all(any(same(w, q) for q in said) for w in needed):
                return True
    return False
