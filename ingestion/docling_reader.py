"""Docling's formats (DOCX, PPTX, XLSX, HTML, Markdown, CSV; PDFs come through `ingestion/pdf.py`)
-> blocks, walking the DoclingDocument in reading order with each block's section path and page
or slide.

Text files, HTML included, are decoded first (`ingestion/encoding.py`) and handed to Docling as
UTF-8; Office files are checked for encryption first (`ingestion/office.py`). Docling's inline
runs (bold, links) are joined into their paragraph's line (`ingestion/inline.py`), and charts and
pictures become blocks through `ingestion/figures.py`.
"""

from __future__ import annotations

import html
import io
import re
from pathlib import Path
from typing import Any

from ingestion.document import Block, ConvertedDocument, DocumentLoadError, check_cells, check_text_size
from ingestion.encoding import decode, declared_charset
from ingestion.figures import PictureReader, figure_block, picture_captions
from ingestion.headers import front_matter
from ingestion.inline import InlineJoiner
from ingestion.office import OFFICE_FORMATS, check_package, docx_runs, formula_warnings, xlsx_sheets
from ingestion.tables import continued_table, titled_table
from rag.settings import IngestSettings

TEXT_FORMATS = {"md", "csv", "html"}  # decoded here, then handed to Docling as UTF-8
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
_HTML_NOT_TEXT = re.compile(r"<(script|style)\b.*?</\1\s*>|<[^>]*>", re.IGNORECASE | re.DOTALL)
_CODE = re.compile(r"(```.*?```|~~~.*?~~~|`[^`\n]*`)", re.DOTALL)
_CONVERTERS: dict[tuple[str, str | None], Any] = {}


def read(path: Path, doc_id: str, fmt: str, cfg: IngestSettings) -> ConvertedDocument:
    from docling.datamodel.base_models import DocumentStream

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
            written, text = text, keep_inline_html(hard_breaks(text))
        elif fmt == "csv":
            check_cells(_csv_cells(text), cfg)
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
            sheet_names, cells = xlsx_sheets(path)
            check_cells(cells, cfg)
            warnings += formula_warnings(path)
        elif fmt == "docx":
            written = docx_runs(path)
    document = run_docling(source, fmt, None)
    blocks = docling_blocks(document, fmt, sheet_names, PictureReader.of(path, fmt, cfg), written)
    return ConvertedDocument(doc_id, fmt, blocks, fields, warnings=warnings)


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


def _html_title(page: str) -> dict[str, str]:
    """The page's <title>: generated sites (Sphinx, wikis) put navigation headings such as
    "Table of Contents" before the page's own, so the first heading is no title."""
    match = _HTML_TITLE.search(page[:65536])
    title = " ".join(html.unescape(re.sub(r"<[^>]+>", "", match.group(1))).split()) if match else ""
    return {"Title": title} if title else {}


def hard_breaks(markdown: str) -> str:
    r"""Each hard line break (two spaces or a backslash ending the line) made a paragraph break:
    Docling's Markdown reader joins the lines, so a header of fields ("**Version:** 2.0  " over
    "**Effective date:** 1 March 2024  ") became one run-on paragraph. Code blocks are left alone.

    >>> hard_breaks("**Version:** 2.0  \n**Effective date:** 1 March 2024\n\nText.")
    '**Version:** 2.0\n\n**Effective date:** 1 March 2024\n\nText.'
    """
    lines, fenced = markdown.split("\n"), False
    for i, line in enumerate(lines[:-1]):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if not fenced and re.search(r"\S(?: {2,}|\\)$", line) and lines[i + 1].strip():
            lines[i] = re.sub(r"(?: {2,}|\\)$", "", line) + "\n"
    return "\n".join(lines)


def keep_inline_html(markdown: str) -> str:
    """Escape `<` outside code, so Docling's Markdown reader keeps HTML written in a document
    ("<img ...> and <script> appear") as text instead of dropping it from the index."""
    parts = _CODE.split(markdown)
    return "".join(part if i % 2 else part.replace("<", "&lt;") for i, part in enumerate(parts))


def run_docling(source: Any, fmt: str, artifacts_path: str | None):
    """The DoclingDocument of `source` (a path or a stream), or DocumentLoadError with Docling's reason."""
    from docling.datamodel.base_models import ConversionStatus

    try:
        result = _converter(fmt, artifacts_path).convert(source, raises_on_error=False)
    except Exception as error:  # Docling raises many types for broken files
        reason = f"{type(error).__name__}: {error}"
        raise DocumentLoadError(f"corrupt or unreadable {fmt.upper()} ({reason})") from error
    if result.status not in (ConversionStatus.SUCCESS, ConversionStatus.PARTIAL_SUCCESS):
        detail = "; ".join(e.error_message for e in result.errors)[:200] or result.status.value
        raise DocumentLoadError(f"corrupt or unreadable {fmt.upper()} ({detail})")
    return result.document


def _converter(fmt: str, artifacts_path: str | None):
    """One Docling converter per (format, artifacts) pair: building one loads backends."""
    key = (fmt, artifacts_path)
    if key not in _CONVERTERS:
        from docling.datamodel.base_models import InputFormat
        from docling.document_converter import DocumentConverter, PdfFormatOption

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


def compact_table(markdown: str) -> str:
    """Docling pads table cells to equal width; the padding costs characters, not meaning."""
    lines = []
    for line in markdown.splitlines():
        line = re.sub(r" {2,}", " ", line)
        lines.append(re.sub(r"-{3,}", "---", line))
    return "\n".join(lines)


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
        GroupItem,
        InlineGroup,
        ListItem,
        PictureItem,
        SectionHeaderItem,
        TableItem,
        TextItem,
        TitleItem,
    )

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
        children = (child.resolve(document) for child in item.children)
        groups = [group for group in children if isinstance(group, InlineGroup)]
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
            located = (run.prov for run, _ in document.iterate_items(root=item) if getattr(run, "prov", None))
            prov = next(located, [])
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
        section = tuple(path)
        if isinstance(item, TitleItem) or (isinstance(item, SectionHeaderItem) and fmt == "pptx"):
            path = [_heading(text)]
            blocks.append(Block(f"# {path[-1]}", "title", section=tuple(path), **location))
        elif isinstance(item, SectionHeaderItem):
            depth = max(1, item.level)
            title_offset = 1 if blocks and blocks[0].kind == "title" else 0
            path = path[: depth - 1 + title_offset] + [_heading(text)]
            heading = f"{'#' * (depth + 1)} {path[-1]}"
            blocks.append(Block(heading, "heading", section=tuple(path), **location))
        elif isinstance(item, TableItem):
            inside = level
            table = compact_table(item.export_to_markdown(document))
            if fmt == "xlsx":  # a sheet's title above its header row is no column's name
                title, table = titled_table(table)
                blocks.extend([Block(title, "text", section=section, **location)] if title else [])
            last = blocks[-1] if blocks else None
            if fmt == "xlsx" and last and last.kind == "table" and last.section == section \
                    and (whole := continued_table(last.text, table)):
                last.text = whole  # a sheet's totals below a blank row: rows of the table above
            else:
                blocks.append(Block(table, "table", section=section, table_id=item.self_ref, **location))
        elif isinstance(item, PictureItem):
            figure = figure_block(item, document, pictures, section, **location)
            blocks.extend([figure] if figure else [])
        elif isinstance(item, ListItem):
            blocks.append(Block(f"- {text}", "list", section=section, **location))
        elif isinstance(item, (TextItem, InlineGroup)):
            blocks.append(Block(text, "text", section=section, **location))
    return blocks
