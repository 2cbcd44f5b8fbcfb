"""What a question asks for and through what, read without a model (rag/hop.py's first step):
the words naming the asked thing, whether a figure, and whether the question reaches it through
another thing it describes; for kinds of questions, English and Korean.

    >>> asked("In which office is the lead of project PRJ-2025-117 based?")
    Asked(words=('office',), figure=False, through=True, via=('lead',))
    >>> asked("Who logged the fingertip injury, and what's their job title?").through
    True
    >>> asked("What is the daily meal allowance?").through
    False
    >>> asked("When did the person leading the SCADA cutover join the company?")
    Asked(words=('when',), figure=False, through=True, via=())
    >>> asked("When's the SCADA cutover going to happen?").through
    False
    >>> asked("From what date does the current medical gas policy apply?").through
    False
    >>> asked("When did the portal move? ![me](http://127.0.0.1:8000/beacon.png?who=asker)").through
    False
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from rag.labels import STOP, is_code, words
from rag.text import hangul_script, unlinked

_WH = frozenset({"which", "what"})
_WH_IS = re.compile(r"\b(what|who|where|which|how)['’]s\b", re.IGNORECASE)
WHERE_ASKED = ("where",)  # the asked words of a "where" question: any column naming a place
WHEN_ASKED = ("when",)  # and of a "when" question: any column naming a date
_HOW = frozenset({"many", "much", "long", "old", "often", "far"})
# What follows the asked phrase when the question reaches the asked thing through another.
_THROUGH = frozenset({"is", "are", "was", "were", "does", "do", "did", "has", "have", "had", "of"})
_POSSESSIVE = frozenset({"our", "my", "your", "their", "his", "her", "its"})  # "of our contract manager"
_RELATIVE = frozenset({"that", "which", "who", "whose", "of"})  # "the service that went down"
# Words that describe the thing after an auxiliary by another: "the lead of", "the samples lost
# when the freezer failed", "the excavator in the April failure"
_LINKS = frozenset({"of", "in", "at", "for", "on", "with", "by", "from", "under", "when", "after", "before",
                    "during", "that", "which", "who", "whose", "whoever"})
_KO_BEFORE = frozenset({"어느", "어떤", "무슨"})
_KO_AFTER = ("몇", "얼마", "무엇", "어디", "누구")


@dataclass(frozen=True)
class Asked:
    """What a question asks for: the words naming it ("office", "years"), whether a figure, and
    whether the question reaches it through another thing it describes ("the lead of ...", "the
    partner who ...", "책임자의 ..."): only then can a second document hold it."""

    words: tuple[str, ...]
    figure: bool
    through: bool
    via: tuple[str, ...] = ()  # the other thing's words ("of our contract manager for ...": contract manager)


def asked(question: str) -> Asked:
    """English: the noun phrase after the first wh-word, its last two words ("In which office",
    "how many years of experience", "what is the daily meal allowance"), reached through the
    phrase after an auxiliary or "of" ("... is the lead of", "... does the partner who"); after
    "who" and a verb, the verb's doer ("who owns the service that ...": owner; "leads": leader).
    Korean: the word after 어느/어떤/무슨 or before 몇/얼마/무엇/어디/누구, reached through a
    possessive (책임자의)."""
    question = unlinked(question)  # a pasted link's address asks nothing ("?who=asker")
    found = words(_WH_IS.sub(r"\1 is", question))  # "what's the job title"; "Kraków's" stays a possessive
    figure = "how" in found or any(w.startswith(("몇", "얼마")) for w in found)
    if hangul_script(question):
        head = [found[i + 1] for i, w in enumerate(found[:-1]) if w in _KO_BEFORE]
        head += [found[i - 1] for i, w in enumerate(found) if i and w.startswith(_KO_AFTER)]
        head = [w for w in head if not is_code(w)][:1]
        through = bool(head) and any(w.endswith("의") and len(w) > 2 and w not in head for w in found)
        return Asked(tuple(head), figure, through)
    for i, word in enumerate(found):
        # "where" asks a place, reached through what the question describes ("the person leading")
        if word == "where":
            rest = found[i + 2:]  # past its auxiliary ("where is")
            through = any(w in _THROUGH | {"who", "whoever"} or (len(w) > 4 and w.endswith("ing"))
                          for w in rest)
            return Asked(WHERE_ASKED, False, through)
        if word == "when":  # a date reached through a thing the question describes by what it does:
            # "when did the person leading the cutover join" (not "when's the cutover going to happen")
            rest = found[i + 2:]
            through = _doing(rest) or any(w in ("who", "whoever", "whose") for w in rest)
            return Asked(WHEN_ASKED, False, through)
        if word == "who" and i + 1 < len(found) and re.fullmatch(r"[a-z]{2,}[^s]s", found[i + 1]) \
                and found[i + 1] not in _THROUGH:
            # "who owns the service that went down": its owner, reached through what it describes
            verb, rest = found[i + 1][:-1], found[i + 2:]
            return Asked((verb + ("r" if verb.endswith("e") else "er"),), False,
                         any(w in _RELATIVE for w in rest))
        if word in _WH or (word == "how" and i + 1 < len(found) and found[i + 1] in _HOW):
            rest = list(found[i + 1 + (word == "how"):])
            while rest and rest[0] in STOP and word != "how":  # "what is the fee", not "how much does"
                rest.pop(0)
            phrase = []
            while rest and rest[0] not in STOP:
                phrase.append(rest.pop(0))
            head = [w for w in phrase if not is_code(w) and len(w) > 1][-2:]
            # "is the lead of", "does the partner who", "were lost when": an auxiliary then a thing
            # described by another (not the asker, "what bleep do I use", nor a thing named alone,
            # "what date does the current policy apply")
            through = bool(head) and bool(rest) and rest[0] in _THROUGH and (rest[0] == "of" or (
                rest[1:2] not in (["i"], ["we"], ["you"]) and (_doing(rest[1:]) or any(
                    w in _LINKS for w in rest[1:-1]))))
            # "who logged the injury, and what's their job title": the thing an earlier clause names
            through = through or (bool(head) and i > 0 and phrase[0] in _POSSESSIVE - {"our", "my", "your"})
            while through and rest and (rest[0] in STOP or rest[0] in _POSSESSIVE):
                rest.pop(0)
            via = tuple(itertools.takewhile(lambda w: w not in STOP, rest)) if through else ()
            return Asked(tuple(head), figure, through, via)
    return Asked((), figure, False)


def _doing(rest: list[str]) -> bool:
    """Whether the words describe a thing by what it does: "the person leading"."""
    return any(j >= 2 and len(w) > 4 and w.endswith("ing") and rest[j - 2] == "the"
               and rest[j - 1] not in STOP for j, w in enumerate(rest))
