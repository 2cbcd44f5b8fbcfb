"""Text rendering of an Answer object, shared by the CLI and the UI."""

from __future__ import annotations

import re
import string
from typing import Any

_PUNCTUATION = re.compile("([" + re.escape(string.punctuation) + "])")
_ESCAPED = re.compile(r"\\([" + re.escape(string.punctuation) + "])")


def escape(text: str, markdown: bool) -> str:
    """Document text, file names and model output are shown as text. In Markdown every ASCII
    punctuation character is backslash-escaped (CommonMark lets any be): a document's
    `![logo](http://host/beacon.png)` would otherwise make every viewer's browser fetch that URL,
    `[portal](http://x/login)` or a bare URL would become a link, and `<img onerror=...>` an
    element. Not for inside a code span, where a backslash shows."""
    return _PUNCTUATION.sub(r"\\\1", text) if markdown else text


def unescape(text: str) -> str:
    """The text `escape(text, True)` was made from."""
    return _ESCAPED.sub(r"\1", text)


def location(item: dict[str, Any]) -> str:
    """'report.pptx, slide 3, Results' (', OCR text' when read from a picture) from a source or
    reference entry."""
    parts = [str(item.get("doc") or "?")]
    if item.get("page") is not None:
        end = item.get("page_end")
        parts.append(f"pp. {item['page']}-{end}" if end not in (None, item["page"]) else f"p. {item['page']}")
    if item.get("slide") is not None:
        parts.append(f"slide {item['slide']}")
    if item.get("section"):
        parts.append(str(item["section"]))
    if item.get("ocr"):
        parts.append("OCR text")  # read from a scan or a picture: the reader knows it may hold misreadings
    return ", ".join(parts)


# Which gate refused (Answer.refused_by), as a reader is told.
REFUSED_BECAUSE = {
    "retrieval": "nothing relevant to the question was found in the documents.",
    "premise": "the question assumes what the documents contradict or do not mention.",
    "model": "the passages found do not state the answer, the model said.",
    "references": "no sentence the model wrote is backed by a source; its draft is shown below, marked.",
}


def render_segments(answer: dict[str, Any], markdown: bool = False) -> str:
    """The answer, segment by segment, each followed by its references or an unsupported mark;
    a chat's follow-up first says how it was understood."""
    lines = []
    if answer.get("standalone_question"):
        asked = escape(answer["standalone_question"], markdown)
        lines.append(f"*Understood as: {asked}*" if markdown else f"(understood as: {asked})")
    if answer.get("widened"):
        steps = len(answer["widened"])
        said = f"looked further in the documents ({steps} step{'s' if steps > 1 else ''})"
        lines.append(f"*{said.capitalize()}*" if markdown else f"({said})")
    if answer["answerable"] and answer.get("mode") == "composed":
        said = "quoted from the documents: the passages the model chose"
        lines.append(f"*{said.capitalize()}*" if markdown else f"({said})")
    if not answer["answerable"]:
        lines.append(escape(answer["answer"], markdown))
        reason = REFUSED_BECAUSE.get(answer.get("refused_by") or "")
        if reason:
            lines.append(f"*Refused: {reason}*" if markdown else f"(refused: {reason})")
    for segment in answer["segments"]:
        if segment["supported"]:
            refs = ", ".join(f"[{r['ref']}] {r['score']:.2f}" for r in segment["references"])
            tag = f"(refs: {refs})"
        else:
            tag = "(unsupported: no source backs this)"
        lines.append(f"{escape(segment['text'], True)} *{tag}*" if markdown else f"{segment['text']}  {tag}")
    lines += [f"**{escape(line, True)}**" if markdown else line for line in disagreements(answer)]
    return "\n\n".join(lines) if markdown else "\n".join(lines)


def disagreements(answer: dict[str, Any]) -> list[str]:
    """One line per conflict (Answer.conflicts): "Sources disagree on rate: [1] gives 14%
    (a.md), [2] gives 12% (b.md)", and "; [2] is current" where currency says so."""
    lines = []
    for conflict in answer.get("conflicts") or []:
        what = f" on {conflict['what']}" if conflict.get("what") else ""
        values = ", ".join(f"[{v['ref']}] gives {v['value']} ({v.get('doc') or '?'})"
                           for v in conflict["values"])
        current = f"; [{conflict['current']}] is current" if conflict.get("current") else ""
        lines.append(f"Sources disagree{what}: {values}{current}")
    return lines


def render_sources(answer: dict[str, Any], markdown: bool = False) -> str:
    """The numbered chunks the answer was written from, with their locations, best ranked first.
    Their number is their rank; the ranker's score is not shown: it is the probability that a
    chunk is the one that answers, near 0 for all but the best, which a reader took for "does not
    back the answer" beside a reference's support score."""
    if not answer["sources"]:
        return ""
    lines = ["**Sources** (best ranked first)" if markdown else "Sources (best ranked first):"]
    for source in answer["sources"]:
        snippet = " ".join(source["text"].split())[:200]
        lines.append(
            f"{'- ' if markdown else '  '}[{source['ref']}] {escape(location(source), markdown)}: "
            f"{escape(snippet, markdown)}"
        )
    return "\n".join(lines)


def render_answer(answer: dict[str, Any], markdown: bool = False) -> str:
    return "\n\n".join(p for p in (render_segments(answer, markdown), render_sources(answer, markdown)) if p)
