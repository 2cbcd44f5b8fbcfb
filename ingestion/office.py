"""What Docling does not read from Office files (DOCX, PPTX, XLSX): an encrypted package, an old
binary file under a new name, spreadsheet formulas without a computed value, the sheet names and
sizes, and a DOCX's text as written (how its runs are spaced).

An encrypted OOXML file is no ZIP at all but an OLE2 compound file holding an
`EncryptedPackage` stream (MS-OFFCRYPTO), which Docling and openpyxl report as a corrupt ZIP.
"""

from __future__ import annotations

import html
import posixpath
import re
import zipfile
from pathlib import Path
from xml.etree import ElementTree

from ingestion.document import DocumentLoadError

OFFICE_FORMATS = {"docx", "pptx", "xlsx"}

OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")  # a directory entry's name
_OLD_BINARY = {"docx": ".doc", "pptx": ".ppt", "xlsx": ".xls"}
_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_DOCX_TEXT = re.compile(r"<w:t(?:\s[^>]*)?>([^<]*)</w:t>|<w:(?:tab|br|cr)\b[^>]*/>|</w:p>")


def check_package(path: Path, fmt: str) -> None:
    """Refuse an encrypted Office file, or an old binary one named like a new one, in one line."""
    with path.open("rb") as handle:
        if handle.read(len(OLE2_MAGIC)) != OLE2_MAGIC:
            return
        if _ENCRYPTED_STREAM in handle.read():
            raise DocumentLoadError(
                f"password-protected {fmt.upper()}: save it without a password to ingest it"
            )
    raise DocumentLoadError(
        f"an old binary Office file ({_OLD_BINARY[fmt]}) named .{fmt}: save it as {fmt.upper()}"
    )


def uncached_formulas(path: Path) -> dict[str, int]:
    """Sheet name -> how many formula cells hold no computed value. A workbook written by a
    program that does not calculate (openpyxl, many exporters) stores the formula alone, and
    every reader, Docling's too, sees a blank cell; Excel or LibreOffice fill the values in
    when the file is opened and saved there."""
    with zipfile.ZipFile(path) as package:
        counts = {}
        for name, part in _sheet_parts(package).items():
            blank = 0
            for _event, cell in ElementTree.iterparse(package.open(part)):
                if cell.tag != f"{_MAIN}c":
                    continue
                # A cached empty text result (t="str") is a value; openpyxl writes "<v></v>".
                formula = cell.find(f"{_MAIN}f") is not None
                if formula and not cell.findtext(f"{_MAIN}v") and cell.get("t") != "str":
                    blank += 1
                cell.clear()
            if blank:
                counts[name] = blank
        return counts


def formula_warnings(path: Path) -> list[str]:
    """The warning for an XLSX's formula cells without a computed value, if it has any."""
    blank = uncached_formulas(path)
    if not blank:
        return []
    sheets = ", ".join(f"'{sheet}': {count}" for sheet, count in blank.items())
    return [
        f"{sum(blank.values())} formula cells without a computed value (sheet {sheets}) are indexed blank: "
        "the program that wrote the file did not calculate them; open and save it in Excel or LibreOffice"
    ]


def xlsx_sheets(path: Path) -> tuple[list[str], int]:
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


def docx_runs(path: Path) -> str:
    """The text of a DOCX's runs as written, whitespace included, paragraphs on lines of their own."""
    try:
        with zipfile.ZipFile(path) as package:
            xml = package.read("word/document.xml").decode("utf-8", errors="replace")
    except (zipfile.BadZipFile, KeyError):  # Docling says what is wrong with the file
        return ""
    runs = (m.group(1) if m.group(1) is not None else " " for m in _DOCX_TEXT.finditer(xml))
    return html.unescape("".join(runs))


def _sheet_parts(package: zipfile.ZipFile) -> dict[str, str]:
    """Sheet name -> its part in the package, from the workbook and its relationships."""
    names = set(package.namelist())
    if "xl/workbook.xml" not in names or "xl/_rels/workbook.xml.rels" not in names:
        return {}
    relationships = ElementTree.fromstring(package.read("xl/_rels/workbook.xml.rels"))
    targets = {rel.get("Id"): rel.get("Target", "") for rel in relationships}
    parts = {}
    for sheet in ElementTree.fromstring(package.read("xl/workbook.xml")).iter(f"{_MAIN}sheet"):
        target = targets.get(sheet.get(_REL_ID), "")
        absolute = target.startswith("/")
        part = target.lstrip("/") if absolute else posixpath.normpath(posixpath.join("xl", target))
        if part in names:
            parts[sheet.get("name", "")] = part
    return parts
