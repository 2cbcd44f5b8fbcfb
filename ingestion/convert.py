"""Files -> `ConvertedDocument`: Markdown blocks, each with its location (page or slide, section
path, table id, character offsets), or a `DocumentLoadError` that says why not.

Docling converts every format it supports (PDF, DOCX, PPTX, HTML, Markdown, CSV, XLSX). Its
layout models cannot be downloaded here, so PDFs go through Docling's model-free native
pipeline (text lines with page provenance) and we rebuild paragraphs and, from the PDF outline,
headings; with `ingest.docling_artifacts_path` set, Docling's standard layout pipeline runs
instead. PDF strategies (the PDF-extraction study: plain text maximises evidence recall,
structure plus page anchors maximise traceability):

- `text`: the text layer of each page (pypdfium2), no structure;
- `layout`: native text lines grouped into paragraphs per page, in reading order;
- `markdown`: Docling structure (outline headings, paragraphs, tables), no page anchors;
- `anchored`: Docling structure with page anchors (the default).

A page without a text layer (a scan) is OCRed (`ingestion/ocr.py`, `ingest.ocr`) in every
strategy: its paragraphs keep their page anchor and are marked as OCR.

JSON and plain text are read here; Docling has no reader for arbitrary JSON. Text files, HTML
included, are decoded here (`ingestion/encoding.py`), Office files checked for encryption first
(`ingestion/office.py`). Docling's inline runs (bold, links) are joined into their paragraph's
line (`ingestion/inline.py`). A document whose text is over `ingest.max_text_chars` is refused.
"""

from __future__ import annotations

import html
import io
import json
import logging
import os
import re
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm.auto import tqdm

from ingestion.encoding import decode, declared_charset
from ingestion.errors import DocumentLoadError
from ingestion.headers import front_matter
from ingestion.inline import InlineJoiner
from ingestion.ocr import OcrUnavailable, check_languages, read_image, render_page
from rag.settings import IngestSettings

if TYPE_CHECKING:
    from ingestion.figures import PictureReader

logger = logging.getLogger(__name__)

DOCLING_SUFFIXES = {
    ".pdf": "pdf", ".docx": "docx", ".pptx": "pptx", ".html": "html", ".htm": "html",
    ".md": "md", ".markdown": "md", ".csv": "csv", ".xlsx": "xlsx",
}
OWN_SUFFIXES = {".txt": "txt", ".json": "json"}
SUPPORTED_SUFFIXES = set(DOCLING_SUFFIXES) | set(OWN_SUFFIXES)
TEXT_FORMATS = {"md", "csv", "html"}  # decoded here, then handed to Docling as UTF-8
OFFICE_FORMATS = {"docx", "pptx", "xlsx"}
__all__ = ["DocumentLoadError"]  # raised here, defined in ingestion/errors.py for the modules this one uses


@dataclass
class Block:
    text: str
    kind: str = "text"  # title | heading | text | list | table
    page: int | None = None
    slide: int | None = None
    section: tuple[str, ...] = ()
    table_id: str | None = None
    start: int = 0  # offsets into ConvertedDocument.markdown
    end: int = 0
    ocr: bool = False  # read from a picture or a scanned page, not from the file's text


@dataclass
class ConvertedDocument:
    doc_id: str
    format: str
    blocks: list[Block]
    fields: dict[str, Any] = field(default_factory=dict)  # front matter or file metadata
    markdown: str = ""
    warnings: list[str] = field(default_factory=list)  # what was indexed, but not as the file means it

    def __post_init__(self) -> None:
        self.blocks = [b for b in self.blocks if b.text.strip()]
        parts, offset = [], 0
        for block in self.blocks:
            block.start, block.end = offset, offset + len(block.text)
            parts.append(block.text)
            offset = block.end + 2
        self.markdown = "\n\n".join(parts)

    @property
    def first_page_text(self) -> str:
        """Text of the first page or slide (the whole text if it has none), for header regexes."""
        first = [b.text for b in self.blocks if (b.page or b.slide or 1) == 1]
        return "\n".join(first)


