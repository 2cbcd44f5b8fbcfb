"""Checks of Office files (DOCX, PPTX, XLSX) that their readers do not make: an encrypted
package, an old binary file under a new name, and spreadsheet formulas without a computed value.

An encrypted OOXML file is no ZIP at all but an OLE2 compound file holding an
`EncryptedPackage` stream (MS-OFFCRYPTO), which Docling and openpyxl report as a corrupt ZIP.
"""

from __future__ import annotations

import posixpath
import zipfile
from pathlib import Path
from xml.etree import ElementTree

from ingestion.errors import DocumentLoadError

OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")  # a directory entry's name
_OLD_BINARY = {"docx": ".doc", "pptx": ".ppt", "xlsx": ".xls"}
_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"


def check_package(path: Path, fmt: str) -> None:
    """Refuse an encrypted Office file, or an old binary one named like a new one, in one line."""
    with path.open("rb") as handle:
        if handle.read(len(OLE2_MAGIC)) != OLE2_MAGIC:
            return
        if _ENCRYPTED_STREAM in handle.read():
            raise DocumentLoadError(f"password-protected {fmt.upper()}: save it without a password to ingest it")
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
                if cell.find(f"{_MAIN}f") is not None and not cell.findtext(f"{_MAIN}v") and cell.get("t") != "str":
                    blank += 1
                cell.clear()
            if blank:
                counts[name] = blank
        return counts


def _sheet_parts(package: zipfile.ZipFile) -> dict[str, str]:
    """Sheet name -> its part in the package, from the workbook and its relationships."""
    names = set(package.namelist())
    if "xl/workbook.xml" not in names or "xl/_rels/workbook.xml.rels" not in names:
        return {}
    targets = {rel.get("Id"): rel.get("Target", "") for rel in ElementTree.fromstring(package.read("xl/_rels/workbook.xml.rels"))}
    parts = {}
    for sheet in ElementTree.fromstring(package.read("xl/workbook.xml")).iter(f"{_MAIN}sheet"):
        target = targets.get(sheet.get(_REL_ID), "")
        part = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join("xl", target))
        if part in names:
            parts[sheet.get("name", "")] = part
    return parts
