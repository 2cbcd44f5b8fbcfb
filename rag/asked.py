"""What kind of thing a question asks for, and whether a text gives it: a question that asks for
a figure or a date ("how many", "when", "what rate", 몇, 얼마, 언제) is not answered by a text that
holds no count, figure or date. Both the widening (the evidence lacks it: look further) and the
references gate (the supported sentences lack it: the answer is not given) ask this.

    >>> lacks("What mileage rate is paid for a private car?", ["This applies to all staff."])
    'no figure'
    >>> lacks("How often must the client hear from us?", ["Every two weeks."]) is None
    True
    >>> lacks("Who leads the review?", ["Erik Dahl leads it."]) is None
    True

A question that counts in a unit ("how many days") asks for a figure in it: flights of 6 hours
do not say within how many days a claim is filed.

    >>> lacks("Within how many days must claims be filed?", ["Flights of 6 hours or more."])
    'no figure'
    >>> lacks("Within how many days must claims be filed?", ["Within thirty days of the trip."]) is None
    True
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rag.text import MARKER
from rag.units import FREQUENCY_WORDS, NUMBER_WORDS, amounts, named_units

_ASKS_FIGURE = re.compile(
    r"\b(?:how (?:many|much|long|far|old|large|big|high|heavy|fast|often)|when\b|which (?:year|date|month)|"
    r"what (?:(?:is|are|was|were|will be) )?(?:(?:the|a|an) )?(?:[\w'-]+ ){0,3}"
    r"(?:percentage|share|number|amount|rate|date|year|time|value|score|level|limit|"
    r"cap|fee|allowance|threshold|budget|cost|price|deadline|retention|premium|ratio)s?\b)|"
    r"몇|얼마|언제|며칠|날짜|연도|비율|수치", re.IGNORECASE)
_WORDED = rf"{NUMBER_WORDS}|thousand|million|billion"
# A count or a frequency in words is a figure too ("every two weeks", "twice a year", 매주).
_GIVES_FIGURE = re.compile(
    rf"\d|\b(?:{_WORDED}|{FREQUENCY_WORDS}|half|dozen)\b"
    r"|매일|매주|매월|매달|매년|격주|하루|이틀|사흘|한 달|일주일",
    re.IGNORECASE)
_COUNTED_IN = re.compile(r"\bhow many ([a-z]+)\b", re.IGNORECASE)


def _counted(question: str) -> tuple[str, str] | None:
    """(the word, its unit) a question counts in ("how many days": ("days", "day")), or None."""
    counted = _COUNTED_IN.search(question)
    unit = next(iter(named_units(counted.group(1))), None) if counted else None
    return (counted.group(1), unit) if unit else None


def _gives(text: str, counted: tuple[str, str] | None) -> bool:
    text = MARKER.sub("", text)
    if counted is None:
        return bool(_GIVES_FIGURE.search(text))
    word, unit = counted
    return any(a.unit == unit for a in amounts(text)) or bool(
        re.search(rf"\b(?:{_WORDED})[\s-]+{re.escape(word)}\b", text, re.IGNORECASE))


def lacks(question: str, texts: Iterable[str]) -> str | None:
    """What the texts lack that the question asks for ("no figure": none, or none in the unit it
    counts in), or None; citation marks ("[1]") are no figures."""
    if not _ASKS_FIGURE.search(question):
        return None
    counted = _counted(question)
    return None if any(_gives(t, counted) for t in texts) else "no figure"
