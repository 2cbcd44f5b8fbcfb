"""A near miss: a question about a kind of thing the documents do not cover ("a rental car" where
the travel policy speaks of a car only as your own), told from a paraphrase of one they do
(`other_kind`), and the word stems it and the premise check (rag/premise.py) compare by."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag.premise_words import STOP
from rag.text import HANGUL


def word_stem(word: str) -> str:
    """Where a word's inflections agree: a Korean word's first two syllables (its particle or
    ending follows), a Latin word's first five letters once a plural's ending is dropped."""
    if HANGUL.match(word):
        return word[:2]
    word = word.lower()
    if len(word) > 3:
        word = re.sub(r"ies$", "y", word) if word.endswith("ies") else re.sub(r"(?<!s)s$", "", word)
    return word[:5]


_PAIR = re.compile(r"\b([a-z]{3,})\s+([a-z]{3,})\b")
# Function words that name no thing ("how long after first contact", "how long must dummies",
# "what we charge per month").
_FUNCTION = frozenset("after before since until during must can could will would shall should may might "
                      "long often far soon ago how per for with from via over under within without "
                      "across through against towards upon among".split())
# Words that qualify no kind: superlatives, adverbs, participles, wh-words ("the largest",
# "still open", "signed off", "whoever leads").
_NO_KIND = re.compile(r"(?:est|ly|ed|ing)$|^(?:most|least|best|worst|top|more|less|many|much|next|last|"
                      r"first|still|just|also|even|never|ever|already|only|again|very|not|now|then)$|^wh")
# Words before a noun that qualify no kind of it: "the car", "your car" ("your own car" does).
_UNQUALIFIED = STOP | frozenset("the a an your our their his her its this that these those each every per "
                                "for with and or by from".split())
_LATIN = re.compile(r"[A-Za-z]+")
_PHRASE = re.compile(r"[|,;:.()\[\]\n\t/]+")  # where a phrase ends: no word qualifies the next one across
# A word after "to", a modal or a subject pronoun is a verb, no qualifier of the noun after it.
_VERB_BEFORE = re.compile(r"\b(?:to|can|could|must|will|would|shall|should|may|might|do|does|did|"
                          r"i|we|you|they)\s+$", re.IGNORECASE)


def _shortens(short: str, word: str) -> bool:
    """Whether a short word (up to four letters) is an abbreviation of a longer one: its first
    letter, then the rest in order ("ops": operations, "mgmt": management, "dept": department).

    >>> _shortens("ops", "operations"), _shortens("mgmt", "management"), _shortens("oil", "operations")
    (True, True, False)
    """
    if len(short) > 4 or len(word) < len(short) + 3 or word[0] != short[0]:
        return False
    rest = iter(word[1:])
    return all(letter in rest for letter in short[1:])


def other_kind(question: str, texts: Sequence[str]) -> str:
    """"rental car" when the evidence speaks of a car only as another kind ("your own car") and
    nowhere of rentals: the question asks about a kind of thing the documents do not cover (a
    near miss), not a paraphrase of one they do. Both words lower case (no name), neither a stop
    word nor an adverb, the qualifier's stem in no evidence text, the noun's always after
    another word that is no stop word. "" where none."""
    words = [w.lower() for text in texts for w in _LATIN.findall(text)]
    stems = {word_stem(w) for w in words}
    phrases = [_LATIN.findall(phrase) for phrase in _PHRASE.split("\n".join(texts))]
    for match in _PAIR.finditer(question):
        qualifier, noun = match.groups()
        if {qualifier, noun} & (STOP | _FUNCTION) or qualifier in _UNQUALIFIED or _NO_KIND.search(qualifier) \
                or word_stem(qualifier) in stems:  # "our pump" names no kind of pump
            continue
        if len(qualifier) >= 3 and any(w.startswith(qualifier) or _shortens(qualifier, w) for w in words):
            continue  # a word's short form: "inter-lab comparison" where the report has laboratory,
            # "the ops committee" where the minutes have the operations committee
        if _VERB_BEFORE.search(question, 0, match.start()):  # "have to redo fatigue training": a verb
            continue
        # the word before each of the noun's mentions in its phrase; none (a table's "Extension"
        # column, a list's first word) is no kind of it
        before = [tokens[i - 1].lower() if i else "" for tokens in phrases for i, word in enumerate(tokens)
                  if word_stem(word.lower()) == word_stem(noun)]
        if before and all(b and b not in _UNQUALIFIED for b in before):
            return match.group()
    return ""
