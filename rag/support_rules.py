"""The rules beside the learned support model (rag/support.py), for what it cannot read: a
segment a Markdown table's row states (`table_support`: the row it names most, every figure in
it, a figure of another column named by its column), and a cross-script segment whose codes,
commands and paths its chunk states (`code_support`); with `passages`, the sentences (and pairs of
adjacent ones) of a chunk that both the model and the rules read."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag.scoring import Pair
from rag.text import (HEADER, MARKER, NUMBER, across_scripts, hangul_script, markdown_tables, split_sentences,
                      trigrams)


def passages(chunk: str) -> list[str]:
    """The chunk's sentences and each two adjacent ones, without the header prefix that every
    chunk of a document shares."""
    body = HEADER.sub("", chunk, count=1)
    sentences = [s for s in split_sentences(body) if len(s) > 3] or [chunk]
    return sentences + [f"{a} {b}" for a, b in zip(sentences, sentences[1:])]


TABLE_SUPPORT = 0.9  # the score of a segment a table row states (table_support)
_NUMERIC_CELL = re.compile(r"[-+]?\d+(?:[.,]\d+)*\s*\S{0,3}")
_DATE_CELL = re.compile(r"\d{4}[-./]\d{1,2}[-./]\d{1,2}")


def _named(name: str, segment: str) -> bool:
    """The segment names this cell or column: each of its tokens with a digit as a word of the
    segment ("SL-13" needs "13": "SL-14" shares most of its trigrams), or most character
    trigrams of its longer words ("Peak force (kN)", "peak_decel_g", "WorldSID 50M")."""
    tokens = re.findall(r"[^\W_]+", name.lower())
    coded = [t for t in tokens if any(c.isdigit() for c in t)]
    if coded and set(coded) <= set(re.findall(r"[^\W_]+", segment.lower())):
        return True
    grams = trigrams(" ".join(t for t in tokens if t not in coded and len(t) >= 3))
    return bool(grams) and len(grams & trigrams(segment)) >= 0.6 * len(grams)


def table_support(segment: str, chunk: str) -> bool:
    """Whether one Markdown table row of the chunk states the segment (the learned model reads a
    table as one text): the row the segment names most by its text cells (a tie: none) holds each
    of its figures (less the header prefix's and the codes naming the row: "ES-2re" is not 2), one
    of them a value, and a figure from a numeric cell after the row's first is named by its column
    ("388" needs "passenger"). Same script only: across languages no cell is named."""
    if across_scripts(segment, chunk):
        return False
    header = HEADER.match(chunk)
    in_header = set(NUMBER.findall(header.group(0) if header else ""))
    for columns, rows in markdown_tables(chunk):
        values = [[i for i, cell in enumerate(row) if _NUMERIC_CELL.fullmatch(cell)] for row in rows]
        named = [sum(_named(cell, segment) for i, cell in enumerate(row) if cell and i not in nums)
                 for row, nums in zip(rows, values)]
        best = max(named, default=0)
        if not best or named.count(best) > 1:
            continue
        row, nums = rows[named.index(best)], values[named.index(best)]
        text = segment
        for i, cell in enumerate(row):
            if i not in nums and not _DATE_CELL.fullmatch(cell) and re.search(r"\d", cell):
                text = re.sub(re.escape(cell), " ", text, flags=re.I)  # a code naming the row
        figures = set(NUMBER.findall(text)) - in_header
        covered, valued = set(), False
        for i, cell in enumerate(row):
            found = figures & set(NUMBER.findall(cell))
            if found and i in nums[1:] and not (i < len(columns) and _named(columns[i], segment)):
                continue  # a figure of another column than the one the segment names
            covered |= found
            valued = valued or bool(found and (i in nums or _DATE_CELL.fullmatch(cell)))
        if covered == figures and (valued or (not figures and best >= 2)):
            return True
    return False


CLAIM_SUPPORT = 0.8  # a segment whose every figure the chunk states for its thing (claims_named)
CODE_SUPPORT = 0.8  # the score of a cross-script segment whose codes its chunk states (code_support)
_CODE = re.compile(r"`([^`\n]{2,80})`|([^\s`]+)")
_CODE_SIGN = re.compile(r"[A-Za-z].*[/.@_-]|[/.@_-].*[A-Za-z]")


def _flat(text: str) -> str:
    """Lower-cased, whitespace folded: a code is found across line breaks."""
    return " ".join(text.lower().split())


def codes(text: str) -> set[str]:
    """The text's codes: the words it writes in backticks, and Latin-script words with a path,
    dot, at, dash or underscore inside ("/etc/modules", "file-rc", "xyz@packages.debian.org"),
    not plain words ("squeeze", "Debian") that a sentence about anything may name."""
    found = set()
    for quoted, word in _CODE.findall(MARKER.sub("", text)):
        for token in quoted.split() if quoted else [word]:
            token = re.sub(r"[^\x21-\x7e]+.*$", "", token.strip("\"'“”‘’()[]<>,;:")).rstrip(".,;:")
            coded = quoted or _CODE_SIGN.search(token)
            if re.search(r"[A-Za-z0-9]{3,}", token) and re.search(r"[A-Za-z]", token) and coded:
                found.add(token.lower())
    return found


def code_support(segment: str, chunk: str, common: set[str] = frozenset()) -> bool:
    """Whether the chunk, in the other script, states every code of the segment but the `common`
    ones (they name the topic), and a passage holding one of them holds all its figures: across
    scripts the cosines miss a terse answer resting on a file, command or package name copied
    verbatim ("모듈은 `/etc/modules` 파일에 둡니다."). A syllable counts as three letters here, so a
    Korean sentence around a command ("패키지는 `reportbug`입니다.") is Korean."""
    if hangul_script(segment, 3) == hangul_script(chunk, 3):
        return False
    wanted = codes(segment) - common
    text = _flat(chunk)
    if not wanted or not all(code in text for code in wanted):
        return False
    figures = set(NUMBER.findall(MARKER.sub("", segment)))
    holding = [p for p in passages(chunk) if any(c in p.lower() for c in wanted)]
    return any(figures <= set(NUMBER.findall(p)) for p in holding)


def common_codes(pairs: Sequence[Pair]) -> dict[str, set[str]]:
    """Per segment, the codes that name the topic rather than an answer: those more than half
    of the chunks it is scored against hold (of three or more), or one of their header prefixes
    holds (a title such as "Getting support for Debian GNU/Linux")."""
    chunks: dict[str, list[str]] = {}
    for segment, chunk in pairs:
        chunks.setdefault(segment, []).append(chunk)
    common = {}
    for segment, texts in chunks.items():
        flat = [_flat(t) for t in texts]
        headers = " ".join(m.group(0).lower() for t in texts if (m := HEADER.match(t)))
        common[segment] = {code for code in codes(segment) if code in headers
                           or (len(flat) > 2 and 2 * sum(code in t for t in flat) > len(flat))}
    return common
