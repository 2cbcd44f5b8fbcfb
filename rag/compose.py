"""Answers composed from evidence units (`[answer] mode = "compose"`). A small model chooses
among numbered sentences, list items and table rows far better than it writes a figure: the
prompt shows the context's units numbered one by one, the model replies with the numbers of those
that answer (and, where the units cannot say it, a short addition: a yes or no, a comparison),
and the answer is the picked units' own text. Each composed sentence cites its unit's chunk,
exact by construction (support 1.0); the model's added words go through the reference matcher
and are dropped where no chunk supports them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from rag.asked import heading
from rag.answer import AnswerSegment, Source
from rag.context import Evidence, Unit, row_pairs
from rag.references import ReferenceMatcher, marked
from rag.settings import Settings
from rag.text import split_sentences

# The reply's leading numbers: "2", "1, 3", "[2] and [4]", "2번, 3번"; what follows is the addition.
_PICKS = re.compile(r"^\W*(?:answer\s+)?(?:lines?\s*)?(?:\([^)\n]*\)\s*)?:?\s*"
                    r"((?:\[?\d{1,3}\]?(?:번)?(?:\s*(?:,|;|&|\band\b|및)\s*|\s+(?=\[?\d))?)+)", re.IGNORECASE)
_NUMBER = re.compile(r"\d{1,3}")
# A column's unit in its name, "Peak force (kN)": written after the value when a row is quoted.
_COLUMN_UNIT = re.compile(r"^(?P<name>.+?)\s*[(\[](?P<unit>[^()\[\]]{1,12})[)\]]\s*$")


# Streamed instead of the model's reply while it picks units (numbers, not prose), and when the
# evidence is widened; a reader then sees the finished answer in their place.
NOTICES = {
    "compose": {"English": "Choosing the passages that answer...\n",
                "Korean": "답이 되는 문장을 고르는 중입니다...\n"},
    "widen": {"English": "Looking further in the documents...\n",
              "Korean": "문서를 더 찾아보는 중입니다...\n"},
}


def notice(kind: str, language: str) -> str:
    """The notice of this kind in the answer language (English where there is none)."""
    return NOTICES[kind].get(language, NOTICES[kind]["English"])


@dataclass(frozen=True)
class Composed:
    """A composed answer: its text with each unit's citation mark, and its segments."""

    text: str
    segments: list[AnswerSegment]


def picks(reply: str, count: int) -> tuple[list[int], str]:
    """(the unit numbers the reply names, from 1 to `count`, in its order without repeats; the
    addition after them, its first line)."""
    found = _PICKS.match(reply)
    if not found:
        return [], ""
    numbers = [int(n) for n in _NUMBER.findall(found.group(1))]
    valid = list(dict.fromkeys(n for n in numbers if 1 <= n <= count))
    rest = reply[found.end():].lstrip(" .:;,-—\t").split("\n", 1)[0].strip()
    return valid, rest


def quoted(unit: Unit) -> str:
    """A unit as the answer quotes it: its text, a table row's `column (unit): value` pairs with
    each unit moved after its value ("Peak force: 61.2 kN"), and a unit in the row's label
    ("Chest deflection (mm)") after each of its figures, so no figure loses its unit."""
    pairs = row_pairs(unit.text)
    if pairs is None:
        return unit.text
    label = _COLUMN_UNIT.match(pairs[0][1])
    out = []
    for i, (name, value) in enumerate(pairs):
        column = _COLUMN_UNIT.match(name)
        if i == 0 and label:
            value = label["name"]
        elif re.search(r"\d\s*$", value) and (column or label):
            name, value = (column or {"name": name})["name"], f"{value} {(column or label)['unit']}"
        out.append(f"{name}: {value}")
    return "; ".join(out)


@dataclass
class Composer:
    """Writes the compose prompt and builds the answer from the model's reply."""

    prompt: str
    matcher: ReferenceMatcher

    @classmethod
    def from_settings(cls, settings: Settings, matcher: ReferenceMatcher) -> Composer:
        return cls(settings.answer.compose_prompt_file.read_text(encoding="utf-8"), matcher)

    def prompt_for(self, question: str, context: str, language: str) -> str:
        # What varies comes last: llama.cpp reuses the evaluated prefix of the previous prompt.
        return self.prompt.format(context=context, question=question, language=language)

    def compose(self, reply: str, evidence: Evidence, sources: list[Source],
                threshold: float | None = None, question: str = "") -> Composed | None:
        """The answer from the units the reply picks (None when it picks none, or only a document's
        heading or header lines the question does not ask about): the supported sentences of its
        addition first, then each unit quoted and cited to its chunk."""
        numbers, addition = picks(reply, len(evidence.units))
        numbers = [n for n in numbers if not heading(evidence.units[n - 1].text, question)]
        if not numbers:
            return None
        segments: list[AnswerSegment] = []
        if addition:
            matched = self.matcher.run(addition, evidence.nodes, threshold, question)
            segments += [AnswerSegment.of(s, sources) for s in matched if s.supported]
        for number in numbers:
            unit = evidence.units[number - 1]
            source = sources[evidence.ref(unit) - 1]
            segments.append(AnswerSegment(marked(quoted(unit), [source.ref]), [0, 0], True,
                                          [source.reference(1.0)]))
        numbered, first = [], 0
        for segment in segments:  # sentence indices into the composed text
            last = first + max(len(split_sentences(segment.text)), 1) - 1
            numbered.append(replace(segment, sentences=[first, last]))
            first = last + 1
        return Composed("\n".join(s.text for s in numbered), numbered)
