"""A draft the references gate would refuse, answered by quoting the one unit it paraphrases. A
1.5B model often gives the right figure in the question's words ("the client must hear how the
work stands every two weeks"), which no chunk says in those words, so the gate refuses a right
answer. When one evidence unit (a sentence, a list item, a table row) states every figure and
date the draft claims, is about what the question asks (it shares the question's words and names
its names) and no other unit does, the answer is that unit, quoted and cited to its chunk, exact
by construction; the model's paraphrase stays only as the draft. A yes or no leads the quote when
the question asks one and the unit reaches it: the case the question gives meets the unit's rule
("a project billed at EUR 150 thousand" under "a fee above EUR 100 thousand needs ..."). A
figure the question gives ("the 2024 audit") may stand in the unit's heading or chunk; a figure
of the draft's own must stand in the unit, and not as one the evidence corrects ("should read
2.4, not 3.4": the results row that still says 3.4 is not quoted).

    >>> from rag.context import Unit
    >>> shown = [Unit(0, 0, "A status note goes to the client every two weeks while an engagement is open."),
    ...          Unit(0, 1, "Engagement files are closed within 30 days of the final deliverable.")]
    >>> quoted_unit("How often must the client of an ongoing engagement hear how the work stands?",
    ...             "The client must hear how the work stands every two weeks.", shown, {}).position
    0
    >>> quoted_unit("What mileage rate is paid for a private car?", "The mileage rate is 30 days.",
    ...             shown, {}) is None
    True

Written here, not taken from a library: extractive QA models pick a span by wording alone, and
the point is to trust no unit whose figure the draft does not claim.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from llama_index.core.schema import MetadataMode

from rag.asked import heading
from rag.answer import AnswerSegment, Source
from rag.claims import claim_backed, claims, met_cases, states_former
from rag.places import keys
from rag.compose import quoted
from rag.context import Evidence, Unit, row_pairs
from rag.labels import content, named, words
from rag.premise_words import YES_NO
from rag.references import marked
from rag.rewrite import script_language
from rag.settings import Settings
from rag.text import split_sentences
from rag.units import CURRENCIES, FREQUENCY_WORDS, NUMBER_WORDS, UNITS

# A count or a frequency in words ("every two weeks", "twice a year"), matched in the unit as
# written.
_WORDED = re.compile(rf"\b(?:(?:{NUMBER_WORDS})\s+[a-z]+|{FREQUENCY_WORDS})\b", re.IGNORECASE)
# A draft that gives a yes or no.
_YES_NO = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|no|never|none|cannot|without)\b|n't\b", re.IGNORECASE)
# A name: a capitalised word or a code after a sentence's first word ("IT", "SL-05", "Karrow").
_NAME = re.compile(r"\b(?:[A-Z][A-Za-z0-9-]*[A-Z0-9][A-Za-z0-9-]*|[A-Z][a-z]{2,})\b")
_NOT_NAMES = {s.lower() for spellings in (*UNITS.values(), *CURRENCIES.values()) for s in spellings}


def _names(question: str) -> set[str]:
    return {m.group().lower() for sentence in split_sentences(question)
            for m in _NAME.finditer(sentence) if m.start() > 0} - _NOT_NAMES


def _words(text: str) -> set[str]:
    return {k for k, _, _ in keys(text)}


def _row_named(unit: Unit, question: str) -> bool:
    """Whether a table row (`column: value` pairs) is one the question names by a value of its own
    ("the forklift operator course"); a sentence needs no such name. A crane course's question is
    not answered by the forklift row."""
    pairs = row_pairs(unit.text)
    if pairs is None:
        return True
    asked = words(question)
    return any(named(value, asked)[0] == 1 for _, value in pairs if content(value))


def quoted_unit(question: str, draft: str, shown: Sequence[Unit], chunks: Mapping[int, str],
                min_shared: int = 2) -> Unit | None:
    """The one unit of `shown` the draft paraphrases, or None. `chunks[unit.chunk]` is the whole
    text of the unit's chunk with its header, where the question's names may stand."""
    found = claims(draft)
    given = {c.amount.number for c in claims(question) if c.amount is not None}
    new = [c for c in found if c.amount is None or c.amount.number not in given]
    worded = [m.group().lower() for m in _WORDED.finditer(draft) if m.group().lower() not in question.lower()]
    asked, names = _words(question), _names(question)
    if any(states_former(c, unit.text) for c in new for unit in shown):
        return None  # the evidence gives the draft's figure as the one corrected away
    fits = []
    for unit in shown:
        if heading(unit.text, question):
            continue  # a document's heading or header line answers nothing
        about = " ".join((*unit.lead, unit.text))
        around = f"{about} {chunks.get(unit.chunk, '')}"
        if len(asked & _words(about)) < min_shared:
            continue
        if not all(name in around.lower() for name in names):
            continue
        # A figure the question gives ("the 2024 audit") may stand in the unit's heading or
        # chunk; the draft's own figures must stand in the unit.
        if not all(claim_backed(c, unit.text if c in new else around) for c in found):
            continue
        if not all(w in unit.text.lower() for w in worded):
            continue
        if not _row_named(unit, question):
            continue
        # Something of the draft's own must pick the unit: a figure or a count the question does
        # not give, or the question's case meeting the unit's rule. An echo picks nothing.
        if new or worded or met_cases(draft, unit.text) & given:
            fits.append(unit)
    return fits[0] if len({u.text for u in fits}) == 1 else None


@dataclass
class Quoter:
    """Answers a refused draft with the unit it paraphrases (module docstring); `newer(doc)`: the
    documents currency says supersede or correct `doc` (rag/currency.py)."""

    newer: Callable[[str | None], list[str]] = lambda doc: []
    enabled: bool = True
    min_shared: int = 2  # question words the unit (with its heading) must share

    @classmethod
    def from_settings(cls, settings: Settings, newer: Callable[[str | None], list[str]]) -> Quoter:
        return cls(newer, settings.answer.quote_paraphrases, settings.answer.quote_min_shared)

    def quote(self, question: str, draft: str, evidence: Evidence, sources: list[Source],
              language: str) -> tuple[str, list[AnswerSegment]] | None:
        """(the answer text, its segments) quoting the unit, or None."""
        if not self.enabled:
            return None
        chunks = {index: node.node.get_content(metadata_mode=MetadataMode.EMBED)
                  for index, node in zip(evidence.chunks, evidence.nodes)}
        # No unit of a version that a shown document supersedes: its figure is not current.
        docs = {index: node.node.metadata.get("doc") for index, node in zip(evidence.chunks, evidence.nodes)}
        shown = set(docs.values())
        stale = {doc for doc in shown if set(self.newer(doc)) & shown}
        current = [u for u in evidence.units if docs.get(u.chunk) not in stale]
        unit = quoted_unit(question, draft, current, chunks, self.min_shared)
        if unit is None or script_language(unit.text) != language:
            return None  # a quote in the other language would not answer the asker
        source = sources[evidence.ref(unit) - 1]
        reference = [source.reference(1.0)]
        segments = [AnswerSegment(marked(quoted(unit), [source.ref]), [0, 0], True, reference)]
        verdict = _YES_NO.match(draft)
        if (YES_NO.match(question) and verdict
                and (verdict.group(1).lower() == "no") == bool(_NEGATION.search(unit.text))):
            # The yes or no the unit reaches, from the unit: its own sentence, cited to it.
            segments = [AnswerSegment(f"{verdict.group(1).capitalize()}.", [0, 0], True, reference),
                        AnswerSegment(segments[0].text, [1, 1], True, reference)]
        return " ".join(s.text for s in segments), segments
