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

A document's heading or its header fields, quoted back, answer nothing the question does not ask
of them:

    >>> heading("KESTREL ANALYTICAL - GHENT SITE [1] INTERNAL MEMO [1]", "Which samples were lost?")
    True
    >>> heading("Document number: SOP-12 Version: 3.1 Effective date: 4 March 2024", "When is the audit?")
    True
    >>> heading("Version: 3.1 [1]", "Which version of SOP-12 is in force?")
    False
    >>> heading("The freezer reached -52 °C [1].", "How warm did the freezer get?")
    False

A file's name is no figure, its date neither: "call ops-notes-2025-02-11.md" gives no number;
nor does a figure the question gives, said back:

    >>> lacks("What number should I call?", ["You should call ops-notes-2025-02-11.md [1]."])
    'no figure'
    >>> lacks("How warm did the -80 freezer get?", ["The -80 freezer got to -80 degrees [1]."])
    'no figure'
    >>> lacks("How many of the 11 results were real failures?", ["3 of the 11 were [1]."]) is None
    True

An email address is asked for with its @, a percentage with its per cent:

    >>> lacks("What's the email address of the PI on the grant?", ["pi_staff_id: S005 [1]"])
    'no email'
    >>> lacks("What percentage goes to the inventors?", ["The IP Panel meets monthly [1]."])
    'no percentage'
    >>> lacks("What percentage goes to the inventors?", ["Inventors receive 50 % [1]."]) is None
    True
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rag.names import FILE_NAME
from rag.places import dates, keys
from rag.text import MARKER, NUMBER
from rag.units import FREQUENCY_WORDS, NUMBER_WORDS, amounts, named_units

_HOW = r"how (?:many|much|long|far|old|large|big|high|heavy|fast|often|warm|cold|hot|deep|wide|tall|low)"
_ASKS_QUANTITY = re.compile(rf"\b{_HOW}\b|몇|얼마",
                            re.IGNORECASE)
_ASKS_PLACE = re.compile(r"\bwhere\b|어디", re.IGNORECASE)
_ASKS_EMAIL = re.compile(
    r"\be-?mail address\b|\bwhat(?:'s| is| are)? (?:[\w'’-]+ ){0,4}e-?mails?\b|이메일 주소", re.IGNORECASE)
_ASKS_PERCENT = re.compile(
    r"\bwhat (?:percentage|per ?cent)\b|\bhow many per ?cent\b|몇 ?퍼센트", re.IGNORECASE)
_PERCENT = re.compile(r"%|\bper ?cent\b|\bpercent\b|퍼센트")
_ASKS_FIGURE = re.compile(
    rf"\b(?:{_HOW}|when\b|which (?:year|date|month)|"
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
    question's own words and a date), or None; citation marks ("[1]") and file names are no figures,
    nor is a figure the question gives ("how warm did the -80 freezer get": not -80)."""
    texts = [FILE_NAME.sub("", MARKER.sub("", t)) for t in texts]
    if _ASKS_PLACE.search(question) and texts and not any(_beyond(t, question) for t in texts):
        return "no place"  # "where do I check in when I get there?" asks for a place all the same
    if _ASKS_EMAIL.search(question) and not any("@" in t for t in texts):
        return "no email"  # the PI's grant row is not their address
    if _ASKS_PERCENT.search(question) and not any(_PERCENT.search(t) for t in texts):
        return "no percentage"  # "the IP Panel meets monthly" gives none
    if not asks_figure(question):
        return None
    if given := set(NUMBER.findall(question)):
        own = re.compile(rf"(?<![\d.,])(?:{'|'.join(map(re.escape, given))})(?![\d]|[.,]\d)")
        texts = [own.sub(" ", t) for t in texts]
    counted = _counted(question)
    quantity = asks_quantity(question)
    if quantity:  # "how much notice": 28 February 2025 is no amount of it
        texts = [_undated(t) for t in texts]
    return None if any(_gives(t, counted, amounts_only=quantity) for t in texts) else "no figure"


def asks_figure(question: str) -> bool:
    """Whether a question asks for a figure or a date (how many, when, what rate...), not a name."""
    return bool(_ASKS_FIGURE.search(question))


def asks_quantity(question: str) -> bool:
    """Whether a question asks how many, how much, how long, how warm... (몇, 얼마): an amount, no date."""
    return bool(_ASKS_QUANTITY.search(question))


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


# The labels of a document's own header lines: a sentence opening with one is the header quoted.
_HEADER_LABEL = re.compile(
    r"^\s*(subject|re|ref(?:erence)?|document(?: number| no\.?| id)?|doc no\.?|version|rev(?:ision)?|"
    r"effective(?: date)?|date|owner|author|title|to|from|cc|status|classification|approved by|"
    r"prepared by|issued(?: by)?|page)\s*:", re.IGNORECASE)


def heading(text: str, question: str) -> bool:
    """Whether a sentence is a heading (no lower-case word) or a document's header line ("Subject:
    ...", "Version: 3.1 Owner: ...") whose label the question does not name: quoted back, it
    answers nothing."""
    text = MARKER.sub("", text).strip()
    if re.search(r"[A-Z]{2}", text) and not re.search(r"[a-z가-힣]", text):
        return True
    label = _HEADER_LABEL.match(text)
    return bool(label) and not any(k in {w for w, _, _ in keys(label.group(1))}
                                   for k, _, _ in keys(question))
