"""Small real documents of every format, written at test time (no binaries in the repo).

Office files come from python-pptx, python-docx and openpyxl; PDFs from the sample corpus
builder's minimal PDF writer (a Helvetica text layer, outline and password through pypdf).
"""

from __future__ import annotations

import json
from pathlib import Path

from data.sample.build import write_pdf


def crash_report_pdf(path: Path) -> Path:
    """Three pages, two chapters in the outline, a section on page 3."""
    return write_pdf(
        path,
        [
            [(20, "Crash Safety Handbook"), (11, "Internal training material, edition 2024.")],
            [(16, "1 Restraint systems"),
             (11, "Seat belts with pretensioners remove slack within 10 ms of a crash."),
             (11, "Load limiters cap the belt force at about 4 kN to protect the chest.")],
            [(16, "2 Airbags"),
             (11, "The driver airbag fills in about 30 ms and vents through two holes."),
             (14, "2.1 Side airbags"),
             (11, "Curtain airbags protect the head in a side impact and a rollover.")],
        ],
        outline=[("Restraint systems", 2), ("Airbags", 3)],
        metadata={"Title": "Crash Safety Handbook"},
    )


def results_table_pdf(path: Path) -> Path:
    """A report page whose table has no grid lines (fpdf2 text set in columns): a paragraph,
    the table (one cell wrapping onto a second line, figures set right of their headers) and a
    paragraph after it."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    pdf.multi_cell(0, 5, "Sled results of the 2024 programme are given below; limits are those of Table 2.1.")
    pdf.ln(4)
    rows = [("Test", "Dummy", "HIC15", "Chest (mm)"), ("SL-01", "Hybrid III", "412", "31"),
            ("SL-02", "Hybrid III", "468", "36"), ("SL-03", "WorldSID", "", "29")]
    for number, row in enumerate(rows):
        for x, text in zip((20, 55, 100, 130), row):
            pdf.set_xy(x, pdf.get_y())
            # Headers set from the left, figures to the right: their x ranges do not meet.
            pdf.cell(30, 6, text, align="R" if number and x >= 100 else "L")
        pdf.ln(6)
        if row[0] == "SL-02":  # the dummy cell wraps onto a second line
            pdf.set_xy(55, pdf.get_y())
            pdf.cell(30, 5, "50th percentile")
            pdf.ln(5)
    pdf.ln(4)
    pdf.multi_cell(0, 5, "Each dummy was recalibrated after 10 tests. The side test SL-03 gives no HIC15.")
    pdf.output(str(path))
    return path


def audit_scores_pdf(path: Path) -> Path:
    """An audit's score table whose header cells run over two lines ("Allergen" over
    "management") beside one-line headers set between them, and a date cell wrapped under its
    row ("20 Aug" over "2024"), the rows a cell's padding apart, as reportlab sets them."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=9)
    pdf.multi_cell(0, 5, "Scores of the Q3 2024 kitchen audits, each section out of 100, are below.")
    top = pdf.get_y() + 6
    columns = (20, 45, 80, 115, 150)
    # the header: two-line cells around one-line cells set at their middle
    for x, (upper, lower) in zip(columns, (("Site", ""), ("Audit date", ""), ("Allergen", "management"),
                                          ("Pest", "control"), ("Overall", ""))):
        if lower:
            pdf.text(x, top, upper)
            pdf.text(x, top + 3.6, lower)
        else:
            pdf.text(x, top + 1.8, upper)
    rows = [("OXF", ("12 Aug 2024",), "94", "98", "95.0"), ("CAM", ("20 Aug", "2024"), "88", "90", "80.8"),
            ("BTH", ("3 Sep 2024",), "91", "", "91.5"), ("YRK", ("5 Sep 2024",), "93", "96", "93.7"),
            ("DUR", ("9 Sep 2024",), "90", "94", "90.2"), ("EXE", ("17 Sep 2024",), "89", "97", "92.4")]
    y = top + 9
    for site, date, allergen, pest, overall in rows:
        for x, text in zip(columns, (site, None, allergen, pest, overall)):
            if text is None:
                for i, part in enumerate(date):  # a wrapped date's next line under its row's line
                    pdf.text(x, y + i * 3.6, part)
            elif text:
                pdf.text(x, y, text)
        y += 9
    pdf.set_xy(10, y)
    pdf.multi_cell(0, 5, "Pest control at BTH was not scored in this round.")
    pdf.output(str(path))
    return path


