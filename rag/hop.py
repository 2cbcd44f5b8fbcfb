"""The second hop of a two-document question: when the first retrieval's kept chunks hold the row
or sentence the question describes ("the lead of engagement ENG-2024-031") and, in it, the entity
it leads to (the lead's name) but not the fact asked (their office), one more retrieval runs with
that entity and the asked words ("Min-jun Park office"); its chunks join the candidates, all are
reranked together and the bridge chunk stays kept, so the answer can cite both documents. When
a chunk's row then holds the entity and the asked column, the answer is read from it and the
bridge (no model call); when the first round already holds both, it is read there, no retrieval.

Found without a model, for kinds of documents: the asked words (rag/hop_question.py) follow the
question's wh-word (which/what/how many; 어느/어떤/무슨/몇), and the question must reach them through
another thing ("the lead of", "the partner who", "책임자의"); a table row (a Markdown table's, or a
chunk's `key: value` lines, a JSON record) is the bridge when the question names one of its values
(the anchor) and a column of its own (the relation) whose value it does not hold, a name or a code
(a figure only from a column named by two of its words), and no column is asked; a sentence is when
it shares two of the question's other words and holds a name or code the question lacks, and neither
the asked words nor (a figure asked) a figure. Nothing happens when one row the question names holds
the asked column: one document answers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

from rag.answer import AnswerSegment, Source
from rag.facts import BLANKS, number_of
from rag.hop_question import WHEN_ASKED, WHERE_ASKED, asked
from rag.labels import SHORT_NAME, STOP, content, is_code, is_place, meets, named, same, words
from rag.postprocessors import best_ranked
from rag.premise_words import CODE, NOT_NAMES
from rag.references import marked
from rag.settings import Settings
from rag.text import NUMBER, cells, split_sentences, table_rows

_LETTER = re.compile(r"[^\W\d_]")
_KEY_VALUE = re.compile(r"^\s*([\w.\[\]-]{1,60})\s*:\s+(.+?)\s*$")
# A proper name: capitalised words in a run ("Ingrid Valen", "Lena Krüger", "Min-jun Park").
_NAME = re.compile(r"(?<![\w-])[A-Z][\w'’]*(?:-[\w'’]+)*(?:\s+[A-Z][\w'’]*(?:-[\w'’]+)*)*")
_NAME_WORDS = 4  # a longer run of capitalised words is a title, not a name


@dataclass(frozen=True)
class Bridge:
    """The entity a kept chunk leads to (a cell's value, a name in a sentence), the chunk's index
    among the kept chunks, the words the question asks for, and the row (as `column: value`
    pairs, as the context writes it) or sentence that names the entity."""

    entity: str
    chunk: int
    asked: tuple[str, ...]
    line: str = ""
    held: int | None = None  # the kept chunk that already states the fact, if one does
    given: tuple[str, ...] = ()  # the question's other words: a value they name is no asked fact
    guessed: tuple[str, ...] = ()  # a row's codes, tried in turn: the entity is the one whose round finds
    # the fact
    then: tuple[Bridge, ...] = ()  # the next rows whose codes are guesses, tried after these

    @property
    def query(self) -> str:
        """The sub-question the second retrieval asks: the entity and the asked words."""
        return " ".join((self.entity, *self.asked))

    def tries(self) -> list[Bridge]:
        """The bridges to look for the fact with: one per guessed code (this row's, then the next
        rows'), else this one."""
        own = [replace(self, entity=entity, then=()) for entity in self.guessed] or [self]
        tried = {(b.entity, b.chunk) for b in own}
        return own + [b for row in self.then for b in row.tries() if (b.entity, b.chunk) not in tried]


@dataclass(frozen=True)
class Hopped:
    """The second round's outcome: the candidates reranked together, led by the best new chunk
    holding the entity and the bridge chunk (the context's units follow the ranking: both parts
    of the answer reach the prompt); the entity searched, and the question that chooses the
    context's units: the bridge's line and the sub-question, whose words the bridge's row and the
    fact's hold (the whole question's words favour the bridge document's other rows, the
    sub-question's alone the other rows of the fact's table)."""

    ranked: list[NodeWithScore]
    entity: str
    search: str
    bridge: Bridge
    chunk_id: str  # the bridge chunk's
    fact: str | None = None  # the first chunk's row or sentence that states the asked fact, when read

    def read(self) -> tuple | None:
        """`answered`'s arguments for the answer read from the two chunks, no model call: the
        fact's cells (the entity's and the asked columns') and the bridge's line, each quoted and
        cited at 1.0 to its chunk; None when no row or sentence was found to state the fact."""
        if self.fact is None:
            return None
        sources = Source.listed(self.ranked[:2])
        segments = [AnswerSegment(marked(line, [source.ref]), [i, i], True, [source.reference(1.0)])
                    for i, (line, source) in enumerate(zip((self.fact, self.bridge.line), sources))]
        return "\n".join(s.text for s in segments), sources, None, "", segments

    def cited(self, text: str, segments: list[AnswerSegment], sources: list[Source],
              gate: str | None) -> tuple[str, list[AnswerSegment]]:
        """An answer's text and segments with the bridge's line quoted after them, cited to its
        chunk, where the answer does not cite that chunk already (a composed answer quotes the
        fact's row; the bridge row says why that row is the one): both documents are cited."""
        source = next((s for s in sources if s.chunk_id == self.chunk_id), None)
        cites = {ref.chunk_id for segment in segments for ref in segment.references}
        if gate is not None or source is None or source.chunk_id in cites or not self.bridge.line:
            return text, segments
        first = max((segment.sentences[-1] for segment in segments), default=-1) + 1
        quoted = marked(self.bridge.line, [source.ref])
        added = AnswerSegment(quoted, [first, first + max(len(split_sentences(quoted)), 1) - 1], True,
                              [source.reference(1.0)])
        return f"{text}\n{quoted}", [*segments, added]


@lru_cache(maxsize=65536)  # a table's values, met by each of its rows' checks
def _held(text: str, question: tuple[str, ...]) -> bool:
    """Whether the question names every word of a value (then it is no entity the question lacks),
    or of the short name the value ends with in brackets ("the XPS instrument": "X-ray
    photoelectron spectrometer (XPS)")."""
    needed = [w for w in words(text) if w not in STOP]
    if needed and all(any(same(w, q) or same(q, w) for q in question) for w in needed):
        return True
    short = SHORT_NAME.search(text)
    return bool(short) and _held(short.group(1), question)


def _text(node: NodeWithScore) -> str:
    return node.node.get_content(metadata_mode=MetadataMode.NONE)


@lru_cache(maxsize=65536)
def _touched(text: str, question: tuple[str, ...]) -> bool:
    """Whether the question names any word of a text."""
    return meets([w for w in words(text) if w not in STOP], question)


def _is(value: str, entity: str) -> bool:
    """Whether a cell holds the entity: the same figure ("150.0" is 150), else its words."""
    figure = number_of(entity)
    if figure is not None:
        return number_of(value) == figure
    return _held(value, words(entity))


def _entity(value: str) -> bool:
    """A name or a code, no bare figure or date: what another document can be searched for."""
    return number_of(value) is None and _LETTER.search(value) is not None


# A column of dates: what a "when" question reached through a row asks ("Start_Dt", "due date")
_DATED = frozenset("date dates dt dated day start started joined hired since due deadline "
                   "날짜 일자 시작일 입사일".split())


def _asks(label: str, asked: tuple[str, ...]) -> bool:
    """Whether a column is the one asked: each asked word names a word of it ("return period" names
    return_period_years, not period_inception), or the asked words name the whole of it ("registration
    plate" names registration)."""
    if asked == WHERE_ASKED:
        return is_place(label)
    if asked == WHEN_ASKED:
        return bool(set(words(label)) & _DATED)
    own = content(label)
    return bool(asked) and (all(any(same(w, a) for w in own) for a in asked)
                            or bool(own) and all(any(same(w, a) for a in asked) for w in own))


def _anchor(row: list[tuple[str, str]], others: tuple[str, ...], mostly: bool = False) -> set[str] | None:
    """The question's words naming the columns of the row's values it names (`mostly`: or names
    most of); None when it names none of its values."""
    columns = [label for label, value in row if _held(value, others) or (mostly and _mostly(value, others))]
    return {w for label in columns for w in named(label, others)[2]} if columns else None


def _mostly(value: str, question: tuple[str, ...]) -> bool:
    """Whether the question names two thirds of a value's words, two at least ("the Avonmouth
    outfall" names "Avonmouth - outfall structure"), or three of a longer one ("the quick-hitch
    failure of the excavator" names "Quick hitch failure on excavator EX-07; bucket detached")."""
    needed = [w for w in words(value) if w not in STOP and not is_code(w)]
    hits = sum(any(same(w, q) or same(q, w) for q in question) for w in needed)
    return hits >= 3 or (hits >= 2 and hits * 3 >= 2 * len(needed))


def records(text: str) -> tuple[list[list[tuple[str, str]]], list[str]]:
    """A chunk's rows as (column, value) pairs (a Markdown table's rows; its `key: value` lines,
    a JSON document's fields, as one row: one record) and its other sentences."""
    rows, sentences, record = [], [], []
    for block in re.split(r"\n\s*\n", text.strip()):
        if parsed := table_rows(block):
            (header, _), lines = parsed
            rows += [[(name, value) for name, value in zip(cells(header), cells(line))] for line in lines]
            continue
        lines = [line for line in block.splitlines() if line.strip()]
        pairs = [m.groups() for line in lines if (m := _KEY_VALUE.match(line))]
        if pairs and len(pairs) == len(lines):
            record += [(key.replace(".", " "), value) for key, value in pairs]
        else:
            sentences += split_sentences(" ".join(line for line in lines if not line.startswith("#")))
    return rows + ([record] if record else []), sentences


def _written(row: list[tuple[str, str]]) -> str:
    """A row as the context writes it: `column: value` pairs."""
    return "; ".join(f"{label}: {value}" if label else value for label, value in row if value)


def _naming(row: list[tuple[str, str]], question: tuple[str, ...]) -> int:
    """How many of the question's words the row's values name."""
    values = words(" ".join(value for _, value in row))
    return sum(any(same(w, q) for w in values) for q in question)


def _row_bridge(row: list[tuple[str, str]], others: tuple[str, ...],
                asked: tuple[str, ...]) -> tuple[tuple[str, ...], bool] | None:
    """The value of the column the question names, in a row one of whose values it names, and True;
    or, where it names none ("the truck involved in INC-24-017": vehicle_id), the row's codes it does
    not give, each a guess only a second round that finds the fact confirms, and False."""
    filled = [(label, value) for label, value in row if value.strip().lower() not in BLANKS]
    strict = _anchor(filled, others)
    anchor = strict if strict is not None else _anchor(filled, others, mostly=True)
    # a column whose value the question gives is the anchor's ("Kraków" for its property), not the asked
    asked_here = any((_asks(label, asked) and not _held(value, others)) or _touched(value, asked)
                     for label, value in filled)
    if not asked or anchor is None or asked_here:
        return None
    # The relation is named by words of its own, not only by those naming the anchor's column.
    # A figure leads on only from a column named by two words of its own ("the programme's top"),
    # in a row whose value the question names whole (a KPI row it mostly names holds the answer).
    related = [(len(own), i, value) for i, (label, value) in enumerate(filled)
               if (own := named(label, others)[2] - anchor)
               and (_entity(value) or (len(own) > 1 and strict is not None)) and not _touched(value, others)]
    if related:  # the column the question names most by words of its own; the first of a tie
        return (min(related, key=lambda r: (-r[0], r[1]))[2],), True
    codes = tuple(value for _, value in filled if " " not in value.strip() and is_code(value.lower())
                  and _entity(value) and not _touched(value, others))
    # a code a worded value the question names holds ("... on excavator EX-07; bucket detached")
    codes += tuple(dict.fromkeys(m.group() for _, value in filled
                                 if " " in value.strip() and _mostly(value, others)
                                 for m in CODE.finditer(value) if not _touched(m.group(), others)))
    return (codes, False) if codes else None


def _sentence_bridge(sentence: str, others: tuple[str, ...], asked: tuple[str, ...],
                     figure: bool) -> str | None:
    """A name or code the question lacks, in a sentence that shares two of its other words; a
    period ("Q3", "2024") the question and a title share is no link."""
    own = words(sentence)
    shared = {q for q in others if not any(c.isdigit() for c in q) and any(same(w, q) for w in own)}
    if len(shared) < 2 or any(same(w, a) for w in own for a in asked) or (not asked and not figure):
        return None
    if not re.search(r"[.!?]\W*$", sentence) and not any(
            w[0].islower() and w.lower() not in STOP for w in re.findall(r"[^\W\d_]+", sentence)):
        return None  # a title ("Static Load Testing of Preliminary Piles - Feijenoord Quay Renewal")
    if figure and NUMBER.search(sentence):
        return None
    for match in [*_NAME.finditer(sentence), *CODE.finditer(sentence)]:
        name = match.group()
        first_word = match.start() == 0 and " " not in name
        # "Summary ------- In the early hours": a capitalised function word is no name; nor is a
        # heading in capitals ("MARSH ENGINEERING ERRATUM TO TECHNICAL REPORT")
        if not first_word and name.lower() not in NOT_NAMES | STOP and not _touched(name, others) \
                and len(name.split()) <= _NAME_WORDS and not (" " in name and name.isupper()):
            return name
    return None


@dataclass
class Hop:
    """At most one second retrieval (`[hop]`), from the bridge in the first `chunks` kept chunks;
    `retrieve_k` of its new chunks join the candidates. `compose`: its answer quotes the evidence
    units (`[answer] mode = "compose"`), each cited to its own document: a sentence the model
    writes joining the two ("the lead of X is based in Seoul") is backed by neither alone, and the
    reference matcher refuses it. `read`: when a new chunk's row holds the entity and the asked
    column (or a sentence the entity and the asked words), the answer quotes it and the bridge,
    no model call (`Hopped.read`): the small model picks the wrong row of a staff table often."""

    enabled: bool = True
    chunks: int = 3
    retrieve_k: int = 10
    compose: bool = True
    read: bool = True

    @classmethod
    def from_settings(cls, settings: Settings) -> Hop:
        hop = settings.hop
        return cls(hop.enabled, hop.chunks, hop.retrieve_k, hop.compose, hop.read)

    def bridge(self, question: str, kept: Sequence[NodeWithScore]) -> Bridge | None:
        """The bridge of the question in these kept chunks (`held`: the kept chunk that already
        states the fact), or None (off, no bridge, one row answers, or the fact held with `read`
        off: the model answers from the first round)."""
        if not self.enabled:
            return None
        want = asked(question)
        if not want.through:
            return None  # the question describes no other thing: one document answers it
        others = tuple(w for w in words(question) if w not in STOP and w not in want.words)
        texts = [_text(n) for n in kept]
        # One row the question names holds the asked column: one document answers, unless a bridge
        # leads to a kept row stating the fact ("our contract manager" names a Contracts Manager's
        # row of the directory, but the contract names which one).
        def answers(row: list[tuple[str, str]]) -> bool:
            return _anchor(row, others) is not None and any(_asks(k, want.words) and not _held(v, others)
                                                            for k, v in row)

        # "when did the person leading the cutover join": the cutover's own date is not asked
        one_row = want.words != WHEN_ASKED and any(sum(map(answers, records(text)[0])) == 1
                                                   for text in texts)
        read = [records(text) for text in texts[: self.chunks]]
        # A row's line: the cells the question names and the entity's (its other figures are no part).
        # A row's relation column names its entity outright, so a row of any of the chunks comes
        # before a name a sentence merely holds; of several rows, the one whose values name most of
        # the question ("conference AV upgrade" and "Kraków", not "Kraków" alone).
        # A row that names its relation before one whose codes are guesses.
        bridged = sorted(((found, row, i) for i, (rows, _) in enumerate(read) for row in rows
                          if (found := _row_bridge(row, others, want.words))),
                         key=lambda bridge: (not bridge[0][1], -_naming(bridge[1], others)))
        lines = [(entities, _written([(k, v) for k, v in row if v in entities or _held(v, others)
                                      or (" " in v and any(e in v for e in entities))]), i, named,
                  _naming(row, others)) for (entities, named), row, i in bridged]
        lines += [((e,), s, i, True, _naming([("", s)], others)) for i, (_, sentences) in enumerate(read)
                  for s in sentences if (e := _sentence_bridge(s, others, want.words, want.figure))]
        # a sentence's name before a row's guessed codes, unless the row names more of the question
        # (the incident's place and what happened, not the memo's site); one naming the thing
        # reached through first
        most = max((line[4] for line in lines if line[3]), default=0)
        lines.sort(key=lambda line: (not line[3] and line[4] <= most,
                                     not _held(" ".join(want.via), words(line[1]))))
        if not lines:
            return None
        entities, line, chunk, named, _ = lines[0]
        # a row's guesses failing, the next guessed rows' (the log's row beside the memo's header)
        then = tuple(Bridge(e[0], c, want.words, text, given=others, guessed=e)
                     for e, text, c, is_named, _ in lines[1:] if not is_named) if not named else ()
        found = Bridge(entities[0], chunk, want.words, line, given=others,
                       guessed=() if named else entities, then=then)
        for tried in found.tries():
            held = next((i for i, text in enumerate(texts)
                         if i != found.chunk and self._fact(text, tried)), None)
            if held is not None:  # the first round holds the fact: read it there, or leave it to the model
                return replace(tried, held=held) if self.read else None
        return None if one_row or any(self._fact(text, found) for text in texts) else found

    @staticmethod
    def _fact(text: str, bridge: Bridge) -> str | None:
        """A chunk's row holding the entity in a column and the asked words' columns (their cells
        written), or its sentence holding the entity and the asked words; None when none."""
        rows, sentences = records(text)
        # the columns whose values tell the rows apart: a name or description ("name", not "fuel")
        values: dict[str, set[str]] = {}
        for row in rows:
            for k, v in row:
                values.setdefault(k, set()).add(v)
        naming = {k for k, found in values.items() if len(rows) >= 3 and len(found) >= 0.8 * len(rows)}
        generic = bridge.asked in (WHEN_ASKED, WHERE_ASKED)
        for row in rows:
            if generic and sum(_touched(v, bridge.given) and not _is(v, bridge.entity) for _, v in row) >= 2:
                continue  # the row of the thing the question describes: its date is not the entity's
            cells = [(k, v) for k, v in row if v and (_is(v, bridge.entity) or _asks(k, bridge.asked))
                     and not (_held(v, bridge.given) and not _is(v, bridge.entity))]
            entity = any(_is(v, bridge.entity) for _, v in cells)
            if entity and any(_asks(k, bridge.asked) for k, _ in cells):
                # a code's row says what it names too: "staff_id: E1040; name: Lewis Okafor"
                coded = _entity(bridge.entity) and is_code(bridge.entity.lower())
                name = next(((k, v) for k, v in row if coded and k in naming and _entity(v)
                             and (k, v) not in cells and (" " in v.strip() or not is_code(v.lower()))), None)
                return _written(cells[:1] + [name] + cells[1:] if name else cells)
        if number_of(bridge.entity) is not None:
            return None  # a figure is matched in a table's cells only
        return next((s for s in sentences if _held(bridge.entity, words(s))
                     and _held(" ".join(bridge.asked), words(s))), None)

    def _new(self, retriever: BaseRetriever, bridge: Bridge, known: set[str]) -> list[NodeWithScore]:
        """The second round's chunks not among the first's, at most `retrieve_k`."""
        new = [n for n in retriever.retrieve(QueryBundle(bridge.query)) if n.node.node_id not in known]
        return new[: self.retrieve_k]

    def follow(self, question: str, ranked: list[NodeWithScore], keep: int, retriever: BaseRetriever,
               reranker: BaseNodePostprocessor) -> Hopped | None:
        """The second round when the kept chunks hold a bridge (no retrieval when they hold the
        fact too); None when they hold none."""
        bridge = self.bridge(question, ranked[:keep])
        if bridge is None:
            return None
        if bridge.held is not None:  # both documents kept in the first round: read, no retrieval
            fact_chunk, chunk = ranked[bridge.held], ranked[bridge.chunk]
            rest = [n for n in ranked if n.node.node_id not in {fact_chunk.node.node_id, chunk.node.node_id}]
            return Hopped([fact_chunk, chunk, *rest], bridge.entity, f"{bridge.line} {bridge.query}", bridge,
                          chunk.node.node_id, self._fact(_text(fact_chunk), bridge))
        known = {n.node.node_id for n in ranked}
        if bridge.guessed:  # the code whose round holds the fact, else no second round at all
            rounds = ((b, self._new(retriever, b, known)) for b in bridge.tries())
            bridge, new = next(((b, new) for b, new in rounds  # a candidate not kept may hold it
                                if any(self._fact(_text(n), b) for n in [*new, *ranked[keep:]])), (None, []))
            if bridge is None:
                return None
        else:
            new = self._new(retriever, bridge, known)
        pool = ranked + new
        # Every candidate ranked (not only the stage's top_n): the target may rank below the kept.
        everyone = reranker.model_copy(update={"top_n": len(pool)})
        joined, _ = best_ranked(everyone, pool, [question, bridge.query])
        kept = {n.node.node_id for n in ranked[:keep]}  # the target may have been a candidate, not kept
        later = [n for n in joined if n.node.node_id not in kept]
        # The chunk that holds the entity beside the asked words, else the best that names the entity.
        facts = ((n, self._fact(_text(n), bridge)) for n in later)
        target, fact = next(((n, f) for n, f in facts if f), (None, None))
        target = target or next((n for n in later if _held(bridge.entity, words(_text(n)))), None)
        scored = {n.node.node_id: n for n in joined}
        chunk = ranked[bridge.chunk]
        pinned = ([target] if target else []) + [scored.get(chunk.node.node_id, chunk)]
        ids = {n.node.node_id for n in pinned}
        search = f"{bridge.line} {bridge.query}"
        return Hopped(pinned + [n for n in joined if n.node.node_id not in ids], bridge.entity, search,
                      bridge, chunk.node.node_id, fact if self.read else None)
