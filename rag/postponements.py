"""A postponement carried into the other documents the context shows, as rag/errata.py carries an
erratum's figure: a memo that moves an event names no document it corrects (the events calendar,
last year's report and the branch plan each still give the old date, and the small model repeats
whichever it reads first), so the change is read from the notice itself. A paragraph that says an
event was due on one date ("was due to take place on", "as planned", "예정이었던") and has been
postponed, and gives the date it now has ("will now be held on", "The new reopening date is",
"변경된 개최일은"), moves that event: each unit of an older document that gives the old date and
shares two of the paragraph's words gets the new date in its place, and the notice's own sentence
no longer offers the old date as an answer.

>>> notice = ("The Archives Open Day, which was due to take place on Saturday 14 September 2024, has "
...           "been postponed. The Open Day will now be held on Saturday 19 October 2024.")
>>> [moved] = postponements(notice)
>>> moved.old, moved.new
((2024, 9, 14), 'Saturday 19 October 2024')
>>> moved.applied("The Archives will hold its first Open Day on 14 September 2024, with tours.")
'The Archives will hold its first Open Day on Saturday 19 October 2024 (rescheduled), with tours.'
>>> moved.applied("The Archives will close for stocktaking on 14 September 2024.")  # not the event
'The Archives will close for stocktaking on 14 September 2024.'
>>> moved.applied(notice.split(". ")[0], own=True)
'The Archives Open Day, which was due to take place on its original date, has been postponed'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rag.labels import content, same
from rag.places import Date, dates
from rag.premise_words import CALENDAR
from rag.text import split_sentences

# The date an event had: "was due to", "was planned for", "as planned", "originally", "예정이었던".
_WAS_DUE = re.compile(r"\b(?:was|were|had been)\s+(?:due|planned|scheduled|set|expected|booked)\b|"
                      r"\bas (?:planned|scheduled|announced|advertised)\b|\boriginally\b|"
                      r"예정이었던|예정되었던|예정이던|기존 일정", re.IGNORECASE)
# The paragraph moves it: without one, "was due on 3 June" and a later date are two facts.
_MOVED = re.compile(r"\bpostpon|\bput back\b|\bpushed back\b|\breschedul|\bdeferred\b|\bdelayed\b|\bmoved\b|"
                    r"연기|변경", re.IGNORECASE)
# The date it now has: "will now be held on", "The new reopening date is", "moved to", "변경된 개최일은".
_NOW = re.compile(r"\bnow\b|\bnew\b|\b(?:moved|postponed|put back|pushed back|rescheduled|deferred)\s+"
                  r"(?:to|until)\b|변경된|연기된|변경일", re.IGNORECASE)
# Month and weekday names, spelled out or short, are the dates' own words, no event's.
_DATE_WORDS = CALENDAR | {word[:3] for word in CALENDAR} | {"sept"}
# What an event is called: a capitalised word past a sentence's first ("the Archives Open Day",
# "Riverside Library"), a Korean word ("해운대 책 축제"); "library" alone is any event's.
_NAME = re.compile(r"\b[A-Z][a-z][\w'-]*|[가-힣]{2,}")
# A Korean date's weekday follows it: "2024년 9월 28일(토)".
_WEEKDAY_MARK = re.compile(r"\s?\([월화수목금토일]\)")
_SHARED = 2  # of the event's names a unit gives: one ("Central") is many events'


@dataclass(frozen=True)
class Postponement:
    """An event moved: the words of the paragraph that says so, the date it was due and the date
    it now has, as the notice writes it."""

    words: tuple[str, ...]
    old: Date
    new: str

    def about(self, text: str, lead: Sequence[str] = ()) -> bool:
        """Whether a text (or the heading over it) names the event."""
        return sum(any(same(w, u) or same(u, w) for u in self.words)
                   for w in set(content(" ".join([text, *lead])))) >= _SHARED

    def moves(self, text: str) -> bool:
        """Whether a text (a table's row) gives the event its old date."""
        return self.about(text) and any(_same_day(date, self.old) for date, _, _ in dates(text))

    def applied(self, text: str, lead: Sequence[str] = (), own: bool = False) -> str:
        """The unit's text with the old date replaced, where the unit is about the event (its
        `own` notice always is): the new date, or in the notice, words that give no date."""
        if not own and not self.about(text, lead):
            return text
        written = ("기존 일정" if re.search(r"[가-힣]", text) else "its original date") if own \
            else f"{self.new} (rescheduled)"
        out, end = [], 0
        for date, start, stop in dates(text):
            if _same_day(date, self.old):
                out += [text[end:start], written]
                end = stop + len(weekday.group()) if (weekday := _WEEKDAY_MARK.match(text, stop)) else stop
        return "".join(out) + text[end:]


@lru_cache(maxsize=4096)  # the cell lookup and the context read the same chunks of one question
def postponements(text: str) -> tuple[Postponement, ...]:
    """The events a chunk's paragraphs move: each paragraph with a postponement word, a sentence
    giving the date an event was due and, in it after that date or in a later sentence, the new
    date."""
    found: list[Postponement] = []
    for paragraph in re.split(r"\n\s*\n", text):
        one = " ".join(paragraph.split())
        if not _MOVED.search(one):
            continue
        sentences = split_sentences(one)
        words = tuple(dict.fromkeys(m.group().lower() for s in sentences for m in _NAME.finditer(s)
                                    if m.start() and m.group().lower() not in _DATE_WORDS))
        for i, sentence in enumerate(sentences):
            if not _WAS_DUE.search(sentence) or not (olds := dates(sentence)):
                continue
            old, _, old_end = olds[0]
            # "originally planned for 11 September will now take place on 16 October": one sentence
            rest = sentence[old_end:]
            later = [(rest, d) for d in dates(rest) if _NOW.search(rest)]
            later += [(s, d) for s in sentences[i + 1:] if _NOW.search(s) for d in dates(s)[:1]]
            if later:
                said, (_, start, stop) = later[0]
                found.append(Postponement(words, old, said[start:stop]))
    return tuple(found)


def _same_day(date: Date, old: Date) -> bool:
    """Whether a date is the old one: its month and day, and its year where both give one."""
    return date[1:] == old[1:] and old[2] is not None and (None in (date[0], old[0]) or date[0] == old[0])