def check_file(path: Path, cfg: IngestSettings) -> str:
    """The file's format, after the checks that need no reading (a known type, not empty, within
    `max_file_mb`); raises DocumentLoadError with the reason. The UI runs it before copying an
    upload."""
    suffix = path.suffix.lower()
    fmt = DOCLING_SUFFIXES.get(suffix) or OWN_SUFFIXES.get(suffix)
    if fmt is None:
        kinds = ", ".join(sorted(SUPPORTED_SUFFIXES))
        raise DocumentLoadError(f"unsupported file type '{path.suffix or path.name}' (supported: {kinds})")
    size = path.stat().st_size
    if size == 0:
        raise DocumentLoadError("the file is empty")
    if size > cfg.max_file_mb * 1024 * 1024:
        raise DocumentLoadError(f"the file is {size / 2**20:.1f} MB, over the {cfg.max_file_mb} MB limit")
    return fmt


def convert(path: Path, doc_id: str, cfg: IngestSettings) -> ConvertedDocument:
    """Convert one file; raises DocumentLoadError with the reason when it cannot."""
    fmt = check_file(path, cfg)
    if fmt == "pdf":
        document = _pdf(path, doc_id, cfg)
    elif fmt in ("txt", "json"):
        text = decode(path.read_bytes())
        document = _json(text, doc_id) if fmt == "json" else _plain(text, doc_id)
    else:
        document = _docling_other(path, doc_id, fmt, cfg)
    if not document.blocks:
        raise DocumentLoadError("no text could be extracted")
    check_text_size(len(document.markdown), cfg)
    for warning in document.warnings:
        logger.warning("%s: %s", path.name, warning)
    return document


def check_text_size(chars: int, cfg: IngestSettings) -> None:
    """Refuse a document too long to index as one: chunking is linear, but its embedding would
    hold the store's writer for many minutes (docs/BENCHMARKS.md, "Chunking scale")."""
    if chars > cfg.max_text_chars:
        raise DocumentLoadError(
            f"{chars:,} characters of text, over the limit of {cfg.max_text_chars:,} for one document "
            "(ingest.max_text_chars): split the file into smaller ones"
        )


# ------------------------------------------------------------------------ own readers


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def _plain(text: str, doc_id: str) -> ConvertedDocument:
    return ConvertedDocument(doc_id, "txt", [Block(p) for p in _paragraphs(text)])


def _json(text: str, doc_id: str) -> ConvertedDocument:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise DocumentLoadError(f"invalid JSON at line {error.lineno}: {error.msg}") from error
    blocks: list[Block] = []
    if isinstance(data, list) and data and all(isinstance(row, dict) for row in data):
        blocks.append(Block(_records_table(data), "table", table_id="#/json"))
    elif isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, list) and value and all(isinstance(r, dict) for r in value):
                blocks.append(Block(_records_table(value), "table", section=(str(key),), table_id=f"#/{key}"))
            else:
                lines = [f"{path}: {leaf}" for path, leaf in _flatten(value, str(key))]
                blocks.append(Block("\n".join(lines), section=(str(key),)))
    else:
        blocks.append(Block("\n".join(f"{p}: {v}" for p, v in _flatten(data, "$"))))
    return ConvertedDocument(doc_id, "json", blocks)


def _flatten(value: Any, path: str):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _flatten(inner, f"{path}.{key}")
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _flatten(inner, f"{path}[{index}]")
    else:
        yield path, value


def _records_table(rows: list[dict]) -> str:
    columns = list(dict.fromkeys(key for row in rows for key in row))
    def cell(value: Any) -> str:
        return str(value if not isinstance(value, (dict, list)) else json.dumps(value, ensure_ascii=False)).replace("|", "\\|")
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(row.get(c, "")) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


