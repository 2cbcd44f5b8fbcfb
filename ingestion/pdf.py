"""PDFs -> blocks. Each page's text layer is read with pypdfium2; a page without one (a scan) is
OCRed (`ingestion/ocr.py`, `ingest.ocr`) in every strategy, its paragraphs keeping their page
anchor and marked as OCR. Docling's layout models cannot be downloaded here, so the structured
strategies use its model-free native pipeline (text lines with page provenance), and paragraphs
and headings (from the PDF outline, or by type size) are rebuilt here; with
`ingest.docling_artifacts_path` set, Docling's standard layout pipeline runs instead.

`ingest.pdf_strategy` (the PDF-extraction study: plain text maximises evidence recall,
structure plus page anchors maximise traceability):

- `text`: the text layer of each page, no structure;
- `layout`: native text lines grouped into paragraphs per page, in reading order;
- `markdown`: Docling structure (outline headings, paragraphs, tables), no page anchors;
- `anchored`: Docling structure with page anchors (the default).

In both structured strategies without the layout model, tables are found from the words' places
(`ingestion/pdf_tables.py`) and replace the lines they were read as.
"""

from __future__ import annotations

import logging
import os
import re
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

from ingestion.docling_reader import docling_blocks, run_docling
from ingestion.document import Block, ConvertedDocument, DocumentLoadError
from ingestion.ocr import OcrUnavailable, check_languages, read_image, render_page
from ingestion.pdf_tables import PdfTable, pdf_tables
from ingestion.plain import paragraphs
from ingestion.tables import markdown_table
from ingestion.spacing import respace
from rag.settings import IngestSettings
from rag.text import normalised

logger = logging.getLogger(__name__)


def read(path: Path, doc_id: str, fmt: str, cfg: IngestSettings) -> ConvertedDocument:
    layer = pdf_text_layer(path)
    pages = layer.pages
    scanned = _pages_to_ocr(layer, cfg)
    structured = cfg.pdf_strategy in ("anchored", "markdown")
    outline = _pdf_outline(path) if structured else []
    # Scanned pages get the same paragraphs and headings (by type size) as text lines do.
    scans = line_blocks(_ocr_lines(path, scanned, cfg), outline, structured, ocr=True)
    if cfg.pdf_strategy == "text" or len(scanned) == len(pages):
        kept = (n for n in range(1, len(pages) + 1) if n not in scanned)
        blocks = [Block(p, page=n) for n in kept for p in paragraphs(pages[n - 1])]
    else:
        blocks = _docling_pdf(path, pages, outline, cfg)
    blocks = _with_scans(blocks, scans)
    if not blocks:
        raise DocumentLoadError(
            f"no text on any of its {len(pages)} pages: no text layer, and OCR found none"
        )
    if cfg.pdf_strategy == "markdown":
        for block in blocks:
            block.page = None
    return ConvertedDocument(doc_id, "pdf", blocks, layer.fields)


def _docling_pdf(path: Path, pages: list[str], outline: list[Heading], cfg: IngestSettings) -> list[Block]:
    """Blocks of the text-layer pages by Docling: its layout pipeline's structure, or the
    model-free native pipeline's lines, respaced from the text layer and made paragraphs."""
    document = run_docling(path, "pdf", cfg.docling_artifacts_path or None)
    if cfg.docling_artifacts_path:  # the layout model gave real structure
        return docling_blocks(document, "pdf")
    structured = cfg.pdf_strategy != "layout"
    return _native_paragraphs(document, pages, outline, structured, pdf_tables(path) if structured else [])


@dataclass
class PdfTextLayer:
    pages: list[str]  # each page's text layer
    fields: dict[str, str]  # the document's metadata: Title, Author, Subject
    scans: list[int]  # numbers of the pages with no text but a picture (a blank page is neither)


