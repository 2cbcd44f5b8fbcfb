"""Text helpers shared by retrieval, the context, the reference matcher and OCR: scripts,
trigrams, numbers, citation markers, sentences and Markdown tables."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# ------------------------------------------------------------------------------ scripts

HANGUL = re.compile(r"[\uac00-\ud7a3]")  # a Hangul syllable
_LATIN = re.compile(r"[A-Za-z]")


def hangul_script(text: str, letters_per_syllable: int = 1) -> bool:
    """Written mostly in Hangul (Korean) rather than Latin letters, a syllable counted as
    `letters_per_syllable` letters (1: as the support model was fitted; a syllable holds about
    three letters' worth)."""
    return letters_per_syllable * len(HANGUL.findall(text)) > len(_LATIN.findall(text))


def across_scripts(segment: str, chunk: str) -> bool:
    """Whether the segment may be a translation of the chunk's text: it is in the other script,
    or it is in Latin letters and the chunk is partly in Hangul (its letters may outnumber its
    syllables while much of it is Korean). Korean text routinely carries Latin names and
    commands, so a Korean segment is across only from a chunk mostly in Latin letters; a
    segment's syllable counts as three letters ("Karrow Insurance의 선두 재보험사는 Rheinwall
    Re입니다" is Korean)."""
    hangul, latin = len(HANGUL.findall(chunk)), len(_LATIN.findall(chunk))
    return hangul <= latin if hangul_script(segment, 3) else 3 * hangul >= latin


# ------------------------------------------------------------------------------ words and numbers

NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
YEAR = re.compile(r"(?:19|20)\d\d")  # a year as written, matched whole (`fullmatch`)
MARKER = re.compile(r"\s*\[\d+(?:\s*[,;-]\s*\d+)*\]")  # a citation marker: "[2]", "[1, 3]"


_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|https?://\S+")


def unlinked(text: str) -> str:
    """The text with each pasted link's address dropped and its label kept: an address's host,
    port and query ("?who=asker") are no words or figures of a question."""
    return _LINK.sub(r" \1 ", text)


def trigrams(text: str) -> set[str]:
    """Character 3-grams of the lower-cased words: language-agnostic (Korean particles and
    English inflections change a word's end, not most of its trigrams)."""
    words = " ".join(re.findall(r"\w+", text.lower()))
    return {words[i : i + 3] for i in range(len(words) - 2)}


_WORD = re.compile(r"\w+")


def restated(sentence: str, question: str, least: int = 3) -> str:
    """`sentence` without the runs of `least` or more words it copies, in order, from `question`:
    the asker's words said back, not a claim of the answer's own.

    >>> restated("The number of wrong password tries before a lock-out is five.",
    ...          "How many wrong password tries before a lock-out?")
    'The number of is five.'
    >>> restated("It is five.", "How many tries?")
    'It is five.'
    """
    asked = [w.lower() for w in _WORD.findall(question)]
    runs = {tuple(asked[i : i + least]) for i in range(len(asked) - least + 1)}
    words = list(_WORD.finditer(sentence))
    echoed = [False] * len(words)
    for i in range(len(words) - least + 1):
        if tuple(w.group().lower() for w in words[i : i + least]) in runs:
            echoed[i : i + least] = [True] * least
    if not any(echoed):
        return sentence
    kept, cursor = [], 0
    for i, (word, echo) in enumerate(zip(words, echoed)):
        if echo:  # what lies between two echoed words goes with them ("lock-out")
            kept.append("" if i and echoed[i - 1] else sentence[cursor : word.start()])
            cursor = word.end()
    joined = "".join(kept) + sentence[cursor:]
    return re.sub(r"\s+(?=[.,;:!?])", "", re.sub(r"\s{2,}", " ", joined)).strip()


def normalised(text: str) -> str:
    """Lower-cased words separated by single spaces, punctuation dropped: for comparing wordings."""
    return re.sub(r"\W+", " ", text).strip().lower()


# ------------------------------------------------------------------------------ sentences

_ABBREVIATIONS = {
    "e.g", "i.e", "etc", "vs", "cf", "al", "approx", "fig", "figs", "no", "nos", "vol", "pp",
    "p", "dr", "mr", "mrs", "ms", "prof", "st", "jr", "sr", "inc", "ltd", "co", "corp", "dept",
    "est", "min", "max", "ca", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept",
    "oct", "nov", "dec", "eq", "sec", "ch", "ref", "resp", "u.s", "u.k", "a.m", "p.m",
}
# A sentence end: terminal punctuation, closing quotes/brackets, then any citation markers.
_END = re.compile(r"[.!?。！？]+[\"'”’)\]]*(?:\s*\[\d+(?:\s*[,;-]\s*\d+)*\])*(?=\s|$)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•·]|\d+[.)]|[a-zA-Z][.)])\s+")
_WORD_BEFORE = re.compile(r"(?:^|\s)([\w.]+)$")


def split_sentences(text: str) -> list[str]:
    """Split English or Korean text into sentences.

    Keeps citation markers like `[2]` with the sentence they close, does not split after
    abbreviations, initials or inside decimals, and treats list items and lines as boundaries.
    """
    sentences: list[str] = []
    for line in re.split(r"\n\s*\n|\n(?=\s*(?:[-*•·]|\d+[.)])\s)", text):
        for part in line.split("\n") if _LIST_ITEM.match(line) else [line.replace("\n", " ")]:
            sentences.extend(_split_line(part))
    return [s for s in sentences if s]


def line_sentences(text: str) -> list[str]:
    """The sentences of each line: a table row or a field is one, never joined to the next line."""
    return [sentence for line in text.splitlines() for sentence in split_sentences(line)]


def _split_line(line: str) -> list[str]:
    line = re.sub(r"\s+", " ", line).strip()
    out, start = [], 0
    for match in _END.finditer(line):
        end = match.end()
        if end >= len(line):
            break
        if match.group().startswith(".") and not match.group().startswith(".."):
            word = _WORD_BEFORE.search(line[start : match.start()])
            token = word.group(1) if word else ""
            if token.lower() in _ABBREVIATIONS or (len(token) == 1 and token.isupper()):
                continue
        following = line[end:].lstrip()
        if following[:1].islower():  # "e.g. the", "3 p.m. and": not a new sentence
            continue
        out.append(line[start:end].strip())
        start = end
    out.append(line[start:].strip())
    return out


# ------------------------------------------------------------------------------ Markdown tables

HEADER = re.compile(r"\A(?:[^\n:]{1,40}: [^\n]*\n)+\n")  # LlamaIndex's "Key: value" metadata block
TABLE_RULE = re.compile(r"^\|?\s*:?-{2,}")  # the line under a Markdown table's header


def cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def table_rows(block: str) -> tuple[list[str], list[str]] | None:
    """(header line, row lines) of a Markdown table block; None for any other block."""
    lines = [line.strip() for line in block.splitlines() if line.strip()]
    if len(lines) >= 2 and lines[0].startswith("|") and TABLE_RULE.match(lines[1]):
        return lines[:2], lines[2:]
    return None


@lru_cache(maxsize=1024)
def markdown_tables(text: str) -> tuple[tuple[list[str], list[list[str]]], ...]:
    """(column names, rows of cells) of every Markdown table in a text; cached, as the matcher
    meets each chunk once per run of sentences (read-only: do not change what it returns)."""
    found = []
    for block in re.split(r"\n\s*\n", text):
        if parsed := table_rows(block):
            (header, _rule), rows = parsed
            found.append((cells(header), [cells(row) for row in rows]))
    return tuple(found)


# Latin letters that no decomposition takes to ASCII.
_LETTERS = str.maketrans({"ł": "l", "Ł": "L", "ø": "o", "Ø": "O", "đ": "d", "Đ": "D", "ß": "ss", "æ": "ae",
                          "Æ": "AE", "œ": "oe", "ı": "i"})


def folded(text: str) -> str:
    """Latin letters without their accents ("Gdańsk" is "Gdansk", as a key path spells it:
    "gdansk_pallets_out"); Hangul as written.

    >>> folded("Gdańsk, Łódź, Malmö, 서울")
    'Gdansk, Lodz, Malmo, 서울'
    """
    if text.isascii():
        return text
    return "".join(ch if ch.isascii() or "\uac00" <= ch <= "\ud7a3" else
                   "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
                   for ch in text.translate(_LETTERS))
