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
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rag.text import MARKER

_ASKS_FIGURE = re.compile(
    r"\b(?:how (?:many|much|long|far|old|large|big|high|heavy|fast|often)|when\b|which (?:year|date|month)|"
    r"what (?:(?:is|are|was|were|will be) )?(?:(?:the|a|an) )?(?:[\w'-]+ ){0,3}"
    r"(?:percentage|share|number|amount|rate|date|year|time|value|score|level|limit|"
    r"cap|fee|allowance|threshold|budget|cost|price|deadline|retention|premium|ratio)s?\b)|"
    r"몇|얼마|언제|며칠|날짜|연도|비율|수치", re.IGNORECASE)
# A count or a frequency in words is a figure too ("every two weeks", "twice a year", 매주).
_GIVES_FIGURE = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|"
    r"forty|fifty|hundred|thousand|million|billion|once|twice|daily|weekly|fortnightly|monthly|"
    r"quarterly|yearly|annually|half|dozen)\b|매일|매주|매월|매달|매년|격주|하루|이틀|사흘|한 달|일주일",
    re.IGNORECASE)


def lacks(question: str, texts: Iterable[str]) -> str | None:
    """What the texts lack that the question asks for ("no figure"), or None; citation marks
    ("[1]") are no figures."""
    if _ASKS_FIGURE.search(question) and not any(_GIVES_FIGURE.search(MARKER.sub("", t)) for t in texts):
        return "no figure"
    return None