def pdf_text_layer(path: Path) -> PdfTextLayer:
    """Each page's text, the metadata and the scanned pages; refuses encrypted and corrupt PDFs
    with the reason."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as error:
        message = str(error)
        if "password" in message.lower():
            raise DocumentLoadError("encrypted PDF: a password is needed to read it") from error
        raise DocumentLoadError(f"corrupt or unreadable PDF ({message})") from error
    try:
        metadata = pdf.get_metadata_dict(skip_empty=True)
        fields = {k: v for k, v in metadata.items() if k in ("Title", "Author", "Subject")}
        pages, scans = [], []
        for number, page in enumerate(pdf, 1):
            textpage = page.get_textpage()
            pages.append(textpage.get_text_range().replace("\r\n", "\n").replace("\r", "\n"))
            picture = next(page.get_objects([pdfium_c.FPDF_PAGEOBJ_IMAGE]), None)
            if not pages[-1].strip() and picture is not None:
                scans.append(number)
            textpage.close()
            page.close()
    finally:
        pdf.close()
    return PdfTextLayer(pages, fields, scans)


def _pages_to_ocr(layer: PdfTextLayer, cfg: IngestSettings) -> list[int]:
    """The page numbers to OCR: the scanned ones ("auto"), all ("force") or none."""
    if cfg.ocr == "force":
        return list(range(1, len(layer.pages) + 1))
    if cfg.ocr == "off":
        if not any(text.strip() for text in layer.pages):
            raise DocumentLoadError(
                f"no text layer on any of its {len(layer.pages)} pages (a scan?) and OCR is off (ingest.ocr)"
            )
        return []
    if layer.scans and any(text.strip() for text in layer.pages):
        try:
            check_languages(cfg.ocr_languages)
        except OcrUnavailable as error:  # a scanned page in a text PDF: index the text, say what was left out
            logger.warning("%d scanned pages left out: %s", len(layer.scans), error)
            return []
    return layer.scans


def _ocr_lines(path: Path, numbers: list[int], cfg: IngestSettings) -> list[Line]:
    """OCR the given pages, rendered at `ocr_dpi`: their lines, in page order."""
    if not numbers:
        return []
    import pypdfium2 as pdfium

    try:
        check_languages(cfg.ocr_languages)
    except OcrUnavailable as error:
        raise DocumentLoadError(f"no text layer on {len(numbers)} of its pages (a scan?): {error}") from error
    # Pages are rendered here (pdfium is not thread-safe) and read by one Tesseract per core, a
    # few pages ahead at most (a 300-dpi page is 9 MB).
    threads = os.cpu_count() or 1
    pending: deque[tuple[int, Future]] = deque()
    lines: list[Line] = []
    bar = tqdm(
        total=len(numbers), desc=f"OCR {path.name}", unit="page", leave=False, disable=len(numbers) < 3
    )

    def collect() -> None:
        number, future = pending.popleft()
        for paragraph in future.result():
            lines.extend(
                Line(number, line.top, line.bottom, line.size, line.text + " ") for line in paragraph.lines
            )
        bar.update()

    pdf = pdfium.PdfDocument(str(path))
    try:
        with ThreadPoolExecutor(threads) as pool:
            for number in numbers:
                page = pdf[number - 1]
                image = render_page(page, cfg.ocr_dpi)
                pending.append((number, pool.submit(read_image, image, cfg.ocr_languages)))
                page.close()
                while len(pending) > 2 * threads:
                    collect()
            while pending:
                collect()
    except OcrUnavailable as error:
        raise DocumentLoadError(f"OCR failed: {error}") from error
    finally:
        pdf.close()
        bar.close()
    return lines


def _with_scans(blocks: list[Block], scans: list[Block]) -> list[Block]:
    """The text-layer blocks with the OCR pages' blocks in page order; an OCR block before the
    scan's first heading continues the section of the block before it."""
    if not scans:
        return blocks
    merged = sorted(blocks + scans, key=lambda b: b.page or 0)
    for before, block in zip(merged, merged[1:]):
        if block.ocr and not block.section:
            block.section = before.section
    return merged


@dataclass
class Heading:
    title: str
    level: int
    page: int


def _pdf_outline(path: Path) -> list[Heading]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        headings = []
        for bookmark in pdf.get_toc():
            dest = bookmark.get_dest()
            index = dest.get_index() if dest is not None else None
            if index is not None and bookmark.get_title().strip():
                title = " ".join(bookmark.get_title().split())
                headings.append(Heading(title, bookmark.level + 1, index + 1))
        return headings
    finally:
        pdf.close()


def _unnumbered(text: str) -> str:
    return re.sub(r"^(?:[a-z]?\d+ )+", "", normalised(text))


