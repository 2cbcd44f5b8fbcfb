"""The evidence behind one reference, shown so a reader can check it at a glance: the chunk's
text with the words it shares with the answer's segment marked, its place (document, page,
slide, section), and for a PDF the page itself, rendered, with the chunk's lines boxed.

Files are read only through the ingestion registry: a document id that is not indexed, or whose
file is gone, shows the chunk text alone. Everything from a document is escaped before it is
put into HTML.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from app.render import location
from rag.settings import Settings
from rag.store import Store

_WORD = re.compile(r"[\w][\w.\-/]*\w|\w", re.UNICODE)
_STOP = set("the a an of in on at to for by with and or is are was were be it its this that as from "
            "which who what when where how did does do not no".split())
_SENTENCE = re.compile(r"(?<=[.!?。])\s+|\n+")
_RENDER_SCALE = 1.5  # 108 dpi: a page legible beside the chat


@dataclass
class Evidence:
    html: str  # the place and the chunk's text, escaped, shared words in <mark>
    image: Image.Image | None  # the PDF page with the chunk's lines boxed, when there is one
    page: int | None = None  # which page the image shows


def _key(word: str) -> str:
    return word.lower().strip(".-/")


def highlight(chunk: str, segment: str) -> str:
    """The chunk's text as HTML, each word the segment also uses in <mark> (small words aside;
    figures and codes always count)."""
    wanted = _words(segment)
    parts, last = [], 0
    for match in _WORD.finditer(chunk):
        parts.append(html.escape(chunk[last:match.start()]))
        word = html.escape(match.group())
        parts.append(f"<mark>{word}</mark>" if _key(match.group()) in wanted else word)
        last = match.end()
    parts.append(html.escape(chunk[last:]))
    return "".join(parts)


def source_file(settings: Settings, doc: str) -> Path | None:
    """The file a document was indexed from, when it still exists; never a path from the user."""
    recorded = Store(settings).registry().files.get(doc)
    path = Path(recorded) if recorded else None
    return path if path is not None and path.is_file() else None


def supporting_sentences(chunk: str, segment: str) -> list[str]:
    """The chunk's sentences that share the most words with the segment (none when no word is
    shared: a reference across languages)."""
    wanted = _words(segment)
    scored = [(len(_words(s) & wanted), s) for s in _SENTENCE.split(chunk) if s.strip()]
    best = max((score for score, _ in scored), default=0)
    return [s for score, s in scored if best and score == best]


def _words(text: str) -> set[str]:
    return {_key(w) for w in _WORD.findall(text) if (len(w) > 2 or w.isdigit()) and _key(w) not in _STOP}


def page_image(path: Path, pages: range, chunk: str, segment: str) -> tuple[Image.Image | None, int | None]:
    """The page of the PDF among `pages` (1-based) that holds the sentences backing the segment
    (else the first), rendered: the chunk's lines boxed in grey, those sentences in orange.
    (None, None) when the file cannot be read or has none of these pages."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError:
        return None, None
    try:
        pages = [p for p in pages if 1 <= p <= len(pdf)]
        if not pages:
            return None, None
        backing = supporting_sentences(chunk, segment)
        page, textpage, backed = pages[0], None, []
        for candidate in pages:  # the first page of the span that holds them
            text_layer = pdf[candidate - 1].get_textpage()
            if boxes := _line_boxes(text_layer, backing):
                page, textpage, backed = candidate, text_layer, boxes
                break
        sheet = pdf[page - 1]
        textpage = textpage or sheet.get_textpage()
        image = sheet.render(scale=_RENDER_SCALE).to_pil().convert("RGB")
        height = sheet.get_height()
        draw = ImageDraw.Draw(image)
        for boxes, colour, width in ((_line_boxes(textpage, _SENTENCE.split(chunk)), (150, 150, 150), 1),
                                     (backed, (220, 120, 0), 3)):
            for left, bottom, right, top in boxes:
                draw.rectangle([left * _RENDER_SCALE - 2, (height - top) * _RENDER_SCALE - 2,
                                right * _RENDER_SCALE + 2, (height - bottom) * _RENDER_SCALE + 2],
                               outline=colour, width=width)
        return image, page
    finally:
        pdf.close()