# ---------------------------------------------------------------------------- docling


def compact_table(markdown: str) -> str:
    """Docling pads table cells to equal width; the padding costs characters, not meaning."""
    lines = []
    for line in markdown.splitlines():
        line = re.sub(r" {2,}", " ", line)
        lines.append(re.sub(r"-{3,}", "---", line))
    return "\n".join(lines)


def _docling_other(path: Path, doc_id: str, fmt: str, cfg: IngestSettings) -> ConvertedDocument:
    from docling.datamodel.base_models import DocumentStream

    from ingestion.figures import PictureReader  # imported here: figures imports this module

    from ingestion.office import check_package, uncached_formulas

    fields: dict[str, Any] = {}
    source: Any = path
    sheet_names: list[str] = []
    written = ""  # the text as written, where the runs of a paragraph are looked up
    warnings: list[str] = []
    if fmt in TEXT_FORMATS:
        raw = path.read_bytes()
        text = decode(raw, declared_charset(raw) if fmt == "html" else None)
        # Before Docling spends minutes on it; a page's text is what its tags leave.
        check_text_size(len(_HTML_NOT_TEXT.sub("", text)) if fmt == "html" else len(text), cfg)
        if fmt == "md":
            fields, text = front_matter(text)
            written, text = text, keep_inline_html(text)
        elif fmt == "csv":
            _check_cells(_csv_cells(text), cfg)
        else:
            fields, written = _html_title(text), html.unescape(text)
        # Named by the format, not the file: Docling takes a name starting with "." ("....x.md",
        # ".notes.md") for one without an extension and refuses it. The UTF-8 byte-order mark
        # outranks a page's own <meta charset> in the HTML parser (the text is decoded already).
        data = (b"\xef\xbb\xbf" if fmt == "html" else b"") + text.encode("utf-8")
        source = DocumentStream(name=f"document.{fmt}", stream=io.BytesIO(data))
    elif fmt in OFFICE_FORMATS:
        check_package(path, fmt)
        if fmt == "xlsx":
            sheet_names, cells = _xlsx_sheets(path)
            _check_cells(cells, cfg)
            warnings += _formula_warning(uncached_formulas(path))
        elif fmt == "docx":
            written = _docx_runs(path)
    document = _run_docling(source, path, fmt, None)
    blocks = docling_blocks(document, fmt, sheet_names, PictureReader.of(path, fmt, cfg), written)
    return ConvertedDocument(doc_id, fmt, blocks, fields, warnings=warnings)


def _formula_warning(blank: dict[str, int]) -> list[str]:
    if not blank:
        return []
    sheets = ", ".join(f"'{sheet}': {count}" for sheet, count in blank.items())
    return [f"{sum(blank.values())} formula cells without a computed value (sheet {sheets}) are indexed blank: "
            "the program that wrote the file did not calculate them; open and save it in Excel or LibreOffice"]


_DOCX_TEXT = re.compile(r"<w:t(?:\s[^>]*)?>([^<]*)</w:t>|<w:(?:tab|br|cr)\b[^>]*/>|</w:p>")


