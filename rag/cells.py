"""Answering a question from table cells (rag/facts.py), with no LLM: a question that names a row
and a column (or a measure) of one table gets that cell; a blank cell is said to be blank, never
filled from a neighbour; "which ... highest/lowest" and "how many ..." are computed over the
table's rows. Only facts of the retrieved documents are read (the user's filters hold); a question
that names no cell clearly, or two cells equally, gets None: the normal pipeline answers.

A label is named when `min_share` of its words are among the question's (rag/labels.py). A code
the question gives that a candidate table or document holds must be held by the answer's row,
column or document ("SI-2024-05" rules out SI-2024-03's cells).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache, lru_cache
from dataclasses import dataclass, replace

from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore

from rag.corrections import corrected_figure
from rag.postponements import postponements
from rag.places import dates
from rag.premise_words import DEADLINE, ENDING, STARTING
from rag.cell_guards import (WHERE, contradicted, count_stated, counted_here, given_otherwise, named_ahead,
                             named_otherwise, rules_out, table_of, through_another, unheld_name)
from rag.fact_tables import FactTable, key_path_names, label_text
from rag.hop_question import asked as asked_for
from rag.initialisms import SHORT, definitions, spelled_out
from rag.list_count import counted_list
from rag.facts import Fact
from rag.names import names
from rag.labels import STOP, content, is_code, is_place, same, words
from rag.lexical import LexicalIndex
from rag.table_joins import joined, keys, through
from rag.table_bounds import Bound, bounded_count
from rag.table_extremes import extreme_row
from rag.table_rows import compared, count, select
from rag.table_question import CellAnswer, TableQuestion, currency_field, dated
from rag.text import YEAR, hangul_script, line_sentences, markdown_tables
from rag.units import named_units, value

_VALUE = re.compile(r"\b(?!what\b|which\b|the\b|its\b|a\b)[a-z]{3,} value\b", re.I)
_MAX, _MIN = (re.compile("|".join(rf"\b{s}\b" if s.isascii() else s for s in spellings.split(",")), re.I)
              for spellings in ("most expensive,costliest,priciest,dearest,"
                                "highest,largest,biggest,greatest,most,maximum,longest,heaviest,fastest,"
                                "latest,newest,most recent,[a-z]+ed last,[a-z]+ed most recently,가장 비싼,"
                                "최고,최대,최다,가장 높,가장 크,가장 큰,가장 많,가장 길,가장 무거,가장 최근",
                                "cheapest,least expensive,"
                                "lowest,smallest,least,fewest,minimum,shortest,lightest,slowest,"
                                "earliest,oldest,[a-z]+ed first,가장 싼,가장 저렴,"
                                "최저,최소,가장 낮,가장 작,가장 적,가장 짧,가장 가벼,가장 오래"))
_BOUND = re.compile(r"\bat (?:least|most)\b", re.IGNORECASE)
# Superlatives whose direction the measure gives: the best compliance is the highest, the best
# shrink the lowest
_BEST, _WORST = re.compile(r"\bbest\b|가장 좋", re.I), re.compile(r"\bworst\b|가장 나쁜|가장 나빴", re.I)
_SUPERLATIVES = (("max", _MAX), ("min", _MIN), ("best", _BEST), ("worst", _WORST))
# Superlatives of time: they compare a date column ("the oldest in-service date", "the latest audit").
# "installed first", "hired most recently": the order of a date column too.
_TIME = re.compile(r"\b(?:latest|newest|most recent|earliest|oldest|[a-z]+ed (?:first|last|most recently))\b"
                   r"|가장 최근|가장 오래", re.I)
# The measure a superlative implies when the question names no column: "the shortest course" asks
# for its duration.
_MEASURES = {
    **dict.fromkeys(("shortest", "longest", "가장 짧", "가장 길"), frozenset(
        "duration length hours days weeks months years time minutes 시간 기간 길이".split())),
    **dict.fromkeys(("heaviest", "lightest", "가장 무거", "가장 가벼"),
                    frozenset("weight mass kg 무게 중량".split())),
    **dict.fromkeys(("fastest", "slowest"), frozenset("speed velocity kmh 속도".split())),
    **dict.fromkeys(("most expensive", "costliest", "priciest", "dearest", "cheapest",
                     "least expensive", "가장 비싼", "가장 싼", "가장 저렴"),
                    frozenset("cost costs price prices value fee fees charge charges amount gbp eur usd "
                              "가격 비용 금액".split())),
}
# Tenure: "has been with Kestrel the longest", "longest-serving", "worked here the shortest".
_TENURE = re.compile(r"\b(?:been (?:with|at|here|in)|serv(?:ed|ing)|employed|worked (?:here|for|at|in))\b",
                     re.IGNORECASE)
# Two things set against each other: "Leeds vs Bristol", "which burned more, Glasgow or Southampton".
_MORE = r"\b(?:more|less|fewer|higher|lower|better|worse|bigger|smaller|larger)\b"
_PAIR = re.compile(rf"\b(?:vs\.?|versus|compared (?:to|with))\s|{_MORE}.*\bor\b|\bor\b.*{_MORE}"
                   r"|중 (?:어느|누가)", re.IGNORECASE)
_WHICH = re.compile(r"^\s*(?:which|who)\b|어느|누가", re.IGNORECASE)
_SPELLED_OUT = re.compile(r"(?<![\w-])[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+")  # capitalised words in a run
_WHY = re.compile(r"\bwhy\b|\bhow come\b|왜|이유", re.IGNORECASE)
_WHEN = re.compile(r"\bwhen\b|언제", re.IGNORECASE)
_WHO_ASKED = re.compile(r"\bwho(?:m|se)?\b|누가|누구", re.IGNORECASE)
# The noun after which/what, or its next word when the first qualifies it ("what daily allowance").
_NOUN = re.compile(r"\b(?:which|what)\s+([A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*)?)", re.IGNORECASE)
# "What share of jobs ...": the figure's kind (a percentage), not the thing a column names.
_PROPORTION = frozenset("share percentage percent proportion fraction ratio".split())
_WHO = re.compile(r"\bwho\s+(?:is|was|are|were)\s+the\s+([A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*)?)",
                  re.IGNORECASE)
# "how many of our contracts": the noun after the determiner
_COUNTED = re.compile(r"\bhow many\s+(?:of\s+(?:our|the|these|those|your|its|their)\s+)?([A-Za-z][\w-]*)"
                      r"|([가-힣]{2,}?)(?:은|는|이|가)?\s*몇", re.IGNORECASE)
# "the number of samples" counts; "the serial number of the titrator" asks an identifier.
_COUNT = re.compile(r"\bhow many\b|(?:^|\b(?:the|a|total|overall|what)\s+)number of\b"
                    r"|몇\s*(?:개|건|번|명|행|곳|대|회)?", re.IGNORECASE)
_LOCATION = frozenset({"doc", "page", "page_end", "slide", "section", "sections", "table_id", "ocr",
                       "document_id", "doc_id", "ref_doc_id"})


@dataclass
class CellLookup:
    """Answers from the cell facts of the retrieved documents (`answer`), or None."""

    index: LexicalIndex
    enabled: bool = True
    min_share: float = 0.75  # of a label's words the question must name
    top_chunks: int = 3  # the table must be in one of the best-ranked candidate chunks
    newer: Callable[[str | None], list[str]] = lambda doc: []  # the documents superseding or correcting one
    codes: Callable[[], dict[str, str]] = dict  # code -> the name it stands for (rag/codes.py)

    @classmethod
    def from_settings(cls, settings, store, newer: Callable[[str | None], list[str]] | None = None,
                      codes: Callable[[], dict[str, str]] = dict) -> CellLookup:
        section = settings.facts
        return cls(store.lexical, section.enabled, section.min_share, section.top_chunks,
                   newer or (lambda doc: []), codes)

    def answer(self, question: str, candidates: Sequence[NodeWithScore],
               lifted: frozenset[str] = frozenset(),
               fetch: Callable[[str], list[NodeWithScore]] | None = None,
               beyond: Sequence[NodeWithScore] = ()) -> CellAnswer | None:
        """The cell answer, or None. `lifted`: the chunks currency ranked above the chunks of the
        documents they supersede or correct (rag/currency.py): each widens the best-ranked window
        by one, so an erratum's prose put first does not push the table asked out of it. `fetch`:
        a retrieval within the asker's filters, run once for the ids of the rows the question
        names by value where no candidate register gives them (a join of two registers).
        `beyond`: chunks retrieved but ranked below the candidates; a table of their documents
        is read only where the question names one of its rows and one of its columns
        (`TableQuestion.reads`, `pinned`): the ranker puts prose about a site above the register
        that holds its cell."""
        if not self.enabled or not candidates or _WHY.search(question):
            return None  # a reason is never a cell
        window = self.top_chunks + sum(c.node.node_id in lifted
                                       for c in candidates[: self.top_chunks + len(lifted)])
        asked = [w for w in words(question) if w not in STOP]
        asked += ["value"] * bool(_VALUE.search(question))  # "the annual value": a column's word
        # "in-service" names the column "in_service" (whose "in" is a stop word): its parts too
        asked += [part for w in asked if "-" in w and not is_code(w)
                  for part in w.split("-") if part not in STOP]
        if _WHEN.search(question):  # "when does it run out": the end's date column, not the start's
            asked += ["date", "날짜", "일자", *(["end", "expiry", "until"] * bool(ENDING.search(question))),
                      *(["start"] * bool(STARTING.search(question)))]
        if DEADLINE.search(question):  # "the cut-off for raising orders": the row "Last date to raise orders"
            asked += ["deadline", "last", "date", "due", "마감", "기한"]
        ask = TableQuestion(tuple(asked), self.min_share, hangul_script(question),
                            bool(_WHEN.search(question)), tuple(n.lower() for n in names(question)),
                            bool(_WHO_ASKED.search(question)))
        pair = bool(_PAIR.search(question))  # two things set against each other
        ranked_docs = {c.node.metadata.get("doc") for c in candidates}
        below = [c for c in beyond if c.node.metadata.get("doc") not in ranked_docs]
        stored = self._tables([*candidates, *below], window)
        held = _held_codes(stored, asked, either=pair)
        tables, restated = self._current(held, candidates, window)
        # a document ranked out of the candidates is read only where the question names no candidate
        # document more ("how many staff in the capability matrix": not the partner review's Seoul row)
        named_most = max((ask.subject_hits(t, stored) for t in stored if t.doc in ranked_docs), default=0)
        tables = [t if t.top or not (ask.pinned(t) or (t.doc not in ranked_docs and ask.reads(t)
                                                        and ask.subject_hits(t, stored) >= named_most))
                  else replace(t, top=True) for t in tables]
        tables = [t for t in tables if t.top or t.doc in ranked_docs]
        top = [t for t in tables if t.top]
        ranking = _BOUND.sub(" ", question)  # "at least one major finding" ranks nothing
        if not top and any(pattern.search(ranking) for _, pattern in _SUPERLATIVES):
            # "which region had the biggest refund bill": the best-ranked document's table, ranked
            # below its summary's prose
            top = [t for t in tables if t.doc == candidates[0].node.metadata.get("doc")]
        if not top:
            return compared(ask, tables) if pair else (
                self._listed(question, ask, candidates[:window]) or self._linked(question, ask, stored))
        # A question naming no row (which is highest, how many) reads the tables of the
        # best-ranked chunk that holds any; one naming a row and a column, any of the top chunks'.
        lead = next(filter(None, ([t for t in top if node.node.node_id in {f.chunk_id for f in t.facts}]
                                  for node in candidates[:window])), top)
        # "in the test register": the one document the question names, before the best-ranked chunk's
        hits = {t.doc: ask.subject_hits(t, tables) for t in top}
        if (most := max(hits.values())) >= 2 and len([d for d, h in hits.items() if h == most]) == 1:
            lead = [t for t in top if hits[t.doc] == most]
        # a table some row of which a newer document restates is computed over by no one
        top, lead = ([t for t in group if (t.doc, t.key) not in restated] for group in (top, lead))
        # computed over the best-ranked chunk's tables, else the top chunks', else the candidate
        # documents' ("the best compliance": the report's table, ranked below the minutes)
        groups = (lead, top, tables)
        widening = [group for i, group in enumerate(groups) if group not in groups[:i]]
        labels = [label.lower() for t in tables for label in (*t.rows, *t.columns)]
        extreme = next(((kind, m.group().lower()) for kind, pattern in _SUPERLATIVES
                        for m in pattern.finditer(ranking)  # not a label's: "최대 하중"
                        if all(m.group() not in label for label in labels)), None)
        noun = next((m.group(1).lower() for m in _NOUN.finditer(question)  # "in which office": office
                     if m.group(1).split()[0].lower() not in STOP | _PROPORTION), None)
        # a name in capitalised words ("what Net Promoter Score": the column NPS) is no kind of thing
        spelled = ({w.lower() for w in run.split()} - STOP for run in _SPELLED_OUT.findall(question))
        if noun and any(set(noun.split()) <= run for run in spelled if len(run) >= 2):
            noun = None
        if extreme and extreme[1] in ("longest", "shortest") and _TENURE.search(question):
            # "been with us the longest" is the earliest start: a start date's order
            extreme = ("min" if extreme[1] == "longest" else "max", "earliest")
            ask = replace(ask, asked=(*ask.asked, "start", "joined", "hired"))
        if extreme:
            time = bool(_TIME.search(extreme[1]))  # of the top chunks' tables: a date column is named
            measure = _MEASURES.get(extreme[1], frozenset())
            if time:  # "installed first" names the column "install_date"
                ask = replace(ask, asked=(*ask.asked, "date", "날짜", "일자"))
            kind, noun_ = extreme[0], (noun or "").split(" ")[0]
            return next(filter(None, (extreme_row(ask, kind, group, measure, time, noun_)
                                      for group in ([top] if time else widening))), None)
        if pair and (both := compared(ask, top) or compared(ask, tables)):
            # "Leeds vs Bristol, who had the better on-time delivery": both cells, compared (in a
            # table below the window too: two rows and a column named are seldom a chance)
            return both
        if _COUNT.search(question) and (bound := Bound.of(question)) and (bounded := next(filter(None, (
                bounded_count(ask, bound, group) for group in widening)), None)):
            return bounded  # "in how many quarters was SWD below 99%": its rows within the bound
        who = _WHO.search(question)  # "who is the lead reinsurer": a lead who is no reinsurer is not asked
        found = ask.cell(tables, noun or (who and who.group(1).lower()), bool(_COUNT.search(question)),
                         every=bool(who) and not noun)
        if found and found.kind == "cell" and (table := table_of(found.facts[0], tables)) \
                and unheld_name(question, table):
            found = None  # "the Pennine Medical Gases contract" is in no energy table's cell
        if found is None and not _COUNT.search(question):
            # through another register's id: "the contract Helen Okafor manages", "the chiller
            # contract's manager's job title"
            found = self._linked(question, ask, stored)
            if found is None and fetch is not None and (ids := keys(ask, tables)):
                known = {(t.doc, t.key) for t in tables}
                more = [t for t in self._tables(fetch(" ".join([*ids, question])), 0)
                        if (t.doc, t.key) not in known]
                found = joined(ask, [*tables, *more]) if more else None
        read = found.facts[0] if found and found.kind in ("cell", "conflict") else None
        if read and through_another(question, read):
            found = None  # "the job title of the person who reported INC-24-044": not its reporter's id
        elif read and ask.when and not dated(read.value):
            found = None  # "until when is its lead's certification valid" is not the lead's name
        elif read and WHERE.search(question) and not is_place(read.column):
            found = None  # "where is the person leading it based" is not the lead's name
        if found and found.kind == "cell" and contradicted(found.facts[0], candidates,
                                                                [w for w in asked if is_code(w)]):
            return None  # another document gives another figure: the pipeline shows both
        if found and found.kind in ("cell", "blank") and named_ahead(found.facts, candidates):
            return None  # a better-ranked chunk speaks of that row: the pipeline reads it
        fact = found.facts[0] if found and found.kind == "cell" else None
        table = table_of(fact, tables) if fact else None
        single = table is not None and len(table.columns) == 1  # one value column ("Item | Detail")
        if fact and single and (given := given_otherwise(question, fact)):
            # "Tidewell's Toronto headquarters" where the one value column says Dublin
            return CellAnswer("premise", f"The documents give {fact.value} as the {fact.row}, not {given}.",
                              found.facts)
        if fact and table is not None and (other := named_otherwise(question, fact, table)):
            # "the staff parking permit at the Eindhoven office" where the row is Kestrelford's
            row = label_text(fact.row)
            text = (f"문서에는 {row}만 있고 {other}에 대한 값은 없습니다." if hangul_script(question)
                    else f"The documents give the {row}, not one for {other}.")
            return CellAnswer("premise", text, found.facts)
        if found is None and _COUNT.search(question):
            noun = _counted_noun(question)
            # "How many hours does the course take" asks a measure, not how many rows.
            # over the best-ranked chunk's tables, else the top chunks', else the candidates' (the
            # register's chunk of records ranked below its header's)
            rows = None if noun and named_units(noun) else next(
                filter(None, (count(ask, group, noun, top) for group in widening)), None)
            if rows and noun and not counted_here(noun, rows.facts[0], tables, asked):
                return None  # "how many households take part" is no count of a staff directory's rows
            if rows is None:
                return self._listed(question, ask, candidates[:window])
            return None if rows and count_stated(noun, rows.facts[0].doc, candidates) else rows
        if found is None and _WHICH.search(question):
            return select(ask, lead)
        return found

    @staticmethod
    def _linked(question: str, ask: TableQuestion, tables: Sequence[FactTable]) -> CellAnswer | None:
        """A cell reached through another register's row (rag/table_joins.py), over every table of
        the candidates' and the retrieved documents as stored: one register names the row ("the
        plant Priya Ramanathan runs", "work order WO-24-0192"), the other holds the figure, and
        the question's year or code is the second's alone."""
        return None if _COUNT.search(question) else joined(ask, tables) or through(
            ask, tables, asked_for(question).words)

    def _listed(self, question: str, ask: TableQuestion,
                candidates: Sequence[NodeWithScore]) -> CellAnswer | None:
        """"How many steps are in the pre-run checklist": the list under the heading it names."""
        noun = _counted_noun(question)
        if noun is None or named_units(noun):  # "how many hours": a measure, no list's items
            return None
        return counted_list(ask.asked, noun, candidates, self.min_share, ask.korean)

    def _current(self, tables: list[FactTable], candidates: Sequence[NodeWithScore], window: int
                 ) -> tuple[list[FactTable], set[tuple[str, str]]]:
        """The tables under the candidate chunks of documents superseding or correcting theirs: a
        row a sentence or table row of theirs gives a figure or date ("Main span deck lift | 18 May
        2024 | 8 June 2024" in the memo postponing the meeting's dates; not "Lighting commissioning
        is not affected") is left out, and which tables lost any is said: the newer document's
        table, or the pipeline, answers. Where that sentence corrects one cell's figure, stating
        the old one ("TP-3 ... should read 8.9 mm (Issue 1 incorrectly gave 6.4 mm)"), the row
        stays with the corrected cell, cited to the correction: a best-ranked correction puts
        its table among the best-ranked (`window`) too."""
        newer_of = {doc: self.newer(doc) for doc in {t.doc for t in tables}}
        wanted = {doc for docs in newer_of.values() for doc in docs}  # most questions: none
        said: dict[str, list[tuple[str, set[str], BaseNode]]] = {}
        for node in (c.node for c in candidates if c.node.metadata.get("doc") in wanted):
            text = node.get_content(metadata_mode=MetadataMode.NONE)
            # each sentence, and each paragraph read as one: fields ("Correction 2 - Incheon total
            # impurities RSD / Reported: 3.8 % / Corrected: 1.9 %"), or an item whose first sentence
            # gives the printed figure and the next the correct one
            paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]
            # and a table's row as its fields: "Location: Table 1, Bristol, NPS; As printed: +41;
            # Corrected: +47" (an erratum's table of corrections)
            rows = ["; ".join(f"{c}: {v}" for c, v in zip(columns, row))
                    for columns, body in markdown_tables(text) for row in body]
            said.setdefault(str(node.metadata.get("doc", "")), []).extend(
                (sentence, set(words(sentence)), node)
                for sentence in [*line_sentences(text), *paragraphs, *rows]
                if any(ch.isdigit() for ch in sentence))
        kept, restated = [], set()
        names = self.codes() if wanted else {}
        # a notice moving an event names no document: a row of another giving its old date is stale
        moved = [(c.node.metadata.get("doc"), p) for c in candidates
                 for p in postponements(c.node.get_content(metadata_mode=MetadataMode.NONE))]
        for table in tables:
            newer = [said_ for doc in newer_of[table.doc] for said_ in said.get(doc, [])]
            stale = {row: restating for row in table.rows if (needed := content(label_text(row))) and (
                restating := [(sentence, node) for sentence, named, node in newer
                              if _restates(table, row, needed, named, names.get(label_text(row).strip()))])}
            stale |= {row: [] for row in table.rows if row not in stale and any(
                doc != table.doc
                and p.moves("; ".join([row, *(f.value for f in table.facts if f.row == row)]))
                for doc, p in moved)}
            fixed = {row: cells for row, restating in stale.items()
                     if (cells := _corrected([f for f in table.facts if f.row == row], restating))}
            if len(fixed) < len(stale):
                restated.add((table.doc, table.key))
            facts = tuple(fixed.get(f.row, {}).get(f.column, f) for f in table.facts
                          if f.row not in stale or f.row in fixed)
            corrections = {f.chunk_id for cells in fixed.values() for f in cells.values()}
            table = replace(table, facts=facts, top=table.top or bool(corrections & {
                c.node.node_id for c in candidates[:window]}))
            if table.facts:
                kept.append(table)
        return kept, restated

    def _tables(self, candidates: Sequence[NodeWithScore], window: int) -> list[FactTable]:
        """The tables of the candidates' documents, each marked whether one of the `window` best
        candidates holds a part of it (a table split over chunks counts whole)."""
        nodes = [c.node for c in candidates]
        top = {n.node_id for n in nodes[:window]}
        meta: dict[str, dict] = {}
        for node in nodes:
            meta.setdefault(str(node.metadata.get("doc", "")), node.metadata)
        grouped: dict[tuple[str, str], list[Fact]] = {}
        currency: dict[str, str] = {}
        for fact in self.index.facts(list(meta)):
            grouped.setdefault((fact.doc, fact.table), []).append(fact)
            if code := currency_field(fact):
                currency[fact.doc] = code
        version = cache(self.index.version)  # asked only where a header writes an initialism

        def defined(doc: str) -> dict[str, str]:
            return _definitions(self.index, doc, version())

        def column_names(column: str, doc: str) -> tuple[str, ...]:
            spelled = spelled_out(column, defined(doc)) if SHORT.search(column) else column
            return tuple(dict.fromkeys((column, spelled, *key_path_names(column))))

        return [replace(FactTable.of(doc, key, facts, [str(v) for k, v in meta[doc].items()
                                                    if k not in _LOCATION and isinstance(v, str)],
                                     bool(top & {f.chunk_id for f in facts})), currency=currency.get(doc, ""),
                        column_names={c: names for c in {f.column for f in facts}
                                      if len(names := column_names(c, doc)) > 1})
                for (doc, key), facts in grouped.items()]


def _counted_noun(question: str) -> str | None:
    """The noun a count question counts ("how many steps": steps), lower-cased; None for none."""
    counted = _COUNTED.search(question) if _COUNT.search(question) else None
    return next((g.lower() for g in (counted.groups() if counted else ()) if g), None)


def _restates(table: FactTable, row: str, needed: Sequence[str], named: set[str],
              spelled: str | None) -> bool:
    """Whether a newer document's sentence (its words `named`) gives the table's row again: it
    names the row (by its label's words, or for a code, the name it stands for: "Ashdene Royal
    Infirmary" for ARI) and a code besides ("2023-24", "Table 2"); where it names the row by the
    code's name, one of the row's columns or figures too, as the row's code stands in every
    table of the document ("Castlebrook ... reactive jobs" restates the performance table's CBH,
    not the energy table's)."""
    def holds(wanted: Sequence[str]) -> bool:
        return bool(wanted) and all(any(same(w, q) for q in named) for w in wanted)

    if not any(is_code(q) for q in named - set(words(row))):
        return False
    if holds(needed):
        return True
    cells = [f for f in table.facts if f.row == row]
    return holds(content(spelled or "")) and any(
        holds(content(f.column)) or any(same(w, q) for w in words(f.value) for q in named) for f in cells)


def _corrected(row: Sequence[Fact], restating: Sequence[tuple[str, BaseNode]]) -> dict[str, Fact]:
    """Column -> the row's cell as corrected, by each sentence or paragraph restating the row that
    corrects exactly one of its figures (rag/corrections.py); {} when none does: the row is left
    out."""
    fixed: dict[str, Fact] = {}
    for sentence, node in restating:
        found = [(fact, figure) for fact in row if fact.number is not None
                 and (figure := corrected_figure(sentence, fact.number, fact.unit))]
        if len(found) == 1:
            fact, figure = found[0]  # the table's cell still, read from the correction's chunk
            fixed[fact.column] = replace(fact, chunk_id=node.node_id, value=figure, number=value(figure))
    return fixed


@lru_cache(maxsize=1024)
def _definitions(index: LexicalIndex, doc: str, version: int) -> dict[str, str]:
    """The initialisms a document spells out, read once per document and index version: the
    candidates of one question after another are the same documents, and reading a long one
    whole is not free."""
    return definitions(index.document_text(doc))


def _held_codes(tables: list[FactTable], asked: Sequence[str], either: bool = False) -> list[FactTable]:
    """Each table narrowed to the facts that hold every code or number of the question that some
    candidate table or document holds (in a row's names, its column or the subject), or `either`
    of them where the question sets two things against each other ("OLW-P-001 or OLW-P-003"); a
    table whose subject holds another code of the same form (Q3 where Q2 is asked, 2024 where 2023)
    is out."""
    def holds(words_: Sequence[str] | frozenset[str], code: str) -> bool:
        return any(same(w, code) for w in words_)

    def valued(table: FactTable, code: str) -> set[str]:
        """The rows a worded cell of which holds the code: "rated Tier 1" is a condition on them;
        a year, the rows a date of which is in it ("the 2024 incident log")."""
        return {f.row for f in table.facts if f.number is None and (holds(words(f.value), code) or (
            YEAR.fullmatch(code) and any(str(found[0][0]) == code for found in dates(f.value))))}

    codes = [w for w in asked if is_code(w)]
    # per table and code: whether its subject holds it, and which rows (by name, else by a
    # worded value) and columns do
    where = [{c: (holds(t.subject_words, c),
                  {r for r in t.rows if holds(words(" ".join(t.aliases[r])), c)} or valued(t, c),
                  {col for col in t.columns if holds(words(col), c)}) for c in codes} for t in tables]
    held = [c for c in codes if any(w[c][0] or w[c][1] or w[c][2] for w in where)]
    narrowed = []
    for table, found in zip(tables, where):
        # a code its own rows or columns hold is no other period's: the Q4 review's Q3 column
        if rules_out(table.subject_words, [c for c in codes if not (found[c][1] or found[c][2])]):
            continue
        kept = tuple(f for f in table.facts if (any if either and held else all)(
            found[c][0] or f.row in found[c][1] or f.column in found[c][2] for c in held))
        if kept:
            narrowed.append(replace(table, facts=kept))
    return narrowed
