"""The codes a corpus gives its names, so that a question naming a site, team or system by name
finds the rows that carry only its code. Registers write "KBW" where the onboarding note says
"Kellbrook Water Treatment Works (KBW)" once: the question "the duty kW at Kellbrook" is asked as
"the duty kW at Kellbrook (KBW)", for retrieval, the cell lookup, the premise check and the model
alike. The long form is found by Schwartz and Hearst's algorithm (PSB 2003): the code's letters
in order, from the right, in the words before the bracket, the first at a word's start; written
here because the method is a dozen lines and its libraries bring a parser model.

>>> abbreviations("We run Kellbrook Water Treatment Works (KBW) and Ashby Lane Works (ALW).")
{'KBW': 'Kellbrook Water Treatment Works', 'ALW': 'Ashby Lane Works'}
>>> abbreviations("the design working load (WL) was held")  # no proper name: a column's business
{}
>>> named_codes("What's the duty kW at Kellbrook?", {"KBW": "Kellbrook Water Treatment Works"})
"What's the duty kW at Kellbrook (KBW)?"
>>> named_codes("A burst main on Kellbrook Road", {"KBW": "Kellbrook Water Treatment Works"})
'A burst main on Kellbrook Road'
>>> named_codes("How many Ashby Lane staff are on call?", {"ALW": "Ashby Lane Works", "KR": "Kellbrook Road"})
'How many Ashby Lane (ALW) staff are on call?'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from rag.facts import Fact
from rag.labels import STOP, words
from rag.lexical import LexicalIndex
from rag.settings import Settings

_BRACKETED = re.compile(r"\(([A-Z][A-Z0-9&]{1,5})\)")
_LETTERS = r"[A-Z][A-Z&]{1,5}"  # a site's or team's code; "S012" is a person's id, no name's code
_CODE = re.compile(_LETTERS)
_WORD = re.compile(r"[^\W\d_][\w'’-]*")


def _long_form(code: str, before: str) -> str | None:
    """The shortest end of `before` whose characters hold the code's letters in order, the
    first at a word's start (Schwartz and Hearst's `findBestLongForm`); None when none does."""
    s, i = len(code) - 1, len(before) - 1
    while s >= 0:
        letter = code[s].lower()
        if not letter.isalnum():
            s -= 1
            continue
        while i >= 0 and (before[i].lower() != letter or (s == 0 and i > 0 and before[i - 1].isalnum())):
            i -= 1
        if i < 0:
            return None
        i, s = i - 1, s - 1
    return before[i + 1:].strip()


def abbreviations(text: str) -> dict[str, str]:
    """Code -> the proper name a text spells it out with ("Kellbrook Water Treatment Works
    (KBW)"), where it does so one way: the name starts with a capital, and is no longer than the
    code's letters and five words more."""
    found: dict[str, set[str]] = {}
    for match in _BRACKETED.finditer(text):
        code = match.group(1)
        line = text[: match.start()].rsplit("\n", 1)[-1]
        words = list(_WORD.finditer(line))[-min(len(code) + 5, 2 * len(code)):]
        if not words:
            continue
        name = _long_form(code, line[words[0].start():].rstrip())
        if name and name[0].isupper() and len(name) > len(code) and _WORD.fullmatch(name.split()[0]):
            found.setdefault(code, set()).add(" ".join(name.split()))
    return {code: next(iter(names)) for code, names in found.items() if len({n.lower() for n in names}) == 1}


def named_codes(question: str, codes: Mapping[str, str]) -> str:
    """The question with each name the corpus gives a code followed by that code in brackets: a
    name is named by its first word, capitalised as a name and not a stop word, and as many of
    its next words as follow it; two names met as far are a tie, and neither is added. A question
    typed all in lower case names a name by all its words, in any case.

    >>> named_codes("q3 defects - derby vs telford central?", {"DBY": "Derby", "TLF": "Telford Central"})
    'q3 defects - derby (DBY) vs telford central (TLF)?'
    >>> named_codes("what is the group target", {"GQ": "Group Quality"})
    'what is the group target'
    """
    lowered = not any(c.isupper() for c in question)  # the asker's case says nothing of names
    spans: dict[tuple[int, int], list[tuple[int, str, int]]] = {}
    for code, name in codes.items():
        words = name.split()
        first = words[0]
        if len(first) < 3 or first.lower() in STOP or re.search(rf"\b{re.escape(code)}\b", question, re.I):
            continue
        for match in re.finditer(rf"\b{re.escape(first)}\b", question, re.I if lowered else 0):
            end, n = match.end(), 1
            while n < len(words) and (more := re.match(rf"\s+{re.escape(words[n])}\b", question[end:], re.I)):
                end, n = end + more.end(), n + 1
            if lowered and n < len(words):
                continue
            if re.match(r"\s+[A-Z][a-z]", question[end:]):
                continue  # a longer name ("Kellbrook Road"): another thing named after it; not "Gimhae SCADA"
            end += len(re.match(r"(?:['’]s)?", question[end:]).group())
            spans.setdefault((match.start(), match.start() + len(first)), []).append((n, code, end))
    added: list[tuple[int, str]] = []
    for candidates in spans.values():
        most = max(n for n, _, _ in candidates)
        best = [(end, code) for n, code, end in candidates if n == most]
        if len(best) == 1:
            added.append(best[0])
    for end, code in sorted(added, reverse=True):
        question = f"{question[:end]} ({code}){question[end:]}"
    return question


_RESTATED = re.compile(rf"(?<=[a-z])\s*\(({_LETTERS})\)")


def unbracketed(text: str, source: str) -> str:
    """The text without each code in brackets after a name that `source` does not give: the code
    `named_codes` put beside the name in the question, which a model answering says back and a
    chunk giving the name need not hold.

    >>> unbracketed("Bristol Avonmouth (BRS) used 265,210 litres.", "Bristol Avonmouth Depot | 265210")
    'Bristol Avonmouth used 265,210 litres.'
    >>> unbracketed("Bristol Avonmouth (BRS) used 265,210 litres.", "BRS | 265210")
    'Bristol Avonmouth (BRS) used 265,210 litres.'
    """
    return _RESTATED.sub(lambda m: "" if m.group(1) not in source else m.group(), text)


GIVEN = re.compile(r"((?:[A-Z][\w'’-]*\s+){0,3}[A-Z][\w'’-]*?)(?:['’]s)?\s*\(([A-Z][A-Z0-9&]{1,5})\)")


def given_codes(question: str) -> dict[str, str]:
    """The words of the names a question gives with a code in brackets, as `named_codes` writes
    them: word -> code.

    >>> given_codes("the duty kW at Kellbrook's (KBW) pumps and Ashby Lane (ALW)")
    {'Kellbrook': 'KBW', 'Ashby': 'ALW', 'Lane': 'ALW'}
    """
    return {word: m.group(2) for m in GIVEN.finditer(question) for word in m.group(1).split()}


@dataclass
class CorpusCodes:
    """The corpus's codes, read from every indexed chunk once per index version; `expand` adds
    them to a question and spells them out in a cell's answer. Off (`retrieval.named_codes =
    false`), questions are asked as written."""

    index: LexicalIndex
    enabled: bool = True

    @classmethod
    def from_settings(cls, settings: Settings, index: LexicalIndex) -> CorpusCodes:
        return cls(index, settings.retrieval.named_codes)

    def expand(self, question: str) -> str:
        return named_codes(question, self.codes()) if self.enabled else question

    def spelled(self, text: str) -> str:
        """A text read from cells with each code it gives followed, once, by its name: "ALW has the
        lowest energy" says "ALW (Ashby Lane Water Treatment Works)"."""
        for code, name in self.codes().items():
            # not inside an id, not spelled out already (another bracket may follow: "TLF (Returns 2023)")
            alone = rf"(?<![\w-]){re.escape(code)}(?![\w-])(?!\s*\({re.escape(name)}\))"
            text = re.sub(alone, f"{code} ({name})", text, count=1)
        return text

    def codes(self) -> dict[str, str]:
        """Code -> name, as the corpus spells them out; {} when off."""
        return _codes(self.index, self.index.version()) if self.enabled and self.index.exists() else {}


def registered(facts: Iterable[Fact]) -> dict[str, str]:
    """Code -> name, from the tables whose rows a code labels and a name column names ("code |
    depot_name": LDS is "Leeds Depot"): a register spells its codes out as a table, not in brackets.

    >>> from dataclasses import replace
    >>> cell = Fact("r.csv", "c", "#/tables/0|code", "LDS", "depot_name", "Leeds Depot", None, "", None, None,
    ...             "")
    >>> registered([cell, replace(cell, column="region", value="Yorkshire")])
    {'LDS': 'Leeds Depot'}
    """
    return {f.row: " ".join(f.value.split()) for f in facts
            if _CODE.fullmatch(f.row) and "name" in words(f.column) and f.number is None
            and f.value[:1].isupper() and len(f.value.strip()) > len(f.row)}


@lru_cache(maxsize=4)
def _codes(index: LexicalIndex, version: int) -> dict[str, str]:
    """Every document's codes, in brackets or in a register, a code spelled out two ways across
    documents left out."""
    return _merged([*(abbreviations(text) for text in index.texts_with("(")),
                    registered(index.facts(list(index.hashes())))])


def _merged(found: Iterable[dict[str, str]]) -> dict[str, str]:
    names: dict[str, dict[str, str]] = {}
    for codes in found:
        for code, name in codes.items():
            names.setdefault(code, {}).setdefault(name.lower(), name)
    return {code: next(iter(spelled.values())) for code, spelled in names.items() if len(spelled) == 1}
