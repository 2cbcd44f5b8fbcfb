"""Plain-text layout: a hard-wrapped paragraph's lines joined (`unwrapped`), "label: value"
fields (`fields`) and the short title a field block stands under (`title`, `following`), read
alike by rag/places.py (the places that state figures), rag/context.py (the units the prompt
shows) and rag/corrections.py (which side of a correction a field gives).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# a table row, heading or list item starts a line (a list number, not a year: "2025. The ..."); a
# list item may wrap onto the next line, a table row or heading may not
_BLOCK = re.compile(r"^\s*(?:\||#|[-*•·]\s|\d{1,3}[.)]\s)")
_OPEN_BLOCK = re.compile(r"^\s*(?:\||#)")


def unwrapped(lines: list[str]) -> list[str]:
    """Lines with a hard-wrapped paragraph's lines joined (a plain-text file wrapped at 72
    columns splits "account for 45% of / revenue"): a line continues the one before when that one
    is long and ends no sentence, or when it starts in lower case.

    >>> unwrapped(["Clients account for 45% of the firm's revenue this year, and food for", "40%.", "Notes"])
    ["Clients account for 45% of the firm's revenue this year, and food for 40%.", 'Notes']
    >>> unwrapped(["Customers and revenue", "Revenue in 2024 was EUR 58.3 million."])
    ['Customers and revenue', 'Revenue in 2024 was EUR 58.3 million.']
    >>> unwrapped(["2. Complaints. The report states 1,284. Complaints", "by web chat were omitted."])
    ['2. Complaints. The report states 1,284. Complaints by web chat were omitted.']
    """
    joined: list[str] = []
    for line in lines:
        previous = joined[-1] if joined else ""
        wrapped = len(previous) >= 50 and not re.search(r"[.!?:;]\s*$", previous)
        if (previous.strip() and line.strip() and not _BLOCK.match(line) and not _OPEN_BLOCK.match(previous)
                and (line.lstrip()[:1].islower() or wrapped)):
            joined[-1] = f"{previous.rstrip()} {line.strip()}"
        else:
            joined.append(line)
    return joined


# A plain-text heading: a short line, no sentence, over "label: value" fields ("Correction 1 -
# Kraków occupancy" over "Printed: 78.6%").
LIST_NUMBER = re.compile(r"^\s*\d{1,3}[.)]\s+")
_TITLE = re.compile(r"^\s*([^\s:|#*-][^:|.!?]{2,60}?)\s*$")
_NOTE = re.compile(r"\s*\([^()]*\)")
# A field's label: a key path ("term.notice_period_days") or up to four words, at the start of a
# sentence or after the previous field's value ("Address: Noorderlaan 412 Headcount: 188", a
# Markdown paragraph of "label: value" lines joined by the converter).
_LABEL = re.compile(r"(?:^|(?<=\s))([A-Za-z_][\w.\[\]-]*(?: [A-Za-z][\w-]*){0,3}|[가-힣]+(?: [가-힣]+){0,2})"
                    r":\s+")


def title(line: str, following: str) -> re.Match | None:
    """A short line of a few words standing over a "label: value" field, as a heading; its list
    number is no part of it ("1. Annual recurring revenue (ARR) at 30 September 2024")."""
    if not fields(following.strip())[0][0]:
        return None
    line = LIST_NUMBER.sub("", line)
    for text in (line, _NOTE.sub("", line)):  # too long with its note: "(section 2 table and section 3)"
        if (match := _TITLE.match(text)) and len(match.group(1).split()) <= 10:
            return match
    return None


def following(lines: Sequence[str], i: int) -> str:
    """The first line after line `i` that is not blank: a title may stand a blank line above its fields."""
    return next((line for line in lines[i + 1 :] if line.strip()), "")


def fields(sentence: str) -> list[tuple[str, str]]:
    """(label, value) of each field of a sentence that starts with one, else [("", sentence)]:

    >>> fields("Headcount: 71 Site manager: Tomasz Wiśniewski")
    [('Headcount', '71'), ('Site manager', 'Tomasz Wiśniewski')]
    >>> fields("term.notice_period_days: 90")
    [('term.notice_period_days', '90')]
    >>> fields("The audit found 3 issues: two high.")
    [('', 'The audit found 3 issues: two high.')]
    """
    labels = list(_LABEL.finditer(sentence))
    if not labels or labels[0].start() != 0:
        return [("", sentence)]
    ends = [m.start() for m in labels[1:]] + [len(sentence)]
    return [(m.group(1), sentence[m.end():end].strip()) for m, end in zip(labels, ends)]