def _line_boxes(textpage, sentences: list[str]) -> list[tuple[float, float, float, float]]:
    """Boxes (PDF units) around each line of the page that holds one of the sentences. A
    sentence is looked up by its first and its last 60 characters, and boxed from the one to
    the other: the page's text layer may break lines and space words differently from the
    chunk, so a whole long sentence is rarely found as it is."""
    boxes = []
    for sentence in sentences:
        words = " ".join(sentence.replace("|", " ").lstrip("#- ").split())
        head, tail = words[:60].strip(), words[-60:].strip()
        if len(head) < 8:
            continue
        found = textpage.search(head, match_case=False).get_next()
        if found is None:
            continue
        start, count = found
        end = textpage.search(tail, index=start, match_case=False).get_next()
        if end is not None:
            count = max(count, end[0] + end[1] - start)
        # pdfium's text rectangles span a run of text in one font at its full height: a
        # descender or a hyphen does not cut them, as boxes of single characters were cut.
        boxes += _lines([textpage.get_rect(i) for i in range(textpage.count_rects(start, count))])
    return boxes


def _lines(runs: list[tuple[float, float, float, float]]) -> list[tuple[float, float, float, float]]:
    """One box per line from the runs of text on it (a bold word is a run of its own): a run
    joins the line before when they share most of their height."""
    lines: list[tuple[float, float, float, float]] = []
    for left, bottom, right, top in runs:
        if right <= left:
            continue
        if lines:
            last = lines[-1]
            shared = min(top, last[3]) - max(bottom, last[1])
            if shared > 0.5 * min(top - bottom, last[3] - last[1]):
                lines[-1] = (min(left, last[0]), min(bottom, last[1]), max(right, last[2]), max(top, last[3]))
                continue
        lines.append((left, bottom, right, top))
    return lines


def slide_text(settings: Settings, doc: str, slide: int) -> str:
    """All of a slide's text as indexed (a long slide is several chunks)."""
    from llama_index.core.schema import MetadataMode

    from rag.store import collection, stored_nodes

    nodes = sorted(stored_nodes(collection(settings), where={"$and": [{"doc": doc}, {"slide": slide}]}),
                   key=lambda n: (len(n.node_id), n.node_id))  # "...-2" before "...-10"
    return "\n\n".join(n.get_content(metadata_mode=MetadataMode.NONE) for n in nodes)


def evidence(settings: Settings, source: dict[str, Any], segment: str) -> Evidence:
    """The view of one source entry of an Answer, for one segment it backs."""
    heading = f"<p class='evidence-place'><b>[{source['ref']}] {html.escape(location(source))}</b></p>"
    body = f"<div class='evidence-text'>{highlight(source['text'], segment)}</div>"
    image, page, extra = None, None, ""
    path = source_file(settings, source["doc"]) if source.get("doc") else None
    if path is not None and path.suffix.lower() == ".pdf" and source.get("page"):
        first = int(source["page"])
        pages = range(first, int(source.get("page_end") or first) + 1)
        image, page = page_image(path, pages, source["text"], segment)
        if page is not None:
            heading += (f"<p>Page {page} of {html.escape(source['doc'])}: the chunk's lines boxed in grey, "
                        "the sentences backing the segment in orange.</p>")
    elif source.get("slide") is not None:
        whole = slide_text(settings, source["doc"], int(source["slide"]))
        if whole and whole.strip() != source["text"].strip():
            extra = (f"<details><summary>The whole slide {int(source['slide'])}</summary>"
                     f"<div class='evidence-text'>{html.escape(whole)}</div></details>")
    return Evidence(heading + body + extra, image, page)