def energy_report_folder(folder: Path) -> Path:
    """A hospital group's energy report as a text PDF whose two tables have no grid lines and
    give sites by code (figures set right of their headers), a site register spelling the codes out,
    and the erratum correcting a cell of each table by the sites' full names."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=16)
    pdf.cell(0, 10, "Energy Report 2024-25", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=10)
    energy = [("Site", "Electricity (MWh)", "Gas (MWh)", "Water (m3)"),
              ("NGH", "18,420", "31,650", "142,300"), ("RVH", "4,390", "6,980", "28,450"),
              ("Total", "22,810", "38,630", "170,750")]
    service = [("Site", "Reactive within target", "Calls answered"), ("NGH", "86.7%", "80.1%"),
               ("RVH", "91.2%", "84.0%")]
    tables = [("Table 1: Energy and utilities 2024-25", energy),
              ("Table 2: Service performance 2024-25", service)]
    for caption, rows in tables:
        pdf.ln(6)
        pdf.multi_cell(0, 5, caption)
        pdf.ln(2)
        for number, row in enumerate(rows):
            for x, text in zip((20, 60, 100, 140), row):
                pdf.set_xy(x, pdf.get_y())
                pdf.cell(34, 6, text, align="R" if number and x > 20 else "L")
            pdf.ln(6)
    pdf.output(str(folder / "energy_report.pdf"))
    (folder / "site_register.csv").write_text(  # the codes spelled out by a register, not in brackets
        "site_code,site_name,beds\nNGH,Northgate General Hospital,612\nRVH,Riverside Hospital,288\n"
        "HLC,Hillcrest Community Clinic,0\n", encoding="utf-8")
    (folder / "energy_report_erratum.txt").write_text(
        "ERRATUM\n\nReport: Energy Report 2024-25 (published 15 July 2025)\nIssued: 2 September 2025\n\n"
        "1. Table 1, Northgate General Hospital, electricity consumption 2024-25.\n"
        "   Published value: 18,420 MWh\n   Corrected value: 16,840 MWh\n"
        "   As a consequence, the total electricity for 2024-25 changes from 22,810 MWh to a\n"
        "   corrected value of 21,230 MWh.\n\n"
        "2. Table 2, Riverside Hospital: reactive jobs completed within target in 2024 were printed as "
        "91.2%. The correct figure is 87.9%.\n", encoding="utf-8")
    return folder


def crash_deck_pptx(path: Path) -> Path:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    title = deck.slides.add_slide(deck.slide_layouts[0])
    title.shapes.title.text = "Frontal impact test FT-2024-09"
    title.placeholders[1].text = ("Test Name: FT-2024-09\nRegion: Europe\nState: Final\n"
                                  "Purpose: Check the new bumper beam")
    results = deck.slides.add_slide(deck.slide_layouts[5])
    results.shapes.title.text = "Results"
    rows = [("Measurement", "Driver", "Limit"), ("HIC15", "455", "700"),
            ("Chest deflection (mm)", "33", "42")]
    table = results.shapes.add_table(len(rows), 3, Inches(1), Inches(2), Inches(8), Inches(2)).table
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    findings = deck.slides.add_slide(deck.slide_layouts[1])
    findings.shapes.title.text = "Findings"
    findings.placeholders[1].text = "The new bumper beam absorbed 12% more energy than the old one."
    deck.save(path)
    return path


def meeting_docx(path: Path) -> Path:
    from docx import Document

    document = Document()
    document.add_heading("Safety board meeting", level=1)
    document.add_heading("Decisions", level=2)
    document.add_paragraph("The board approved the bumper beam for series production.")
    document.add_heading("Open points", level=2)
    document.add_paragraph("Supplier audit of the airbag inflators is due in March.")
    document.save(path)
    return path


def measurements_xlsx(path: Path) -> Path:
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Sled tests"
    sheet.append(["Run", "Speed (km/h)", "Peak deceleration (g)"])
    for run in range(1, 6):
        sheet.append([f"S-{run:02d}", 48 + run, 20 + run * 2])
    workbook.save(path)
    return path


def long_csv(path: Path, rows: int = 60) -> Path:
    lines = ["run,speed_kmh,hic15,result"]
    lines += [f"R-{i:03d},{40 + i % 30},{300 + 7 * i},{'pass' if i % 7 else 'fail'}" for i in range(rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def programme_json(path: Path) -> Path:
    data = {"programme": {"name": "Model K", "year": 2024},
            "tests": [{"id": "FT-2024-07", "type": "frontal", "speed_kmh": 56},
                      {"id": "SI-2024-03", "type": "side", "speed_kmh": 50}]}
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def guide_html(path: Path) -> Path:
    path.write_text(
        "<html><head><title>Lab guide</title></head><body><h1>Lab guide</h1>"
        "<h2>Dummy storage</h2><p>Dummies are stored at 20 to 22 degrees Celsius.</p>"
        "<h2>Calibration</h2><p>Each dummy is calibrated every 10 tests.</p></body></html>",
        encoding="utf-8",
    )
    return path


KOREAN = "충돌 시험 보고서\n\n측면 충돌 시험에서 B필러는 142 mm 침입했다. 목표치는 120 mm였다."


def all_formats(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "korean.txt").write_text(KOREAN, encoding="utf-8")
    return {
        "pdf": crash_report_pdf(folder / "handbook.pdf"),
        "pptx": crash_deck_pptx(folder / "FT-2024-09 deck.pptx"),
        "docx": meeting_docx(folder / "board.docx"),
        "xlsx": measurements_xlsx(folder / "sled.xlsx"),
        "csv": long_csv(folder / "runs.csv"),
        "json": programme_json(folder / "programme.json"),
        "html": guide_html(folder / "guide.html"),
        "txt": folder / "korean.txt",
    }


def encrypted_office(path: Path) -> Path:
    """An Office file saved with a password, as Office writes one (MS-OFFCRYPTO): no ZIP but an
    OLE2 compound file whose streams are `EncryptionInfo` and `EncryptedPackage` (their contents
    here random, the container real: 512-byte sectors, one FAT sector, one directory sector)."""
    import os
    import struct

    end, free, fat_sector = 0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFD
    streams = [("EncryptionInfo", os.urandom(4096)), ("EncryptedPackage", os.urandom(8192))]
    fat, data, first = [fat_sector, end], b"", []  # sector 0: the FAT, 1: the directory
    for _name, content in streams:
        first.append(len(fat))
        count = len(content) // 512
        fat += [len(fat) + i + 1 for i in range(count - 1)] + [end]
        data += content
    fat += [free] * (128 - len(fat))

    def entry(name: str, kind: int, child: int, right: int, start: int, size: int) -> bytes:
        encoded = name.encode("utf-16-le") + b"\0\0"
        return (encoded.ljust(64, b"\0") + struct.pack("<HBB", len(encoded), kind, 1)
                + struct.pack("<III", free, right, child) + bytes(16 + 4 + 16)
                + struct.pack("<IQ", start, size))

    directory = (entry("Root Entry", 5, 1, free, end, 0)
                 + entry(streams[0][0], 2, free, 2, first[0], len(streams[0][1]))
                 + entry(streams[1][0], 2, free, free, first[1], len(streams[1][1]))).ljust(512, b"\0")
    header = (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(16) + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6)
              + bytes(6) + struct.pack("<IIIIIIIII", 0, 1, 1, 0, 4096, end, 0, end, 0)
              + struct.pack("<I", 0) + struct.pack("<108I", *[free] * 108))
    path.write_bytes(header + struct.pack("<128I", *fat) + directory + data)
    return path
