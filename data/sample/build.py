"""Build the demo corpus in data/sample/docs/ and its gold QA file, deterministically.

    .venv/bin/python data/sample/build.py

A small crash-safety programme in the spirit of the paper's automotive domain: test report
decks (PPTX) whose title slides carry Test Name / Region / State / Purpose, meeting notes
(DOCX), a textbook-style PDF with chapters and a table, sled measurements (CSV), test metadata
(JSON), a dummy inventory (XLSX), a lab guide (HTML), Markdown procedures and a Korean summary.
It contains a superseded value (SI-2024-03's B-pillar intrusion, superseded by the retest
SI-2024-05), a contradiction (the speed of FT-2024-07 in the deck and in the June notes), and
topics it does not cover (costs, rear impact results). `qa.jsonl` (beside this script) holds the
gold questions in the QA format of docs/FORMATS.md, with evidence locations. Running the script
twice gives identical files.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXED_TIME = (2024, 11, 1, 0, 0, 0)  # zip entry dates, so Office files are byte-identical


# ------------------------------------------------------------------------------ writers


def write_pdf(path: Path, pages: list[list[tuple[int, str]]], outline: list[tuple[str, int]] = (),
              password: str | None = None, metadata: dict[str, str] | None = None) -> Path:
    """A minimal PDF with a Helvetica text layer. `pages`: per page, (font size, line) pairs
    laid out top-down; `outline`: (title, page) bookmarks; optional password and metadata."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"]
    kids = []
    for lines in pages:
        y, ops = 760, []
        for size, text in lines:
            safe = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"BT /F1 {size} Tf 72 {y} Td ({safe}) Tj ET")
            y -= int(size * 1.6) + (12 if size > 12 else 0)
        stream = "\n".join(ops).encode("latin-1")
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 3 0 R >> >> >>" % len(objects)
        )
        kids.append(len(objects))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        " ".join(f"{k} 0 R" for k in kids).encode(), len(kids)
    )
    body, offsets = b"%PDF-1.4\n", []
    for number, obj in enumerate(objects, 1):
        offsets.append(len(body))
        body += b"%d 0 obj\n" % number + obj + b"\nendobj\n"
    xref = len(body)
    body += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    body += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    body += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(body)
    if outline or password or metadata:
        from pypdf import PdfReader, PdfWriter

        writer = PdfWriter(clone_from=PdfReader(path))
        for title, page in outline:
            writer.add_outline_item(title=title, page_number=page - 1)
        if metadata:
            writer.add_metadata({f"/{k}": v for k, v in metadata.items()})
        if password:
            writer.encrypt(password, algorithm="RC4-128")  # AES would need `cryptography`
        with path.open("wb") as handle:
            writer.write(handle)
    return path


