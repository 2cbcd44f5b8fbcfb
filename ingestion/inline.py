"""One paragraph's inline runs -> one line of text.

Docling's Markdown, HTML and DOCX readers make each run of a paragraph that has its own
formatting (bold, a link, inline code) a text item of an inline group, with the whitespace
around it stripped: "See **the manual** or [the guide](url)" arrives as "See", "the manual",
"or", "the guide". Joined with a space everywhere, Korean would break: a particle after a bold
word ("**굵게**는") belongs to the word. So the runs are found in the file's own text, in order,
and joined with a space only where the text has whitespace between them (markup aside: tags,
a link's target); a run not found there (an HTML entity, a Markdown escape) is joined by
punctuation alone. The link text is kept, the URL dropped.
"""

from __future__ import annotations

import re

NEAR = 4096  # characters: the next run of a paragraph is this close (a long URL between them at most)
# Searches through the rest of the text for a paragraph's start, at most, when it is not near.
FAR_SEARCHES = 32
_MARKUP = re.compile(r"<[^>]*>|\]\([^)]*\)")  # tags; a Markdown link's "](target)"
_NO_SPACE_BEFORE = tuple(",.;:!?)]}%”’»")
_NO_SPACE_AFTER = tuple("([{“‘«")


class InlineJoiner:
    """Joins the runs of each paragraph of one document, in reading order; `source` is the
    document's text as written (Markdown, HTML, the DOCX's runs), "" when there is none."""

    def __init__(self, source: str = "") -> None:
        self.source = " ".join(source.split())  # Docling collapses whitespace likewise
        self.cursor = 0  # where the text after the last run found starts
        self.far = FAR_SEARCHES

    def advance(self, text: str) -> None:
        """A paragraph that is no inline group: found near, the next search starts after it."""
        self._find(" ".join(text.split()), first=False)

    def join(self, runs: list[str]) -> str:
        line, end = "", None  # end: where the last run ends in the source, None when not found
        for position, run in enumerate(" ".join(r.split()) for r in runs):
            if not run:
                continue
            start = self._find(run, first=position == 0)
            if line:
                if start is not None and end is not None:
                    spaced = " " in _MARKUP.sub("", self.source[end:start])
                else:
                    spaced = not (run.startswith(_NO_SPACE_BEFORE) or line.endswith(_NO_SPACE_AFTER))
                line += " " + run if spaced else run
            else:
                line = run
            end = None if start is None else start + len(run)
        return line

    def _find(self, run: str, first: bool) -> int | None:
        """Where `run` starts in the source after the cursor: near it, or for a paragraph's first
        run anywhere after it (a long table may lie between), a bounded number of times, so a
        text whose runs are not in the source stays linear."""
        if not self.source or not run:
            return None
        start = self.source.find(run, self.cursor, self.cursor + NEAR + len(run))
        if start < 0 and first and self.far > 0:
            start = self.source.find(run, self.cursor)
            self.far -= start < 0
        if start < 0:
            return None
        self.cursor = start + len(run)
        return start
