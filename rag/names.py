"""The names a sentence gives what it speaks of, and whether a text holds them: a capitalised
word after the sentence's first ("the SeaFresh contract", "the Leeds site") or a code
("TRK-0421"); "I" and "I'm" are the asker's words, echoed. A clause of another contract, site or
test states nothing about this one, so a sentence is backed only where its names stand.

>>> names("The speed limit in the yard at the Leeds site is 10 km/h.")
['Leeds']
>>> held(names("I'm told the Gdansk depot opened in 2019."), "Gdańsk depot: opened 2019")
True
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from rag.premise_words import CALENDAR
from rag.references import Segment
from rag.text import MARKER, NUMBER, across_scripts, folded, split_sentences

# A document's name as the model cites it ("memo_schedule_changes_2025-03.md"): its date or
# number names the file, not what the sentence claims.
FILE_NAME = re.compile(r"[\w.-]+\.(?:md|txt|csv|json|html?|pdf|docx?|pptx?|xlsx?)\b"
                       r"|\b[A-Za-z]\w*_[\w-]*\d[\w-]*", re.IGNORECASE)
_NAME = re.compile(r"(?<=\s)(?!I\b|I['’][a-z]+\b)[A-Z][^\W_]*(?:[-'’][^\W_]+)*(?<!['’]s)|\b[A-Z]+-?\d[\w-]*")


def names(sentence: str) -> list[str]:
    """The sentence's names; a month or a weekday is a date's word ("on Thursday 5 December")."""
    return [name for name in _NAME.findall(sentence) if name.lower() not in CALENDAR]


def held(found: Sequence[str], text: str) -> bool:
    """Whether the text holds each name, accents and case aside."""
    lowered = folded(text).lower()
    return all(folded(name).lower() in lowered for name in found)


def named(segment: Segment, docs: Sequence[str | None], chunks: Sequence[str],
          document: Callable[[str], str]) -> Segment:
    """The matcher's segment with only the references whose document (`docs`, `chunks`: each
    reference's by its index; `document`: a document's whole text, read only where the chunk
    itself lacks a name) holds every name the segment gives its thing; unsupported when none is
    left. A chunk in the other script spells names its own way: it keeps its reference."""
    found = [n for sentence in split_sentences(FILE_NAME.sub("", MARKER.sub("", segment.text)))
             for n in names(sentence)]
    if not segment.supported or not found:
        return segment
    kept = [r for r in segment.references if across_scripts(segment.text, chunks[r.chunk])
            or held(found, chunks[r.chunk]) or (docs[r.chunk] and held(found, document(docs[r.chunk])))]
    return _kept(segment, kept)


def _kept(segment: Segment, kept: list) -> Segment:
    if len(kept) == len(segment.references):
        return segment
    return replace(segment, references=kept, supported=bool(kept), score=kept[0].score if kept else 0.0)


def sited(segment: Segment, chunks: Sequence[str], codes: Mapping[str, str]) -> Segment:
    """The segment with only the references whose chunk says its figures of a site (team, works)
    the segment names: `codes` are the corpus's sites by code and name (rag/codes.py), and a
    chunk's sentence giving every figure of the segment but naming another of them and not the
    segment's ("Kellbrook UV reactor ... to 2 June 2025" cited for "the UV reactor at Gimhae was
    commissioned on 2 June 2025") states nothing of that site. A figure in no one sentence keeps
    its reference: the other rules read it."""
    text = FILE_NAME.sub("", MARKER.sub("", segment.text))
    spelled = {code: (code, name.split()[0]) for code, name in codes.items()}
    asked = {code for code, words in spelled.items() if any(_says(w, text) for w in words)}
    figures = set(NUMBER.findall(text))
    if not segment.supported or not asked or not figures:
        return segment

    def of(sentence: str) -> set[str]:
        return {code for code, words in spelled.items() if any(_says(w, sentence) for w in words)}

    def elsewhere(chunk: str) -> bool:
        stating = [s for s in split_sentences(" ".join(chunk.split())) if figures <= set(NUMBER.findall(s))]
        return bool(stating) and all(found and not found & asked for found in map(of, stating))

    return _kept(segment, [r for r in segment.references if not elsewhere(chunks[r.chunk])])


def _says(word: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None
