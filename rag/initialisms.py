"""The initialisms a document spells out, so that a question naming a column's words finds the
column its table heads with the short form ("Settlement at WL (mm)", where the report says
"the design working load (WL)"). Two letters are too few to guess from a question's initials
(rag/labels.py `initials` needs three): the document's own definition decides.

>>> definitions("Each pile was loaded to the design working load (WL) and held.")
{'WL': 'working load'}
>>> definitions("SSL = Safe Storage Limit; RAG: red, amber or green")
{'SSL': 'Safe Storage Limit'}
>>> definitions("neutral salt-spray life (SSL) and optical haze")
{'SSL': 'salt-spray life'}
>>> spelled_out("Settlement at WL (mm)", {"WL": "working load"})
'Settlement at working load (mm)'
"""

from __future__ import annotations

import re

SHORT = re.compile(r"\b[A-Z]{2,5}\b")  # an initialism as a header writes it
_BEFORE = re.compile(r"((?:[A-Za-z][\w-]*[\s,]+){1,8})\(([A-Z]{2,5})\)")  # "working load (WL)"
_AFTER = re.compile(r"\b([A-Z]{2,5})\s*(?:=|:|\(|-|–|means|stands for)\s*([A-Za-z][A-Za-z -]{2,80})")
_GLUE = frozenset("of and at in for to on the a".split())  # may sit inside a spelled-out name


def _spelling(letters: str, words: list[re.Match[str]]) -> int:
    """How many of the words (a hyphenated one's parts each a word: "salt-spray life" is SSL) spell
    the letters by their initials, small linking words ("of", "and") allowed between them; 0 when
    they do not."""
    i = 0
    for n, word in enumerate(words):
        if i == len(letters):
            return n
        if word.group()[0].upper() == letters[i]:
            i += 1
        elif not (i and word.group().lower() in _GLUE):
            return 0
    return len(words) if i == len(letters) else 0


def definitions(text: str) -> dict[str, str]:
    """Initialism -> the words the text spells it out with, where it says so once one way."""
    found: dict[str, set[str]] = {}
    for match in _BEFORE.finditer(text):
        words, short = list(re.finditer(r"[A-Za-z]+", match.group(1))), match.group(2)
        # the spelled-out name ends at the bracket: read its words backwards from there
        for start in range(len(words) - len(short), -1, -1):
            if _spelling(short, words[start:]) == len(words) - start:
                found.setdefault(short, set()).add(match.group(1)[words[start].start():].strip(" ,"))
                break
    for match in _AFTER.finditer(text):
        short, words = match.group(1), list(re.finditer(r"[A-Za-z]+", match.group(2)))
        if n := _spelling(short, words):
            found.setdefault(short, set()).add(match.group(2)[: words[n - 1].end()])
    return {short: next(iter(names)) for short, names in found.items()
            if len({n.lower() for n in names}) == 1}


def spelled_out(label: str, defined: dict[str, str]) -> str:
    """The label with each initialism the document defines written out; the label itself when none."""
    return SHORT.sub(lambda m: defined.get(m.group(), m.group()), label)