def _docx_runs(path: Path) -> str:
    """The text of a DOCX's runs as written, whitespace included, paragraphs on lines of their own."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as package:
            xml = package.read("word/document.xml").decode("utf-8", errors="replace")
    except (zipfile.BadZipFile, KeyError):  # Docling says what is wrong with the file
        return ""
    return html.unescape("".join(m.group(1) if m.group(1) is not None else " " for m in _DOCX_TEXT.finditer(xml)))


def _check_cells(cells: int, cfg: IngestSettings) -> None:
    """Refuse a table Docling would reject after minutes and gigabytes, in one accurate line."""
    if cells > cfg.max_table_cells:
        raise DocumentLoadError(
            f"{cells:,} table cells, over the limit of {cfg.max_table_cells:,} (ingest.max_table_cells): "
            "split the file into smaller ones"
        )


def _csv_cells(text: str) -> int:
    """Rows x columns, counted from the header line without parsing every row."""
    import csv

    lines = text.count("\n") + (not text.endswith("\n"))
    first = text[: text.find("\n")] if "\n" in text else text
    try:
        delimiter = csv.Sniffer().sniff(first, delimiters=",;\t|").delimiter
    except csv.Error:
        delimiter = ","
    return lines * max(1, len(next(csv.reader([first], delimiter=delimiter), [])))


def _xlsx_sheets(path: Path) -> tuple[list[str], int]:
    """The sheet names (sections) and the cells (rows x columns) of all sheets, in one read."""
    import openpyxl

    try:
        workbook = openpyxl.load_workbook(path, read_only=True)
    except Exception as error:  # openpyxl raises many types for broken files
        raise DocumentLoadError(f"corrupt or unreadable XLSX ({type(error).__name__}: {error})") from error
    try:
        cells = sum((sheet.max_row or 0) * (sheet.max_column or 0) for sheet in workbook.worksheets)
        return list(workbook.sheetnames), cells
    finally:
        workbook.close()


_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
_HTML_NOT_TEXT = re.compile(r"<(script|style)\b.*?</\1\s*>|<[^>]*>", re.IGNORECASE | re.DOTALL)


def _html_title(page: str) -> dict[str, str]:
    """The page's <title>: generated sites (Sphinx, wikis) put navigation headings such as
    "Table of Contents" before the page's own, so the first heading is no title."""
    match = _HTML_TITLE.search(page[:65536])
    title = " ".join(html.unescape(re.sub(r"<[^>]+>", "", match.group(1))).split()) if match else ""
    return {"Title": title} if title else {}


_CODE = re.compile(r"(```.*?```|~~~.*?~~~|`[^`\n]*`)", re.DOTALL)


def keep_inline_html(markdown: str) -> str:
    """Escape `<` outside code, so Docling's Markdown reader keeps HTML written in a document
    ("<img ...> and <script> appear") as text instead of dropping it from the index."""
    parts = _CODE.split(markdown)
    return "".join(part if i % 2 else part.replace("<", "&lt;") for i, part in enumerate(parts))


def _run_docling(source: Any, path: Path, fmt: str, artifacts_path: str | None):
    from docling.datamodel.base_models import ConversionStatus

    try:
        result = _converter(fmt, artifacts_path).convert(source, raises_on_error=False)
    except Exception as error:  # Docling raises many types for broken files
        raise DocumentLoadError(f"corrupt or unreadable {fmt.upper()} ({type(error).__name__}: {error})") from error
    if result.status not in (ConversionStatus.SUCCESS, ConversionStatus.PARTIAL_SUCCESS):
        detail = "; ".join(e.error_message for e in result.errors)[:200] or result.status.value
        raise DocumentLoadError(f"corrupt or unreadable {fmt.upper()} ({detail})")
    return result.document


_CONVERTERS: dict[tuple[str, str | None], Any] = {}


def _converter(fmt: str, artifacts_path: str | None):
    """One Docling converter per (format, artifacts) pair: building one loads backends."""
    key = (fmt, artifacts_path)
    if key not in _CONVERTERS:
        from docling.document_converter import DocumentConverter, PdfFormatOption
        from docling.datamodel.base_models import InputFormat

        options = {}
        if fmt == "pdf":
            if artifacts_path:
                from docling.datamodel.pipeline_options import PdfPipelineOptions

                pdf_options = PdfPipelineOptions(artifacts_path=artifacts_path, do_ocr=False)
                options[InputFormat.PDF] = PdfFormatOption(pipeline_options=pdf_options)
            else:
                from docling.datamodel.pipeline_options import NativePdfPipelineOptions
                from docling.pipeline.native_pdf_pipeline import NativePdfPipeline

                options[InputFormat.PDF] = PdfFormatOption(
                    pipeline_cls=NativePdfPipeline, pipeline_options=NativePdfPipelineOptions()
                )
        _CONVERTERS[key] = DocumentConverter(format_options=options)
    return _CONVERTERS[key]


