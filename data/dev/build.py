"""Write the dev corpus's Office files (DOCX, PPTX, XLSX) into data/dev/docs/.

    .venv/bin/python data/dev/build.py

The text formats (Markdown, plain text, HTML, CSV, JSON) are kept as written in docs/; only the
Office files need a writer. The DOCX and XLSX writers are the sample corpus's (data/sample/build.py);
their bytes are fixed. The PPTX is written here (its slides are not the sample's test-deck shape),
so its zip entry dates change on each run while its text does not.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("sample_build", HERE.parent / "sample" / "build.py")
sample = sys.modules["sample_build"] = importlib.util.module_from_spec(_spec)  # dataclasses look it up
_spec.loader.exec_module(sample)

KICKOFF = {
    "Attendees": ["Min-jun Park, Ji-woo Kim (Fjellhavn Risk Partners); the Tern Harbour Assurance "
                  "reserving and finance teams."],
    "Scope": ["Independent review of the claims reserves of Tern Harbour Assurance at 30 June 2024, "
              "lines motor, property and general liability."],
    "Timeline (provisional)": [
        "Claims data extract from the client by 20 September 2024.",
        "Reserving workshop with the client on 15 October 2024 in Oslo.",
        "Final report by 20 December 2024.",
    ],
    "Materiality": ["Provisional materiality threshold: EUR 2.0 million, to be confirmed by the "
                    "client's finance team."],
}

QUALITY_GUIDE = {
    "Peer review": [
        "Every engagement with a fee above EUR 100 thousand needs a second partner review before "
        "any deliverable leaves the firm.",
        "Draft reports are reviewed within 5 working days of submission to the reviewer.",
    ],
    "Documentation": [
        "Every reserving or pricing selection is documented with its rationale in the engagement "
        "file.",
        "Engagement files are closed within 30 days of the final deliverable.",
    ],
    "Client communication": ["A status note goes to the client every two weeks while an engagement "
                             "is open."],
}

DAY_RATES = [  # EUR per day, 2025
    ("Grade", "Oslo", "Hamburg", "Seoul"),
    ("Partner", 2600, 2450, 1900),
    ("Principal", 2100, 1980, 1550),
    ("Senior consultant", 1650, 1560, 1200),
    ("Consultant", 1250, 1180, None),
]

Q3_SLIDES = [
    ("Partner review Q3 2024", ["Fjellhavn Risk Partners", "Presented on 18 November 2024"], None),
    ("Office figures Q3 2024", [], [
        ("Office", "Headcount", "Utilisation", "Revenue (EUR thousand)"),
        ("Oslo", "16", "78%", "2,940"),
        ("Hamburg", "12", "71%", "2,115"),
        ("Seoul", "9", "74%", "1,380"),
    ]),
    ("Updates", [
        "The Seoul office move to Gangnam is postponed from March 2025 to June 2025, because the "
        "lease signing was delayed.",
        "New clients this quarter: Tern Harbour Assurance and Hanbit General Insurance.",
        "Utilisation target for 2025: 76% in every office.",
    ], None),
]


def write_slides(path: Path, slides: list[tuple[str, list[str], list[tuple[str, ...]] | None]]) -> None:
    """One slide per (title, bullet lines, optional table rows)."""
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    for title, lines, table in slides:
        slide = prs.slides.add_slide(prs.slide_layouts[5 if table else 1])
        slide.shapes.title.text = title
        if table:
            shape = slide.shapes.add_table(len(table), len(table[0]), Inches(0.5), Inches(1.8),
                                           Inches(9), Inches(0.4 * len(table)))
            for r, row in enumerate(table):
                for c, value in enumerate(row):
                    shape.table.cell(r, c).text = value
        else:
            slide.placeholders[1].text = "\n".join(lines)
    prs.save(path)


def build(folder: Path = HERE / "docs") -> list[Path]:
    paths = [folder / "kickoff-tern-harbour-2024-09-03.docx", folder / "engagement-quality-guide.docx",
             folder / "day-rates-2025.xlsx", folder / "partner-review-q3-2024.pptx"]
    sample.write_notes(paths[0], "Tern Harbour reserving review: kick-off meeting, 3 September 2024",
                       KICKOFF)
    sample.write_notes(paths[1], "Engagement Quality Guide", QUALITY_GUIDE)
    sample.write_xlsx(paths[2], {"Day rates 2025 (EUR)": DAY_RATES})
    write_slides(paths[3], Q3_SLIDES)
    return paths


if __name__ == "__main__":
    for path in build():
        print(path.relative_to(HERE))