def _freeze_zip(path: Path) -> None:
    """Rewrite an Office file with fixed entry dates and core properties: deterministic bytes."""
    with zipfile.ZipFile(path) as source:
        entries = [(info.filename, source.read(info.filename)) for info in source.infolist()]
    with zipfile.ZipFile(path, "w") as target:
        for name, data in entries:
            if name == "docProps/core.xml":  # openpyxl stamps the save time here
                data = re.sub(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*",
                              rb"\g<1>2024-11-01T00:00:00Z", data)
            info = zipfile.ZipInfo(name, FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(info, data)


@dataclass
class Deck:
    test: str
    region: str
    state: str
    purpose: str
    title: str
    setup: list[str]
    table: list[tuple[str, ...]]
    findings: list[str]


def write_deck(path: Path, deck: Deck) -> None:
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    prs.core_properties.title = deck.title
    slide = prs.slides.add_slide(prs.slide_layouts[0])
    slide.shapes.title.text = deck.title
    slide.placeholders[1].text = (
        f"Test Name: {deck.test}\nRegion: {deck.region}\nState: {deck.state}\nPurpose: {deck.purpose}"
    )
    slide = prs.slides.add_slide(prs.slide_layouts[1])
    slide.shapes.title.text = "Set-up"
    slide.placeholders[1].text = "\n".join(deck.setup)
    slide = prs.slides.add_slide(prs.slide_layouts[5])
    slide.shapes.title.text = "Results"
    rows, cols = len(deck.table), len(deck.table[0])
    table = slide.shapes.add_table(rows, cols, Inches(0.5), Inches(1.8), Inches(9), Inches(0.4 * rows)).table
    for r, row in enumerate(deck.table):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    slide = prs.slides.add_slide(prs.slide_layouts[1])
    slide.shapes.title.text = "Findings"
    slide.placeholders[1].text = "\n".join(deck.findings)
    _fix_core_dates(prs.core_properties)
    prs.save(path)
    _freeze_zip(path)


def _fix_core_dates(props) -> None:
    import datetime as dt

    moment = dt.datetime(*FIXED_TIME)
    props.created = props.modified = moment
    props.last_modified_by = props.author = "ragqa sample builder"
    props.revision = 1


def write_notes(path: Path, title: str, sections: dict[str, list[str]]) -> None:
    from docx import Document

    document = Document()
    document.core_properties.title = title
    document.add_heading(title, level=1)
    for heading, paragraphs in sections.items():
        document.add_heading(heading, level=2)
        for paragraph in paragraphs:
            document.add_paragraph(paragraph)
    _fix_core_dates(document.core_properties)
    document.save(path)
    _freeze_zip(path)


def write_xlsx(path: Path, sheets: dict[str, list[tuple]]) -> None:
    import openpyxl

    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(list(row))
    _fix_core_dates(workbook.properties)
    workbook.save(path)
    _freeze_zip(path)


# ------------------------------------------------------------------------------ content

DECKS = {
    "FT-2024-07.pptx": Deck(
        "FT-2024-07", "Europe", "Final",
        "Verify occupant protection of the Model K in a full-width frontal impact",
        "Frontal impact test FT-2024-07",
        ["Full-width rigid barrier at 56 km/h.", "Two Hybrid III 50th-percentile male dummies, belted.",
         "Run at the Aldenhoven proving ground on 12 July 2024."],
        [("Measurement", "Driver", "Passenger", "Limit"), ("HIC15", "412", "388", "700"),
         ("Chest deflection (mm)", "31", "28", "42"), ("Femur load (kN)", "3.1", "2.7", "9.07")],
        ["All values stayed below their limits.", "The steering column moved 38 mm rearward.",
         "The driver airbag deployed 14 ms after first contact."],
    ),
    "SI-2024-03.pptx": Deck(
        "SI-2024-03", "North America", "Superseded",
        "Check the B-pillar reinforcement against a moving deformable barrier",
        "Side impact test SI-2024-03",
        ["A 1,500 kg moving deformable barrier struck the driver side at 50 km/h.",
         "ES-2re dummy in the driver seat."],
        [("Measurement", "Value", "Target"), ("B-pillar intrusion (mm)", "142", "120"),
         ("Rib deflection (mm)", "38", "42"), ("Pelvis load (kN)", "2.9", "6.0")],
        ["The B-pillar intrusion missed the internal target.",
         "The reinforcement needs a thicker patch of press-hardened steel.",
         "A retest is planned as SI-2024-05."],
    ),
    "SI-2024-05.pptx": Deck(
        "SI-2024-05", "North America", "Final",
        "Retest of SI-2024-03 with the thicker press-hardened B-pillar patch",
        "Side impact retest SI-2024-05",
        ["Same barrier and speed as SI-2024-03: 1,500 kg at 50 km/h.", "Run on 24 September 2024."],
        [("Measurement", "Value", "Target"), ("B-pillar intrusion (mm)", "98", "120"),
         ("Rib deflection (mm)", "33", "42"), ("Pelvis load (kN)", "2.4", "6.0")],
        ["The B-pillar intrusion of 98 mm now meets the 120 mm target.",
         "This result supersedes SI-2024-03."],
    ),
    "RO-2024-02.pptx": Deck(
        "RO-2024-02", "Korea", "Final", "Roof strength of the Model K for the Korean market",
        "Roof crush test RO-2024-02",
        ["A rigid plate pressed the roof above the driver seat.", "Test run at the Hwaseong laboratory."],
        [("Measurement", "Value", "Requirement"), ("Peak force (kN)", "61.2", "49.5"),
         ("Strength-to-weight ratio", "4.1", "3.0")],
        ["The roof carried 4.1 times the vehicle weight before 127 mm of plate travel."],
    ),
    "PP-2024-01.pptx": Deck(
        "PP-2024-01", "Europe", "Draft", "Pedestrian head impact on the bonnet of the Model K",
        "Pedestrian protection test PP-2024-01",
        ["Adult headform impacts at 40 km/h on 24 bonnet points."],
        [("Zone", "Points", "Average HIC"), ("Green (HIC < 1000)", "17", "712"),
         ("Yellow (1000-1700)", "5", "1310"), ("Red (HIC > 1700)", "2", "1895")],
        ["Two points near the A-pillar base are red.", "The bonnet hinge needs a deformable bracket."],
    ),
}

NOTES = {
    "meeting-2024-06-14.docx": ("Safety board meeting, 14 June 2024", {
        "Attendees": ["Mina Park (chair), Jonas Weber, Luis Ortega, Aiko Tanaka."],
        "Decisions": ["The frontal test FT-2024-07 will be run at 64 km/h to match the new consumer rating.",
                      "Pedestrian protection testing starts in Q3 with PP-2024-01."],
        "Action items": ["Luis Ortega books the Aldenhoven barrier for July."],
    }),
    "meeting-2024-08-02.docx": ("Safety board meeting, 2 August 2024", {
        "Attendees": ["Mina Park (chair), Jonas Weber, Aiko Tanaka."],
        "Decisions": ["The side impact retest SI-2024-05 is moved to September 2024 "
                      "because the new B-pillar parts arrive late.",
                      "The frontal result FT-2024-07 is accepted; "
                      "no further frontal tests are planned this year.",
                      "Rear impact testing is out of scope for the Model K programme in 2024."],
        "Action items": ["Jonas Weber orders ten press-hardened B-pillar patches.",
                         "Aiko Tanaka prepares the retest plan."],
    }),
    "meeting-2024-10-11.docx": ("Safety board meeting, 11 October 2024", {
        "Attendees": ["Mina Park (chair), Luis Ortega, Aiko Tanaka, Dae-ho Kim."],
        "Decisions": ["SI-2024-05 closes the B-pillar topic; the patch goes into series production.",
                      "The bonnet hinge redesign for PP-2024-01 is assigned to the body team."],
        "Action items": ["Dae-ho Kim shares the RO-2024-02 report with the Korean certification office."],
    }),
}

TEXTBOOK = [  # (chapter title, page lines); the table sits in chapter 2
    ("Occupant injury criteria", [
        "The head injury criterion (HIC) rates head injury risk from the resultant head acceleration.",
        "HIC15 uses a 15 ms window; a value of 1000 means about an 18% chance of a severe injury.",
        "Chest deflection is measured with a rotary potentiometer in the dummy thorax.",
    ]),
    ("Regulatory limits", [
        "Table 2.1 lists the limits used by the Model K programme.",
        "Criterion | Frontal limit | Side limit",
        "HIC15 | 700 | 1000",
        "Chest deflection (mm) | 42 | 42",
        "Pelvis load (kN) | - | 6.0",
    ]),
    ("Test dummies", [
        "Hybrid III dummies are used in frontal tests.",
        "ES-2re and WorldSID dummies are used in side tests.",
        "Each dummy is recalibrated after 10 tests or after any damage.",
    ]),
]

SLED_ROWS = [(f"SL-{i:02d}", 40 + 2 * i, round(18.5 + 0.9 * i, 1), "pass" if i != 13 else "fail")
             for i in range(1, 21)]

METADATA = {
    "programme": {"name": "Model K crash programme", "year": 2024, "lead": "Mina Park"},
    "tests": [
        {"id": "FT-2024-07", "type": "frontal", "lab": "Aldenhoven", "date": "2024-07-12"},
        {"id": "SI-2024-03", "type": "side", "lab": "East Liberty", "date": "2024-05-20"},
        {"id": "SI-2024-05", "type": "side", "lab": "East Liberty", "date": "2024-09-24"},
        {"id": "RO-2024-02", "type": "roof", "lab": "Hwaseong", "date": "2024-08-28"},
        {"id": "PP-2024-01", "type": "pedestrian", "lab": "Aldenhoven", "date": "2024-09-05"},
    ],
}

INVENTORY = {"Dummies": [("Dummy", "Serial", "Tests since calibration"),
                         ("Hybrid III 50M", "H3-112", 4), ("Hybrid III 5F", "H3-207", 9),
                         ("ES-2re", "ES-031", 2), ("WorldSID 50M", "WS-015", 11)]}

LAB_GUIDE = """<html><head><title>Crash lab guide</title></head><body>
<h1>Crash lab guide</h1>
<h2>Access</h2><p>Only staff with the crash lab badge may enter the barrier hall during a test.</p>
<h2>Dummy handling</h2><p>Dummies are stored between 20 and 22 degrees Celsius \
for at least four hours before a test.</p>
<h2>Photography</h2><p>High-speed cameras record at 1,000 frames per second.</p>
</body></html>
"""

MARKDOWN = {
    "glossary.md": """---
Title: Crash safety glossary
---
# Crash safety glossary

## Moving deformable barrier
A trolley with a crushable aluminium honeycomb face that represents another car \
striking the side of the test vehicle.

## Pretensioner
A device that pulls the seat belt tight within milliseconds of a crash.

## Load limiter
A device that lets the belt pay out above a set force, about 4 kN, to protect the chest.
""",
    "test-procedure.md": """---
Title: Crash test procedure
---
# Crash test procedure

## Before the test
Check the dummy calibration record and the camera triggers. Weigh the vehicle with fluids filled.

## After the test
Photograph the vehicle from eight fixed positions, then measure the residual intrusion.

## Reporting
The report deck must carry Test Name, Region, State and Purpose on its title slide.
""",
    "programme-overview.md": """---
Title: Model K crash programme overview
---
# Model K crash programme overview

The Model K is a mid-size sedan. Its 2024 crash programme covers frontal, side, roof and
pedestrian tests in Europe, North America and Korea. Programme lead is Mina Park.
""",
}

KOREAN = """지붕 강도 시험 RO-2024-02 요약

화성 시험소에서 Model K의 지붕 강도를 시험했다. 최대 하중은 61.2 kN이었고 기준치는 49.5 kN이었다.

지붕은 판이 127 mm 이동하기 전까지 차량 중량의 4.1배를 견뎠다. 결과는 한국 인증 기관에 제출된다.
"""

# id, question, answer, answerable, evidence [(doc, page, slide, section, text)]
QA = [
    ("q01", "What HIC15 did the driver dummy reach in FT-2024-07?", "412",
     [("FT-2024-07.pptx", None, 3, None, "| HIC15 | 412 | 388 | 700 |")]),
    ("q02", "What was the passenger chest deflection in FT-2024-07?", "28 mm",
     [("FT-2024-07.pptx", None, 3, None, "| Chest deflection (mm) | 31 | 28 | 42 |")]),
    ("q03", "How long after first contact did the driver airbag deploy in FT-2024-07?", "14 ms",
     [("FT-2024-07.pptx", None, 4, None, "The driver airbag deployed 14 ms after first contact.")]),
    ("q04", "How far did the steering column move in FT-2024-07?", "38 mm rearward",
     [("FT-2024-07.pptx", None, 4, None, "The steering column moved 38 mm rearward.")]),
    ("q05", "Where was FT-2024-07 run?", "At the Aldenhoven proving ground",
     [("FT-2024-07.pptx", None, 2, None, "Run at the Aldenhoven proving ground")]),
    ("q06", "What is the purpose of test SI-2024-03?",
     "Check the B-pillar reinforcement against a moving deformable barrier",
     [("SI-2024-03.pptx", None, 1, None, "Purpose: Check the B-pillar reinforcement")]),
    ("q07", "What is the current B-pillar intrusion result of the Model K side impact test?",
     "98 mm in the retest SI-2024-05, which supersedes the 142 mm of SI-2024-03",
     [("SI-2024-05.pptx", None, 3, None, "| B-pillar intrusion (mm) | 98 | 120 |")]),
    ("q08", "What B-pillar intrusion did SI-2024-03 measure?", "142 mm",
     [("SI-2024-03.pptx", None, 3, None, "| B-pillar intrusion (mm) | 142 | 120 |")]),
    ("q09", "What is the internal target for B-pillar intrusion?", "120 mm",
     [("SI-2024-03.pptx", None, 3, None, "| B-pillar intrusion (mm) | 142 | 120 |")]),
    ("q10", "Which dummy sat in the driver seat in SI-2024-03?", "An ES-2re dummy",
     [("SI-2024-03.pptx", None, 2, None, "ES-2re dummy in the driver seat.")]),
    ("q11", "How heavy was the moving deformable barrier in the side impact tests?", "1,500 kg",
     [("SI-2024-03.pptx", None, 2, None, "A 1,500 kg moving deformable barrier")]),
    ("q12", "What rib deflection did SI-2024-05 measure?", "33 mm",
     [("SI-2024-05.pptx", None, 3, None, "| Rib deflection (mm) | 33 | 42 |")]),
    ("q13", "When was the side impact retest SI-2024-05 run?", "24 September 2024",
     [("SI-2024-05.pptx", None, 2, None, "Run on 24 September 2024.")]),
    ("q14", "Why was SI-2024-05 moved to September 2024?", "Because the new B-pillar parts arrived late",
     [("meeting-2024-08-02.docx", None, None, "Decisions", "because the new B-pillar parts arrive late")]),
    ("q15", "What peak force did the roof carry in RO-2024-02?", "61.2 kN",
     [("RO-2024-02.pptx", None, 3, None, "| Peak force (kN) | 61.2 | 49.5 |")]),
    ("q16", "What strength-to-weight ratio did the Model K roof reach?", "4.1",
     [("RO-2024-02.pptx", None, 3, None, "| Strength-to-weight ratio | 4.1 | 3.0 |")]),
    ("q17", "Which region is the roof crush test RO-2024-02 for?", "Korea",
     [("RO-2024-02.pptx", None, 1, None, "Region: Korea")]),
    ("q18", "How many bonnet points were red in PP-2024-01?", "2",
     [("PP-2024-01.pptx", None, 3, None, "| Red (HIC > 1700) | 2 | 1895 |")]),
    ("q19", "What design change does PP-2024-01 call for?", "A deformable bracket for the bonnet hinge",
     [("PP-2024-01.pptx", None, 4, None, "The bonnet hinge needs a deformable bracket.")]),
    ("q20", "At what speed did the headform hit the bonnet in PP-2024-01?", "40 km/h",
     [("PP-2024-01.pptx", None, 2, None, "Adult headform impacts at 40 km/h")]),
    ("q21", "What is the state of the pedestrian protection report PP-2024-01?", "Draft",
     [("PP-2024-01.pptx", None, 1, None, "State: Draft")]),
    ("q22", "At what speed was FT-2024-07 run?",
     "The deck reports 56 km/h; the June 2024 meeting notes planned 64 km/h",
     [("FT-2024-07.pptx", None, 2, None, "Full-width rigid barrier at 56 km/h."),
      ("meeting-2024-06-14.docx", None, None, "Decisions", "will be run at 64 km/h", False)]),
    ("q23", "Who chaired the safety board meeting of 2 August 2024?", "Mina Park",
     [("meeting-2024-08-02.docx", None, None, "Attendees", "Mina Park (chair)")]),
    ("q24", "Who orders the press-hardened B-pillar patches?", "Jonas Weber",
     [("meeting-2024-08-02.docx", None, None, "Action items",
       "Jonas Weber orders ten press-hardened B-pillar patches.")]),
    ("q25", "Is rear impact testing part of the Model K programme in 2024?", "No, it is out of scope in 2024",
     [("meeting-2024-08-02.docx", None, None, "Decisions", "Rear impact testing is out of scope")]),
    ("q26", "Who shares the RO-2024-02 report with the Korean certification office?", "Dae-ho Kim",
     [("meeting-2024-10-11.docx", None, None, "Action items", "Dae-ho Kim shares the RO-2024-02 report")]),
    ("q27", "What was decided about the B-pillar patch in October 2024?", "It goes into series production",
     [("meeting-2024-10-11.docx", None, None, "Decisions", "the patch goes into series production")]),
    ("q28", "What does a HIC15 value of 1000 mean?", "About an 18% chance of a severe head injury",
     [("crash-safety-fundamentals.pdf", 2, None, "Occupant injury criteria",
       "a value of 1000 means about an 18% chance")]),
    ("q29", "What is the HIC15 limit for side tests in the Model K programme?", "1000",
     [("crash-safety-fundamentals.pdf", 3, None, "Regulatory limits", "HIC15 | 700 | 1000")]),
    ("q30", "How often is a dummy recalibrated?", "After 10 tests or after any damage",
     [("crash-safety-fundamentals.pdf", 4, None, "Test dummies", "recalibrated after 10 tests")]),
    ("q31", "Which sled test failed?", "SL-13",
     [("sled-tests.csv", None, None, None, "| SL-13 | 66 | 30.2 | fail |")]),
    ("q32", "What peak deceleration did sled run SL-05 reach?", "23.0 g",
     [("sled-tests.csv", None, None, None, "| SL-05 | 50 | 23.0 | pass |")]),
    ("q33", "In which lab was RO-2024-02 run, and on what date?", "Hwaseong, 2024-08-28",
     [("test-metadata.json", None, None, "tests", "| RO-2024-02 | roof | Hwaseong | 2024-08-28 |")]),
    ("q34", "How many tests has the WorldSID dummy done since its last calibration?", "11",
     [("dummy-inventory.xlsx", None, None, "Dummies", "| WorldSID 50M | WS-015 | 11 |")]),
    ("q35", "How long must dummies be stored at 20 to 22 degrees before a test?", "At least four hours",
     [("lab-guide.html", None, None, "Dummy handling", "for at least four hours before a test")]),
    ("q36", "At what frame rate do the high-speed cameras record?", "1,000 frames per second",
     [("lab-guide.html", None, None, "Photography", "1,000 frames per second")]),
    ("q37", "What is a load limiter?",
     "A device that lets the belt pay out above about 4 kN to protect the chest",
     [("glossary.md", None, None, "Load limiter", "lets the belt pay out above a set force")]),
    ("q38", "What must a report deck carry on its title slide?", "Test Name, Region, State and Purpose",
     [("test-procedure.md", None, None, "Reporting", "Test Name, Region, State and Purpose")]),
    ("q39", "From how many positions is the vehicle photographed after a test?", "Eight",
     [("test-procedure.md", None, None, "After the test", "eight fixed positions")]),
    ("q40", "RO-2024-02 시험의 최대 하중은 얼마였습니까?", "61.2 kN",
     [("ro-2024-02-summary-ko.txt", None, None, None, "최대 하중은 61.2 kN")]),
    ("q41", "Which test results does the side retest replace, and which tests are planned after it?",
     "It supersedes SI-2024-03; the August notes plan no further frontal tests this year",
     [("SI-2024-05.pptx", None, 4, None, "This result supersedes SI-2024-03."),
      ("meeting-2024-08-02.docx", None, None, "Decisions",
       "no further frontal tests are planned this year", False)]),
    ("q42", "How much did the Model K crash programme cost?", None, []),
    ("q43", "What were the results of the Model K rear impact test?", None, []),
    ("q44", "Who is the programme lead of the Model K crash programme?", "Mina Park",
     [("programme-overview.md", None, None, None, "Programme lead is Mina Park.")]),
    ("q45", "Which airbag supplier does the Model K use?", None, []),
]


def build(folder: Path = HERE / "docs", qa_file: Path = HERE / "qa.jsonl") -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, deck in DECKS.items():
        write_deck(folder / name, deck)
        written.append(folder / name)
    for name, (title, sections) in NOTES.items():
        write_notes(folder / name, title, sections)
        written.append(folder / name)
    pages = [[(20, "Crash Safety Fundamentals"),
              (11, "A short textbook for new staff of the Model K programme.")]]
    outline = []
    for number, (chapter, lines) in enumerate(TEXTBOOK, 1):
        pages.append([(16, f"{number} {chapter}")] + [(11, line) for line in lines])
        outline.append((chapter, number + 1))
    written.append(write_pdf(folder / "crash-safety-fundamentals.pdf", pages, outline,
                             metadata={"Title": "Crash Safety Fundamentals"}))
    sled = folder / "sled-tests.csv"
    rows = "".join(f"{r},{s},{d:.1f},{v}\n" for r, s, d, v in SLED_ROWS)
    sled.write_text("run,speed_kmh,peak_decel_g,result\n" + rows, encoding="utf-8")
    meta = folder / "test-metadata.json"
    meta.write_text(json.dumps(METADATA, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    write_xlsx(folder / "dummy-inventory.xlsx", INVENTORY)
    (folder / "lab-guide.html").write_text(LAB_GUIDE, encoding="utf-8")
    for name, text in MARKDOWN.items():
        (folder / name).write_text(text, encoding="utf-8")
        written.append(folder / name)
    (folder / "ro-2024-02-summary-ko.txt").write_text(KOREAN, encoding="utf-8")
    written += [sled, meta, folder / "dummy-inventory.xlsx", folder / "lab-guide.html",
                folder / "ro-2024-02-summary-ko.txt"]
    with qa_file.open("w", encoding="utf-8") as out:
        for qid, question, answer, evidence in QA:
            items = []
            for doc, page, slide, section, text, *required in evidence:
                item = {"doc": doc, "text": text, "chunk_id": None,
                        "required": required[0] if required else True}
                locations = (("page", page), ("slide", slide), ("section", section))
                item |= {k: v for k, v in locations if v is not None}
                items.append(item)
            record = {"id": qid, "question": question, "answer": answer,
                      "answerable": answer is not None, "evidence": items}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return written


if __name__ == "__main__":
    for path in build():
        print(path.relative_to(HERE))
    print(f"qa.jsonl: {len(QA)} questions")