def _heading(text: str) -> str:
    """A heading without the permalink sign that Sphinx and MkDocs pages put after it ("¶"),
    which would otherwise end every section name and break citing by section."""
    return re.sub(r"\s*¶\s*$", "", text)


def docling_blocks(
    document, fmt: str, sheet_names: list[str] = (), pictures: PictureReader | None = None, written: str = ""
) -> list[Block]:
    """Walk a DoclingDocument in reading order, keeping the section path and locations; charts
    and pictures become blocks through `ingestion.figures` (without `pictures`: no alt text, no OCR).
    An inline group (a paragraph, heading or list item with bold or links) is one block, its runs
    joined as `written` (the file's text) spaces them (`ingestion/inline.py`)."""
    from docling_core.types.doc import (
        GroupItem, InlineGroup, ListItem, PictureItem, SectionHeaderItem, TableItem, TextItem, TitleItem,
    )

    from ingestion.figures import PictureReader, figure_block, picture_captions  # figures imports this module

    pictures = pictures or PictureReader()
    captions = picture_captions(document)
    joiner = InlineJoiner(written)
    blocks: list[Block] = []
    path: list[str] = []
    inside: int | None = None  # the level of the table or inline group whose items are being passed over
    taken: set[str] = set()  # inline groups read as their heading's or list item's text

    def runs(group) -> list[str]:
        return [getattr(run, "text", "") for run, _ in document.iterate_items(root=group)]

    def own_text(item) -> str:
        """An item's text, or when Docling gave it none, its inline group's runs."""
        if getattr(item, "text", ""):
            joiner.advance(item.text)
            return item.text
        groups = [group for group in (child.resolve(document) for child in item.children) if isinstance(group, InlineGroup)]
        taken.update(group.self_ref for group in groups[:1])
        return joiner.join(runs(groups[0])) if groups else ""

    for item, level in document.iterate_items(with_groups=True):
        if inside is not None and level > inside:
            continue  # a table's cells are in its Markdown, an inline group's runs in its line
        inside = None
        if isinstance(item, InlineGroup):
            inside = level
            if item.self_ref in taken:
                continue  # read with its heading or list item
            text = joiner.join(runs(item))
            prov = next((run.prov for run, _ in document.iterate_items(root=item) if getattr(run, "prov", None)), [])
        elif isinstance(item, GroupItem):
            continue
        else:
            text, prov = own_text(item), getattr(item, "prov", None) or []
        number = prov[0].page_no if prov else None
        location = {"slide": number} if fmt == "pptx" else {"page": number if fmt == "pdf" else None}
        if fmt == "xlsx" and number and number <= len(sheet_names):
            path = [sheet_names[number - 1]]
        if fmt == "pptx" and number and (not blocks or blocks[-1].slide != number):
            path = []  # a slide's title starts its own section
        if item.self_ref in captions:
            continue  # in its picture's block
        if isinstance(item, TitleItem) or (isinstance(item, SectionHeaderItem) and fmt == "pptx"):
            path = [_heading(text)]
            blocks.append(Block(f"# {path[-1]}", "title", section=tuple(path), **location))
        elif isinstance(item, SectionHeaderItem):
            depth = max(1, item.level)
            title_offset = 1 if blocks and blocks[0].kind == "title" else 0
            path = path[: depth - 1 + title_offset] + [_heading(text)]
            blocks.append(Block(f"{'#' * (depth + 1)} {path[-1]}", "heading", section=tuple(path), **location))
        elif isinstance(item, TableItem):
            inside = level
            table = compact_table(item.export_to_markdown(document))
            blocks.append(Block(table, "table", section=tuple(path), table_id=item.self_ref, **location))
        elif isinstance(item, PictureItem):
            figure = figure_block(item, document, pictures, tuple(path), **location)
            blocks.extend([figure] if figure else [])
        elif isinstance(item, ListItem):
            blocks.append(Block(f"- {text}", "list", section=tuple(path), **location))
        elif isinstance(item, (TextItem, InlineGroup)):
            blocks.append(Block(text, "text", section=tuple(path), **location))
    return blocks


