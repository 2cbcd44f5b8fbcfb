"""Conversion defects of issues 28 and 29: file names Docling refused, inline formatting that split
paragraphs into one-word lines, text encodings guessed wrong or not at all, encrypted Office
files, and spreadsheet formulas indexed blank without a word."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from conftest import fresh_settings
from documents import encrypted_office

from ingestion.convert import convert
from ingestion.document import DocumentLoadError
from rag.settings import IngestSettings

CFG = IngestSettings()


def text_of(path: Path) -> str:
    return convert(path, path.name, CFG).markdown


def test_dot_names_and_markup_in_names_are_indexed_under_their_own_name(base_settings, tmp_path):
    """Docling took "....x.md" and ".hidden.md" for names without an extension and refused them
    ("corrupt or unreadable MD"); a file given by name is indexed under that name."""
    from ingestion.pipeline import ingest

    names = ["....x.md", ".hidden.md", "<svg onload=alert(1)>.md"]
    files = [tmp_path / name for name in names]
    for number, file in enumerate(files, 1):
        file.write_text(f"# Door check\n\nDoor {number} needed 41 seconds to close.\n", encoding="utf-8")
    report = ingest(files, fresh_settings(base_settings, tmp_path / "storage"), progress=False)
    assert report.failed == [] and report.indexed == 3
    assert sorted(report.doc_ids.values()) == sorted(names)


MARKDOWN = """# Guide with **bold** words

