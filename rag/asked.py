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

A date is no quantity, and a "where" is not answered by the question's own words and a date:

    >>> lacks("How much notice must we give?", ["We must give notice by 28 February 2025, after Q4 [1]."])
    'no figure'
    >>> lacks("Where do visitors check in when they arrive?", ["You can check in on 31 October [1]."])
    'no place'
    >>> lacks("Where do visitors check in?", ["Visitors check in at the gatehouse [1]."]) is None
    True
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rag.places import dates, keys
from rag.text import MARKER
from rag.units import FREQUENCY_WORDS, NUMBER_WORDS, amounts, named_units

_ASKS_QUANTITY = re.compile(r"\bhow (?:many|much|long|far|old|large|big|high|heavy|fast|often)\b|몇|얼마",
                            re.IGNORECASE)
_ASKS_PLACE = re.compile(r"\bwhere\b|어디", re.IGNORECASE)
_ASKS_FIGURE = re.compile(
    r"\b(?:how (?:many|much|long|far|old|large|big|high|heavy|fast|often)|when\b|which (?:year|date|month)|"
    r"what (?:(?:is|are|was|were|will be) )?(?:(?:the|a|an) )?(?:[\w'-]+ ){0,3}"
    r"(?:percentage|share|number|amount|rate|date|year|time|value|score|level|limit|"
    r"cap|fee|allowance|threshold|budget|cost|price|deadline|retention|premium|ratio)s?\b)|"
    r"몇|얼마|언제|며칠|날짜|연도|비율|수치", re.IGNORECASE)
_WORDED = rf"{NUMBER_WORDS}|thousand|million|billion"
# A count or a frequency in words is a figure too ("every two weeks", "twice a year", 매주).
_WORDED_FIGURE = re.compile(
    rf"\b(?:{_WORDED}|{FREQUENCY_WORDS}|half|dozen)\b"
    r"|매일|매주|매월|매달|매년|격주|하루|이틀|사흘|한 달|일주일",
    re.IGNORECASE)
_COUNTED_IN = re.compile(r"\bhow many ([a-z]+)\b", re.IGNORECASE)


def _counted(question: str) -> tuple[str, str] | None:
    """(the word, its unit) a question counts in ("how many days": ("days", "day")), or None."""
    counted = _COUNTED_IN.search(question)
    unit = next(iter(named_units(counted.group(1))), None) if counted else None
    return (counted.group(1), unit) if unit else None


def _gives(text: str, counted: tuple[str, str] | None, amounts_only: bool = False) -> bool:
    """Whether the text gives a figure (a digit, or with `amounts_only` an amount: a digit of a
    code such as "Q4" is none), or one in the unit `counted`."""
    if counted is None:
        figure = bool(amounts(text)) if amounts_only else bool(re.search(r"\d", text))
        return figure or bool(_WORDED_FIGURE.search(text))
    word, unit = counted
    return any(a.unit == unit for a in amounts(text)) or bool(
        re.search(rf"\b(?:{_WORDED})[\s-]+{re.escape(word)}\b", text, re.IGNORECASE))


def lacks(question: str, texts: Iterable[str]) -> str | None:
    """What the texts lack that the question asks for ("no figure": none, or none in the unit it
    counts in; a date is no quantity; "no place": a "where" answered with nothing but the
    question's own words and a date), or None; citation marks ("[1]") are no figures."""
    texts = [MARKER.sub("", t) for t in texts]
    if _ASKS_PLACE.search(question) and texts and not any(_beyond(t, question) for t in texts):
        return "no place"  # "where do I check in when I get there?" asks for a place all the same
    if not _ASKS_FIGURE.search(question):
        return None
    counted = _counted(question)
    quantity = bool(_ASKS_QUANTITY.search(question))
    if quantity:  # "how much notice": 28 February 2025 is no amount of it
        texts = [_undated(t) for t in texts]
    return None if any(_gives(t, counted, amounts_only=quantity) for t in texts) else "no figure"


def _undated(text: str) -> str:
    for _, start, end in reversed(dates(text)):
        text = f"{text[:start]} {text[end:]}"
    return text


# Words that say nothing of where: modals, pronouns, light verbs ("You can check in at ...").
_EMPTY = frozenset("can could may might must shall should will would you your yours we our us they them "
                   "their he she his her me my get gets got go goes need needs".split())


def _beyond(text: str, question: str) -> bool:
    """Whether the text says something the question does not: a word (not a date) of its own."""
    return bool({k for k, _, _ in keys(_undated(text))} - {k for k, _, _ in keys(question)} - _EMPTY)