def _starts_heading(line: str, title: str) -> bool:
    """The line is the title, or at least half of its start (titles wrap over lines); a
    section number in front ("1.2", "A.3") is not part of the comparison."""
    line, title = _unnumbered(line), _unnumbered(title)
    return bool(line) and title.startswith(line) and len(line) >= min(len(title), max(8, len(title) // 2))


def _native_paragraphs(
    document, layer: list[str], outline: list[Heading], headings: bool = True, tables: list[PdfTable] = ()
) -> list[Block]:
    """Lines from the native pipeline -> paragraphs per page, with headings (`line_blocks`), and
    each of `tables` in place of the lines it covers.

    Docling's lines drop spaces that are only gaps between glyphs when a gap is narrow next to
    what docling-parse takes as the font's space width (ko.TeX's Korean, on tight lines), so
    each page's lines take their spacing from its text layer (`layer`, pypdfium2's text).
    """
    from itertools import groupby

    from docling_core.types.doc import CoordOrigin

    lines = []
    for item, _level in document.iterate_items():
        prov = getattr(item, "prov", None)
        text = getattr(item, "text", "").strip()
        if not prov or not text:
            continue
        page_height = document.pages[prov[0].page_no].size.height
        box = prov[0].bbox
        if box.coord_origin == CoordOrigin.BOTTOMLEFT:
            box = box.to_top_left_origin(page_height)
        lines.append(Line(prov[0].page_no, box.t, box.b, max(box.b - box.t, 1.0), text))
    # Each line now ends in the whitespace that parts it from the next ("" within a word).
    for page, group in groupby(lines, key=lambda line: line.page):
        group = list(group)
        for line, text in zip(group, respace(layer[page - 1], [line.text for line in group])):
            line.text = text
    return line_blocks(_with_tables(lines, tables), outline, headings)


def _with_tables(lines: list[Line], tables: list[PdfTable]) -> list[Line]:
    """The lines with each table's lines replaced by one table line where its first one was."""
    kept, placed = [], set()
    for line in lines:
        table = next((t for t in tables if t.page == line.page and t.covers(line.top, line.bottom)), None)
        if table is None:
            kept.append(line)
        elif id(table) not in placed:
            placed.add(id(table))
            text = markdown_table(table.rows[0], table.rows[1:])
            kept.append(Line(line.page, table.top, table.bottom, line.size, text, table=len(placed)))
    return kept


@dataclass
class Line:
    page: int
    top: float
    bottom: float
    size: float  # type size: a PDF line's box height, Tesseract's estimate for an OCR line
    text: str  # ending in the whitespace that parts it from the next line
    table: int = 0  # a table's number on the page (its text is Markdown), 0 for a line of text


def _size_levels(chars_by_size: dict[int, int], body: int, ocr: bool) -> dict[int, int]:
    """Sizes at least 20% above the body's -> heading levels, largest first, at most five. A
    text PDF's sizes are exact, so each is a level; Tesseract's estimates of one type size vary
    by some percent, so on a scan a size within 10% of the one above shares its level."""
    levels, level, above = {}, 0, None
    for size in sorted((s for s in chars_by_size if s >= 1.2 * body), reverse=True):
        if above is None or not ocr or size < 0.9 * above:
            level += 1
        if level > 5:
            break
        levels[size], above = level, size
    return levels


def line_blocks(
    lines: list[Line], outline: list[Heading], headings: bool = True, ocr: bool = False
) -> list[Block]:
    """Lines -> paragraphs per page, with headings: those of the PDF outline, or for a PDF
    without one (a scan has none) by type size (a line at least 20% larger than the body text,
    ranked by size). A paragraph ends where the vertical gap to the next line exceeds most of a
    line height, or the type size changes."""
    if not lines:
        return []
    by_page: dict[int, list[Heading]] = {}
    for heading in outline:
        by_page.setdefault(heading.page, []).append(heading)
    chars_by_size: dict[int, int] = {}
    for line in lines:
        if not line.table:
            chars_by_size[round(line.size)] = chars_by_size.get(round(line.size), 0) + len(line.text)
    # The size most text is set in (a page of tables only: their lines' size).
    body = max(chars_by_size, key=chars_by_size.get, default=round(lines[0].size))
    size_levels = _size_levels(chars_by_size, body, ocr) if headings and not outline else {}

    blocks: list[Block] = []
    path: list[str] = []
    current: list[str] = []
    last: Line | None = None

    def flush() -> None:
        if current:
            blocks.append(Block("".join(current).rstrip(), section=tuple(path), page=last.page, ocr=ocr))
            current.clear()

    wrapped: tuple[Line, int] | None = None  # the last line, when it was a heading by size, and its level
    for line in lines:
        if line.table:
            flush()
            table_id = f"#/pages/{line.page}/tables/{line.table}"
            blocks.append(Block(line.text, "table", section=tuple(path), page=line.page, table_id=table_id))
            last, wrapped = line, None
            continue
        pending = by_page.get(line.page, [])
        heading = next((h for h in pending if _starts_heading(line.text, h.title)), None)
        if heading is not None:
            pending.remove(heading)
        elif round(line.size) in size_levels and len(line.text) < 150:
            heading = Heading(line.text.rstrip(), size_levels[round(line.size)], line.page)
            continues = wrapped is not None and wrapped[0] is last and wrapped[1] == heading.level
            if ocr and continues and line.page == last.page:
                # The next line of a wrapped heading: a scan's size estimates differ line to line.
                heading = Heading(f"{path.pop()} {heading.title}", heading.level, line.page)
                blocks.pop()
            elif ocr and last is not None and line.page == last.page and line.top - last.bottom <= 0.8 * body:
                # Set close under the line above, it goes on a paragraph: Tesseract overestimated
                # its size (a short last line). A heading has space above it.
                heading = None
            wrapped = (line, heading.level) if heading else None
        if heading is not None:
            flush()
            path = path[: heading.level - 1] + [heading.title]
            text = f"{'#' * min(heading.level + 1, 6)} {heading.title}"
            blocks.append(Block(text, "heading", section=tuple(path), page=line.page, ocr=ocr))
            last = line
            continue
        if (
            last is None
            or line.page != last.page
            or line.top - last.bottom > 0.8 * line.size
            or abs(line.size - last.size) > 0.15 * line.size
        ):
            flush()
        current.append(line.text)
        last = line
    flush()
    return blocks