See **the manual** or [the guide](http://intranet/guide) for *more* details on `ragqa ask`, then
continue. **굵게**는 조사와 붙는다. Read [this](http://x/then) then go.

## Setup of [the lab](lab.html)

- a **bold** item, with a [link](x.html).
  - a nested *item*

| cell | with **bold** |
|---|---|
| x | y |
"""


def test_inline_formatting_stays_in_its_paragraphs_line(tmp_path):
    """Docling makes each bold or linked run a text item of its own: stored as "See / the manual /
    or", headings and list items empty, a table's cells repeated after it. A run takes a space
    only where the file has one (a Korean particle after a bold word belongs to it)."""
    note = tmp_path / "guide.md"
    note.write_text(MARKDOWN, encoding="utf-8")
    document = convert(note, "guide.md", CFG)
    texts = [b.text for b in document.blocks]
    assert texts[:3] == [
        "# Guide with bold words",
        "See the manual or the guide for more details on ragqa ask, then continue. 굵게는 조사와 붙는다. "
        "Read this then go.",
        "## Setup of the lab",
    ], texts
    assert texts[3:5] == ["- a bold item, with a link.", "- a nested item"], texts
    assert [b.kind for b in document.blocks][5:] == ["table"], texts  # its cells once, in the table
    assert document.blocks[1].section == ("Guide with bold words",)

    page = tmp_path / "guide.html"
    page.write_text("<html><body><h1>Lab <em>guide</em></h1><p>See <b>the manual</b>, or "
                    "<a href='x' title='a b'>the guide</a>! <b>굵게</b>는 붙는다; AT&amp;T <i>too</i>.</p>"
                    "<ul><li>an <b>item</b></li></ul></body></html>", encoding="utf-8")
    assert text_of(page) == ("# Lab guide\n\nSee the manual, or the guide! 굵게는 붙는다; AT&T too."
                             "\n\n- an item")


def test_a_markdown_header_of_fields_on_hard_breaks_is_a_paragraph_each(tmp_path):
    """"**Version:** 2.0  " over "**Effective date:** 1 March 2024  ": Docling would join the lines
    into one run-on paragraph; each field is its own, and a code block keeps its lines."""
    policy = tmp_path / "policy.md"
    policy.write_text("# ESD Control Policy\n\n**Document:** POL-QA-004  \n**Version:** 2.0  \n"
                      "**Effective date:** 1 March 2024\n\n```\nkeep  \nthese\n```\n", encoding="utf-8")
    texts = [b.text for b in convert(policy, "policy.md", CFG).blocks]
    assert texts[1:4] == ["Document: POL-QA-004", "Version: 2.0", "Effective date: 1 March 2024"], texts


def test_docx_runs_are_joined_as_written(tmp_path):
    from docx import Document

    document = Document()
    paragraph = document.add_paragraph("See ")
    paragraph.add_run("the manual").bold = True
    paragraph.add_run(", then ")
    paragraph.add_run("굵게").bold = True
    paragraph.add_run("는 붙는다.")
    document.save(tmp_path / "runs.docx")
    assert text_of(tmp_path / "runs.docx") == "See the manual, then 굵게는 붙는다."


def test_html_is_read_in_its_declared_charset(tmp_path):
    """A Shift_JIS page's title came out as "���{��"; a page declaring latin-1 is read as
    windows-1252, as browsers read it (the euro sign is 0x80 there)."""
    page = tmp_path / "sjis.html"
    page.write_bytes('<html><head><meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'
                     "<title>日本語の報告書</title></head><body><p>衝突試験は<b>合格</b>でした。</p></body></html>"
                     .encode("shift_jis"))
    document = convert(page, "sjis.html", CFG)
    assert document.fields == {"Title": "日本語の報告書"}
    assert document.markdown == "衝突試験は合格でした。"
    latin = tmp_path / "latin.html"
    latin.write_bytes(('<html><head><meta charset="iso-8859-1"></head>'
                       '<body><p>Café crème: 5 €</p></body></html>').encode("cp1252"))
    assert text_of(latin) == "Café crème: 5 €"


@pytest.mark.parametrize(
    "name, content, reason",
    [
        # Named "cp1250" before: both read the bytes, cp1250 as "crčme brűlée".
        ("latin.html", "<p>Café crème brûlée, déjà servie à midi.</p>".encode("latin-1"),
         "not UTF-8 text (looks like latin-1 (cp1252)), invalid byte at offset 6: save it as UTF-8"),
        ("latin.txt", "Café crème brûlée, déjà servie à midi.".encode("latin-1"),
         "looks like latin-1 (cp1252)"),
        ("czech.txt", "Příliš žluťoučký kůň úpěl ďábelské ódy.".encode("cp1250"), "looks like cp1250"),
        ("korean.md", "충돌 시험 보고서: 측면 충돌 시험에서 B필러는 142 mm 침입했다.".encode("cp949"),
         "looks like EUC-KR (cp949)"),
        ("wrong.html", '<meta charset="utf-8"><p>Caf\xe9</p>'.encode("latin-1"),
         "not valid utf-8 text, as the page declares, at byte 28"),
        ("unknown.html", b'<meta charset="klingon"><p>x</p>', "declares an unknown charset 'klingon'"),
        ("binary.txt", b"\x00\x01\x02\x03\x00\x00\x10\x00\xff" * 10, "not UTF-8 text"),
    ],
)
def test_text_in_another_encoding_is_refused_naming_it(tmp_path, name, content, reason):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(DocumentLoadError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        convert(path, name, CFG)


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("text", ["Door 3 needed 41 seconds to close.\n\nAll other doors closed in time.",
                                  "Door 3 needed 41 seconds to close.\n\n"
                                  "측면 충돌 시험에서 B필러는 142 mm 침입했다."])
def test_utf16_without_a_byte_order_mark_is_read(tmp_path, codec, text):
    """Refused before as "binary content in a text file" (English: its zero bytes are valid UTF-8)
    or as not UTF-8: those zero bytes say what it is."""
    for name in ("notes.txt", "notes.md"):
        (tmp_path / name).write_bytes(text.encode(codec))
        read = text_of(tmp_path / name)
        assert all(paragraph in read for paragraph in text.split("\n\n")), read


@pytest.mark.parametrize("suffix", [".docx", ".pptx", ".xlsx"])
def test_a_password_protected_office_file_says_so(tmp_path, suffix):
    """Refused as "corrupt or unreadable DOCX (File is not a zip file)" before."""
    path = encrypted_office(tmp_path / f"locked{suffix}")
    kind = suffix[1:].upper()
    with pytest.raises(DocumentLoadError, match=f"^password-protected {kind}: save it without a password"):
        convert(path, path.name, CFG)


def test_formula_cells_without_a_computed_value_are_named(tmp_path, caplog):
    """openpyxl writes formulas without their values, as many exporters do: Docling reads blank
    cells, and nothing said so."""
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Totals"
    sheet.append(["Run", "Energy (kJ)"])
    sheet.append(["S-01", 12])
    sheet.append(["S-02", 14])
    sheet.append(["Sum", "=SUM(B2:B3)"])
    sheet.append(["Mean", "=AVERAGE(B2:B3)"])
    workbook.create_sheet("Notes").append(["Checked by the lab."])
    workbook.save(tmp_path / "energy.xlsx")
    with caplog.at_level(logging.WARNING, logger="ingestion.convert"):
        document = convert(tmp_path / "energy.xlsx", "energy.xlsx", CFG)
    assert document.warnings == [
        "2 formula cells without a computed value (sheet 'Totals': 2) are indexed blank: the program that "
        "wrote the file did not calculate them; open and save it in Excel or LibreOffice"
    ]
    assert f"energy.xlsx: {document.warnings[0]}" in caplog.messages
    assert "S-02" in document.markdown  # the rest is indexed


def test_a_sheets_totals_below_a_blank_row_are_rows_of_its_table(tmp_path):
    """Docling reads a block below a blank row as a table of its own, headed by its first data
    row; its rows continue the table above (a table of words below one stays its own)."""
    import openpyxl
    from llama_index.core.schema import TextNode

    from rag.facts import facts_of
    from rag.text import markdown_tables

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Fuel"
    for row in (["Month", "Depot", "Diesel (litres)"], ["2024-04", "LDS", 41207], ["2024-04", "BRS", 38810],
                [None], ["FY total", "LDS", 502110], ["FY total", "BRS", 461900],
                [None], ["Depot", "Manager", "Phone"], ["LDS", "R. Hale", "0113 496 0000"]):
        sheet.append(row)
    workbook.save(tmp_path / "fuel.xlsx")
    document = convert(tmp_path / "fuel.xlsx", "fuel.xlsx", CFG)
    tables = markdown_tables(document.markdown)
    assert [list(header) for header, _ in tables] == [["Month", "Depot", "Diesel (litres)"],
                                                      ["Depot", "Manager", "Phone"]]
    assert [list(row[:2]) for row in tables[0][1]][-2:] == [["FY total", "LDS"], ["FY total", "BRS"]]
    node = TextNode(text=document.markdown, metadata={"doc": "fuel.xlsx"})
    cells = {(f.row, f.column): f.value for f in facts_of(node)}
    assert cells[("FY total BRS", "Diesel (litres)")] == "461900"


def test_json_records_and_chart_data_share_one_table_writer(tmp_path):
    """A `|` in a JSON record's key or value is escaped, as in a chart's cells."""
    import json

    path = tmp_path / "rows.json"
    path.write_text(json.dumps([{"a|b": "x|y", "n": 1}, {"n": 2}]), encoding="utf-8")
    assert text_of(path) == "| a\\|b | n |\n|---|---|\n| x\\|y | 1 |\n|  | 2 |"
