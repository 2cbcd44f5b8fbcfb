"""How retrieved chunks are written into the prompt (the stored text, which the sources panel
shows and the matcher reads, is unchanged). The embedded model reads a prompt slowly, so evidence
is chosen, not dumped: each chunk is cut into units (a sentence, a list item, a table row), and
the units most relevant to the question fill a token budget (docs/BENCHMARKS.md, "Which evidence
reaches the prompt"). Each chunk shown gets its number, its place, its document's header fields
and its currency note ("superseded by [1]", rag/currency.py); a table row is written as
`column: value` pairs, so a cell is read with its column's name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from llama_index.core.schema import MetadataMode, NodeWithScore

from rag.asked import lacks
from rag.corrections import current_fields, former_sentences, item_label
from rag.errata import Correction, errata
from rag.layout import fields, following, title, unwrapped
from rag.postponements import postponements
from rag.scoring import BiEncoderScorer
from rag.settings import Settings
from rag.text import cells, split_sentences, table_rows, trigrams

_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$")


@dataclass
class Unit:
    """One selectable piece of a chunk; `lead` is printed once before the first unit under it
    (the heading above a sentence, a Markdown table's header rows)."""

    chunk: int
    position: int
    text: str
    lead: tuple[str, ...] = ()
    priority: float = 0.0


def row_pairs(text: str) -> list[tuple[str, str]] | None:
    """A table row unit's `column: value` pairs, as `units` writes them; None for any other unit."""
    pairs = [pair.split(": ", 1) for pair in text.split("; ")]
    if len(pairs) < 2 or not all(len(pair) == 2 for pair in pairs):
        return None
    return [(name, value) for name, value in pairs]


def units(text: str, chunk: int = 0, tables: str = "rows") -> list[Unit]:
    """A chunk's stored text cut into units, in reading order. Headings become leads; a table's
    rows become units, as `column: value` pairs ("rows") or Markdown rows under the header
    ("markdown")."""
    out: list[Unit] = []
    heading: tuple[str, ...] = ()
    over: tuple[str, ...] = ()  # a plain-text title over the field blocks that follow it
    blocks = [b for b in re.split(r"\n\s*\n", text.strip()) if b.strip()]
    for i, block in enumerate(blocks):
        lines = [line for line in block.splitlines() if line.strip()]
        if (match := _HEADING.match(lines[0])) and len(lines) == 1:
            heading, over = (match.group(1),), ()
            continue
        if len(whole := unwrapped(lines)) == 1 and (match := title(whole[0], following(blocks, i))):
            # "1. Annual recurring revenue (ARR)" over "Corrected ARR figure: EUR 32.6M": each
            # field is read with what it is of
            over = (match.group(1).strip(),)
            continue
        if not fields(lines[0].strip())[0][0]:
            over = ()
        if parsed := table_rows(block):
            (header, rule), rows = parsed
            for row in rows:
                if tables == "markdown":
                    out.append(Unit(chunk, len(out), row, heading + (header, rule)))
                else:
                    pairs = [f"{name}: {value}" if name else value
                             for name, value in zip(cells(header), cells(row)) if value]
                    out.append(Unit(chunk, len(out), "; ".join(pairs), heading))
            continue
        if all(fields(line.strip())[0][0] for line in lines):  # a record's fields: a unit each
            out += [Unit(chunk, len(out) + n, line, over or heading)
                    for n, line in enumerate(current_fields(lines))]
            continue
        for line in unwrapped(lines):  # a hard-wrapped sentence whole
            sentences = split_sentences(line)
            # An erratum's item ("2. Written customer complaints. The report states 1,284. ... The
            # corrected figure is 1,348."): its label leads the rest; the old value is not shown.
            at, label = item_label(sentences)
            olds = former_sentences(sentences)
            kept = [s for i, s in enumerate(sentences) if i not in olds and i > at]
            out += [Unit(chunk, len(out) + n, " ".join(current_fields([sentence])),
                         (over or heading) + ((label,) if label else ()))
                    for n, sentence in enumerate(kept)]
    return out


def section(metadata: dict) -> str:
    """The innermost section the chunk starts in (the stored path names every level)."""
    return str(metadata.get("section") or "").split(" > ")[-1]


def place(metadata: dict) -> str:
    """Where a chunk is: `deck.pptx, slide 3: Results`, `guide.pdf, pages 2-3: Limits`."""
    parts = [str(metadata.get("doc") or "")]
    page, end = metadata.get("page"), metadata.get("page_end")
    if metadata.get("slide") is not None:
        parts.append(f"slide {metadata['slide']}")
    elif page is not None:
        parts.append(f"page {page}" if end in (None, page) else f"pages {page}-{end}")
    where = ", ".join(p for p in parts if p)
    return f"{where}: {section(metadata)}" if section(metadata) else where


@dataclass(frozen=True)
class Evidence:
    """What a context shows: its text, the chunks it draws on (in citation order) and its units
    (in the order shown; numbered from 1 when the text numbers them)."""

    text: str
    nodes: list[NodeWithScore]
    units: list[Unit]
    chunks: list[int]  # each shown chunk's index among the nodes the context was built from

    def ref(self, unit: Unit) -> int:
        """The citation number of a unit's chunk (its place in `nodes`, from 1)."""
        return self.chunks.index(unit.chunk) + 1


@dataclass
class ContextBuilder:
    """Writes the chunks of a question into the prompt within `budget` tokens. A unit's priority
    is its relevance to the question (calibrated e5 cosine plus the share of the question's
    trigrams it holds: a row naming "SL-05") plus `rank_weight` times its chunk's rank prior (1 for
    the best-ranked chunk down to 0 for the last), so the ranker's judgement still counts."""

    encoder: BiEncoderScorer
    count_tokens: Callable[[str], int]
    header_fields: Sequence[str] = ()
    tables: str = "rows"
    rank_weight: float = 0.5
    # What the label says of each shown chunk's currency, given their documents in citation order
    # (rag/currency.py's CurrentFirst.notes); None: nothing.
    notes: Callable[[Sequence[str | None]], list[str]] | None = None
    # The documents superseding or correcting a document (CurrentFirst.newer): an erratum's figures
    # in force are written into the units of the document it corrects (rag/errata.py); None: not.
    newer: Callable[[str | None], list[str]] | None = None

    def build(self, question: str, nodes: Sequence[NodeWithScore],
              budget: int) -> tuple[str, list[NodeWithScore]]:
        """(the context text, the chunks it shows, in citation order [1], [2], ...)."""
        evidence = self.evidence(question, nodes, budget)
        return evidence.text, evidence.nodes

    def evidence(self, question: str, nodes: Sequence[NodeWithScore], budget: int,
                 numbered: bool = False, shown: Sequence[Unit] = (), anchor: str = "") -> Evidence:
        """The best units within `budget`. `numbered`: each unit on its own numbered line, for
        the model to pick from (rag/compose.py); the units `shown` before (a narrower try, whose
        `nodes` are a prefix of these) come first with their numbers, the new ones after, so
        llama.cpp reuses the prompt it has already read. `anchor`: a name the question gives that
        the nodes hold and the units chosen would not; the best unit holding it is chosen first,
        as the question stands on it ("the depot of Tomasz Wielgus": the contacts line naming his
        depot)."""
        candidates = [
            unit for i, n in enumerate(nodes)
            for unit in units(n.node.get_content(metadata_mode=MetadataMode.NONE), i, self.tables)
        ]
        self._corrected(nodes, candidates)
        self._rescheduled(nodes, candidates)
        self._prioritise(question, nodes, candidates)
        named = re.sub(r"['’]s$", "", anchor).lower()
        if holding := [u for u in candidates if named and named in u.text.lower()]:
            max(holding, key=lambda u: u.priority).priority = max(u.priority for u in candidates) + 1
        earlier = {(u.chunk, u.position) for u in shown}
        chosen: dict[int, list[Unit]] = {}
        documents: set[str | None] = set()  # of the chunks chosen so far
        guessed = self._notes(nodes, range(len(nodes)))  # as if all were shown: about as long
        labels = [{full: self.count_tokens(self.label(n, full, note)) for full in (True, False)}
                  for n, note in zip(nodes, guessed)]
        left = budget
        for unit in sorted(candidates, key=lambda u: ((u.chunk, u.position) not in earlier, -u.priority)):
            doc = nodes[unit.chunk].node.metadata.get("doc")
            cost = self.count_tokens(unit.text) + (3 if numbered else 1)
            if unit.chunk not in chosen:
                cost += labels[unit.chunk][doc not in documents]
            if not any(u.lead == unit.lead for u in chosen.get(unit.chunk, [])):
                cost += sum(self.count_tokens(line) for line in unit.lead)
            if cost <= left or (unit.chunk, unit.position) in earlier:
                chosen.setdefault(unit.chunk, []).append(unit)
                documents.add(doc)
                left -= cost
        if numbered:
            return self._numbered(nodes, chosen, shown)
        text = self._render(nodes, chosen)
        # Tokens of the parts do not add up exactly to the tokens of the whole: trim to fit.
        while chosen and self.count_tokens(text) > budget:
            last = min((u for group in chosen.values() for u in group), key=lambda u: u.priority)
            chosen[last.chunk].remove(last)
            chosen = {i: group for i, group in chosen.items() if group}
            text = self._render(nodes, chosen)
        return Evidence(text, [nodes[i] for i in sorted(chosen)],
                        [u for i in sorted(chosen) for u in sorted(chosen[i], key=lambda u: u.position)],
                        sorted(chosen))

    def _render(self, nodes: Sequence[NodeWithScore], chosen: dict[int, list[Unit]]) -> str:
        blocks, documents = [], set()
        notes = dict(zip(sorted(chosen), self._notes(nodes, sorted(chosen))))
        for number, index in enumerate(sorted(chosen), start=1):  # citation numbers follow the ranking
            meta = nodes[index].node.metadata
            label = self.label(nodes[index], meta.get("doc") not in documents, notes[index])
            lines, printed = [f"[{number}] {label}"], set()
            documents.add(meta.get("doc"))
            for unit in sorted(chosen[index], key=lambda u: u.position):
                lines += [line for line in unit.lead if line not in printed and line != section(meta)]
                printed.update(unit.lead)
                lines.append(unit.text)
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)

    def _numbered(self, nodes: Sequence[NodeWithScore], chosen: dict[int, list[Unit]],
                  shown: Sequence[Unit]) -> Evidence:
        """Units numbered 1, 2, ... under their chunk's label: those `shown` before first, in
        their order, then the new ones by chunk rank and position."""
        earlier = [(u.chunk, u.position) for u in shown]
        picked = {(u.chunk, u.position): u for group in chosen.values() for u in group}
        order = [picked[key] for key in earlier if key in picked] + sorted(
            (u for key, u in picked.items() if key not in set(earlier)), key=lambda u: (u.chunk, u.position))
        blocks: list[list[str]] = []
        documents: set[str | None] = set()
        notes = dict(zip(sorted(chosen), self._notes(nodes, sorted(chosen))))
        last, printed = None, set()
        for number, unit in enumerate(order, start=1):
            if unit.chunk != last:
                meta = nodes[unit.chunk].node.metadata
                full = meta.get("doc") not in documents
                blocks.append([f"From {self.label(nodes[unit.chunk], full, notes[unit.chunk])}"])
                documents.add(meta.get("doc"))
                last, printed = unit.chunk, set()
            lead = section(nodes[unit.chunk].node.metadata)
            blocks[-1] += [line for line in unit.lead if line not in printed and line != lead]
            printed.update(unit.lead)
            blocks[-1].append(f"{number}. {unit.text}")
        return Evidence("\n\n".join("\n".join(block) for block in blocks),
                        [nodes[i] for i in sorted(chosen)], order, sorted(chosen))

    def label(self, node: NodeWithScore, full: bool, note: str = "") -> str:
        """A chunk's first line: its place, then its document's header fields (only the first,
        the title, when the document has already been introduced), then its currency `note`."""
        meta = node.node.metadata
        fields = [f for f in self.header_fields if meta.get(f)][: None if full else 1]
        header = "; ".join(f"{f}: {meta[f]}" for f in fields)
        label = f"{place(meta)} ({header})" if header else place(meta)
        return f"{label} ({note})" if note else label

    def _corrected(self, nodes: Sequence[NodeWithScore], candidates: list[Unit]) -> None:
        """Each unit of a document that an erratum among the nodes corrects, with the erratum's
        figures in force in place of those printed."""
        docs = [n.node.metadata.get("doc") for n in nodes]
        if self.newer is None or len(set(docs)) < 2:
            return
        fixes: dict[str | None, list[Correction]] = {}
        for doc in set(docs):
            by = set(self.newer(doc)) & set(docs)
            if found := [fix for n, d in zip(nodes, docs) if d in by
                         for fix in errata(n.node.get_content(metadata_mode=MetadataMode.NONE))]:
                fixes[doc] = found
        for unit in candidates:
            for fix in fixes.get(docs[unit.chunk], ()):
                unit.text = fix.applied(unit.text, unit.lead, row_pairs(unit.text))

    @staticmethod
    def _rescheduled(nodes: Sequence[NodeWithScore], candidates: list[Unit]) -> None:
        """Each unit giving the old date of an event a notice among the nodes postpones, with the
        new date in its place (rag/postponements.py): in the notice's own document, without it; in
        another, unless that one is dated after the notice (it may have moved the event again)."""
        meta = [n.node.metadata for n in nodes]
        moved = [(m.get("doc"), str(m.get("effective_date") or ""), p) for n, m in zip(nodes, meta)
                 for p in postponements(n.node.get_content(metadata_mode=MetadataMode.NONE))]
        for unit in candidates:
            doc, dated = meta[unit.chunk].get("doc"), str(meta[unit.chunk].get("effective_date") or "")
            for notice, when, postponement in moved:
                if doc == notice or not (dated and when and dated > when):
                    unit.text = postponement.applied(unit.text, unit.lead, own=doc == notice)

    def _notes(self, nodes: Sequence[NodeWithScore], shown: Iterable[int]) -> list[str]:
        """The currency note of each of the `shown` chunks (indices into `nodes`, in citation order)."""
        docs = [nodes[i].node.metadata.get("doc") for i in shown]
        return self.notes(docs) if self.notes else [""] * len(docs)

    def _prioritise(self, question: str, nodes: Sequence[NodeWithScore], candidates: list[Unit]) -> None:
        if not candidates:
            return
        titles = [str(n.node.metadata.get("Title") or n.node.metadata.get("doc") or "") for n in nodes]
        # The title gives a bare row or bullet its subject ("412" of which test?).
        passages = [f"{titles[u.chunk]}. {' '.join(u.lead[:1])}. {u.text}" for u in candidates]
        relevance = self.encoder([(question, p) for p in passages])
        asked = trigrams(question)
        last = max(len(nodes) - 1, 1)
        for unit, score, passage in zip(candidates, relevance, passages):
            wording = len(asked & trigrams(passage)) / len(asked) if asked else 0.0
            unit.priority = score + wording + self.rank_weight * (1 - unit.chunk / last)


@dataclass
class Widening:
    """When and how far a question's evidence is widened (`[context] widen_*`): step `n` keeps
    `factor**n` times the chunks and the token budget, at most `steps` times, none started once
    the question has taken `time_s`."""

    steps: int
    factor: float
    time_s: float

    @classmethod
    def from_settings(cls, settings: Settings) -> Widening:
        context = settings.context
        return cls(context.widen_steps, context.widen_factor, context.widen_time_s)

    def size(self, base: int, step: int) -> int:
        return round(base * self.factor**step)

    def allows(self, step: int, elapsed_s: float) -> bool:
        """Whether a widening step may follow try `step` (0: the first)."""
        return step < self.steps and elapsed_s < self.time_s

    @staticmethod
    def lacks(question: str, shown: Sequence[Unit]) -> str | None:
        """What the evidence shown lacks that the question asks for, if anything."""
        return lacks(question, (u.text for u in shown))
