"""A PDF text layer's word spacing: how much of it an extraction keeps, and putting it back.

Both texts are reduced to their non-whitespace characters and aligned (an LCS alignment, so
text one side lacks, such as headings taken from the outline or Markdown marks, is skipped).
Each boundary between two characters that are adjacent in both texts is then compared: where
the text layer has whitespace, did the extraction keep some (`kept`), and where it has none,
did the extraction add some (`added`, e.g. a space inside a word)?

A line break in the text layer counts as whitespace like a space: the layer cannot tell a
break between words from one inside a word (ko.TeX breaks lines between any two Hangul
syllables), so whitespace there is all it says. `breaks` counts those boundaries apart, to see
how much of the score line breaks carry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"(\S+)(\s*)")


@dataclass
class Spacing:
    spaces: int = 0  # whitespace boundaries of the text layer between aligned characters
    kept: int = 0  # of those, whitespace in the extraction too
    breaks: int = 0  # of `spaces`, those that are line breaks
    added: int = 0  # whitespace in the extraction where the text layer has none

    @property
    def share(self) -> float:
        return self.kept / self.spaces if self.spaces else 1.0


def _gaps(text: str) -> tuple[str, list[str]]:
    """The non-whitespace characters, and the whitespace after each ("" inside a word)."""
    chars, gaps = [], []
    for match in _TOKEN.finditer(text):
        word, gap = match.groups()
        chars.append(word)
        gaps += [""] * (len(word) - 1) + [gap]
    return "".join(chars), gaps


def spacing(layer: str, text: str) -> Spacing:
    """Compare `text`'s whitespace with the text layer's `layer` at each aligned boundary."""
    from rapidfuzz.distance import Indel

    layer_chars, layer_gaps = _gaps(layer)
    chars, gaps = _gaps(text)
    result = Spacing()
    for op in Indel.opcodes(layer_chars, chars):
        if op.tag != "equal":
            continue
        for i in range(op.src_start, op.src_end - 1):  # boundaries inside the matched run
            gap, theirs = layer_gaps[i], gaps[op.dest_start + i - op.src_start]
            if gap:
                result.spaces += 1
                result.kept += bool(theirs)
                result.breaks += "\n" in gap
            elif theirs:
                result.added += 1
    return result


def respace(layer: str, lines: list[str]) -> list[str]:
    """The lines (a page's, in reading order) with the text layer's whitespace between any two
    characters that are adjacent in both, each line ending in the whitespace that separates it
    from the next (" ", or "" where the layer runs on: a word split over two lines). Elsewhere
    the lines keep their own spacing. Characters are never changed."""
    from rapidfuzz.distance import Indel

    layer_chars, layer_gaps = _gaps(layer)
    chars, gaps = _gaps("\n".join(lines) + "\n")
    for op in Indel.opcodes(layer_chars, chars):
        if op.tag == "equal":
            for k in range(op.dest_start, op.dest_end - 1):
                gaps[k] = layer_gaps[op.src_start + k - op.dest_start]
    respaced, start = [], 0
    for line in lines:
        end = start + sum(not c.isspace() for c in line)
        respaced.append("".join(c + " " * bool(g) for c, g in zip(chars[start:end], gaps[start:end])))
        start = end
    return respaced