# -------------------------------------------------------------------------------- PDF


def _pdf(path: Path, doc_id: str, cfg: IngestSettings) -> ConvertedDocument:
    layer = pdf_text_layer(path)
    pages = layer.pages
    scanned = _pages_to_ocr(layer, cfg)
    structured = cfg.pdf_strategy in ("anchored", "markdown")
    outline = _pdf_outline(path) if structured else []
    # Scanned pages get the same paragraphs and headings (by type size) as text lines do.
    scans = _line_blocks(_ocr_lines(path, scanned, cfg), outline, structured, ocr=True)
    if cfg.pdf_strategy == "text" or len(scanned) == len(pages):
        blocks = [Block(p, page=n) for n, text in enumerate(pages, 1) if n not in scanned for p in _paragraphs(text)]
    else:
        blocks = _docling_pdf(path, pages, outline, cfg)
    blocks = _with_scans(blocks, scans)
    if not blocks:
        raise DocumentLoadError(f"no text on any of its {len(pages)} pages: no text layer, and OCR found none")
    if cfg.pdf_strategy == "markdown":
        for block in blocks:
            block.page = None
    return ConvertedDocument(doc_id, "pdf", blocks, layer.fields)


def _docling_pdf(path: Path, pages: list[str], outline: list[_Heading], cfg: IngestSettings) -> list[Block]:
    """Blocks of the text-layer pages by Docling: its layout pipeline's structure, or the
    model-free native pipeline's lines, respaced from the text layer and made paragraphs."""
    document = _run_docling(path, path, "pdf", cfg.docling_artifacts_path or None)
    if cfg.docling_artifacts_path:  # the layout model gave real structure
        return docling_blocks(document, "pdf")
    return _native_paragraphs(document, pages, outline, cfg.pdf_strategy != "layout")


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
        fields = {k: v for k, v in pdf.get_metadata_dict(skip_empty=True).items() if k in ("Title", "Author", "Subject")}
        pages, scans = [], []
        for number, page in enumerate(pdf, 1):
            textpage = page.get_textpage()
            pages.append(textpage.get_text_range().replace("\r\n", "\n").replace("\r", "\n"))
            if not pages[-1].strip() and next(page.get_objects([pdfium_c.FPDF_PAGEOBJ_IMAGE]), None) is not None:
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


def _ocr_lines(path: Path, numbers: list[int], cfg: IngestSettings) -> list[_Line]:
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
    lines: list[_Line] = []
    bar = tqdm(total=len(numbers), desc=f"OCR {path.name}", unit="page", leave=False, disable=len(numbers) < 3)

    def collect() -> None:
        number, future = pending.popleft()
        for paragraph in future.result():
            lines.extend(_Line(number, line.top, line.bottom, line.size, line.text + " ") for line in paragraph.lines)
        bar.update()

    pdf = pdfium.PdfDocument(str(path))
    try:
        with ThreadPoolExecutor(threads) as pool:
            for number in numbers:
                page = pdf[number - 1]
                pending.append((number, pool.submit(read_image, render_page(page, cfg.ocr_dpi), cfg.ocr_languages)))
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
class _Heading:
    title: str
    level: int
    page: int


def _pdf_outline(path: Path) -> list[_Heading]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        headings = []
        for bookmark in pdf.get_toc():
            dest = bookmark.get_dest()
            index = dest.get_index() if dest is not None else None
            if index is not None and bookmark.get_title().strip():
                headings.append(_Heading(" ".join(bookmark.get_title().split()), bookmark.level + 1, index + 1))
        return headings
    finally:
        pdf.close()


def _norm(text: str) -> str:
    return re.sub(r"\W+", " ", text).strip().lower()


def _unnumbered(text: str) -> str:
    return re.sub(r"^(?:[a-z]?\d+ )+", "", _norm(text))


def _starts_heading(line: str, title: str) -> bool:
    """The line is the title, or at least half of its start (titles wrap over lines); a
    section number in front ("1.2", "A.3") is not part of the comparison."""
    line, title = _unnumbered(line), _unnumbered(title)
    return bool(line) and title.startswith(line) and len(line) >= min(len(title), max(8, len(title) // 2))


def _native_paragraphs(document, layer: list[str], outline: list[_Heading], headings: bool = True) -> list[Block]:
    """Lines from the native pipeline -> paragraphs per page, with headings (`_line_blocks`).

    Docling's lines drop spaces that are only gaps between glyphs when a gap is narrow next to
    what docling-parse takes as the font's space width (ko.TeX's Korean, on tight lines), so
    each page's lines take their spacing from its text layer (`layer`, pypdfium2's text).
    """
    from itertools import groupby

    from docling_core.types.doc import CoordOrigin

    from ingestion.spacing import respace

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
        lines.append(_Line(prov[0].page_no, box.t, box.b, max(box.b - box.t, 1.0), text))
    # Each line now ends in the whitespace that parts it from the next ("" within a word).
    for page, group in groupby(lines, key=lambda line: line.page):
        group = list(group)
        for line, text in zip(group, respace(layer[page - 1], [line.text for line in group])):
            line.text = text
    return _line_blocks(lines, outline, headings)


@dataclass
class _Line:
    page: int
    top: float
    bottom: float
    size: float  # type size: a PDF line's box height, Tesseract's estimate for an OCR line
    text: str  # ending in the whitespace that parts it from the next line


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


def _line_blocks(lines: list[_Line], outline: list[_Heading], headings: bool = True, ocr: bool = False) -> list[Block]:
    """Lines -> paragraphs per page, with headings: those of the PDF outline, or for a PDF
    without one (a scan has none) by type size (a line at least 20% larger than the body text,
    ranked by size). A paragraph ends where the vertical gap to the next line exceeds most of a
    line height, or the type size changes."""
    if not lines:
        return []
    by_page: dict[int, list[_Heading]] = {}
    for heading in outline:
        by_page.setdefault(heading.page, []).append(heading)
    chars_by_size: dict[int, int] = {}
    for line in lines:
        chars_by_size[round(line.size)] = chars_by_size.get(round(line.size), 0) + len(line.text)
    body = max(chars_by_size, key=chars_by_size.get)  # the size most text is set in
    size_levels = _size_levels(chars_by_size, body, ocr) if headings and not outline else {}

    blocks: list[Block] = []
    path: list[str] = []
    current: list[str] = []
    last: _Line | None = None

    def flush() -> None:
        if current:
            blocks.append(Block("".join(current).rstrip(), section=tuple(path), page=last.page, ocr=ocr))
            current.clear()

    wrapped: tuple[_Line, int] | None = None  # the last line, when it was a heading by size, and its level
    for line in lines:
        pending = by_page.get(line.page, [])
        heading = next((h for h in pending if _starts_heading(line.text, h.title)), None)
        if heading is not None:
            pending.remove(heading)
        elif round(line.size) in size_levels and len(line.text) < 150:
            heading = _Heading(line.text.rstrip(), size_levels[round(line.size)], line.page)
            continues = wrapped is not None and wrapped[0] is last and wrapped[1] == heading.level
            if ocr and continues and line.page == last.page:
                # The next line of a wrapped heading: a scan's size estimates differ line to line.
                heading = _Heading(f"{path.pop()} {heading.title}", heading.level, line.page)
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
