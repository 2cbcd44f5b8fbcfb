"""A checklist counted as a whole over a real store, kept as a numbered table ("No. | Check item |
Pass criteria", a DOCX procedure's: its rows named by the item column, not the running number) or
as a bulleted list under its heading (rag/list_count.py); a second checklist of another length, in
another document or under the next heading, is never the one counted, and a site's bullet points
are no list of what the question counts."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import fresh_settings, ranking

from ingestion.pipeline import ingest
from rag.cells import CellLookup
from rag.store import Store

FORKLIFT = ["Tyres and wheels", "Forks and carriage", "Mast and chains", "Hydraulic system", "Brakes",
            "Steering", "Horn and lights", "Seat belt", "Battery or LPG cylinder"]
VAN = ["Mirrors", "Tyres", "Lights and indicators", "Wipers and washers", "Fuel level", "Load secured"]


def procedure_docx(path: Path, title: str, heading: str, items: list[str]) -> Path:
    from docx import Document

    document = Document()
    document.add_heading(title, level=1)
    document.add_heading("1. Purpose", level=2)
    document.add_paragraph("To make sure every vehicle is safe to use before each shift.")
    document.add_heading(heading, level=2)
    table = document.add_table(rows=1, cols=3)
    for cell, text in zip(table.rows[0].cells, ("No.", "Check item", "Pass criteria")):
        cell.text = text
    for number, item in enumerate(items, 1):
        for cell, text in zip(table.add_row().cells, (str(number), item, "No damage; working")):
            cell.text = text
    document.add_heading("3. Records", level=2)
    document.add_paragraph("Completed check sheets are kept for 12 months.")
    document.save(path)
    return path


STEPS = ["Confirm the oven recipe name matches the routing card.", "Check the conveyor width.",
         "Verify the nitrogen flow.", "Inspect the profiler thermocouples.", "Attach the thermocouples.",
         "Let the oven stabilise for 20 minutes.", "Run the profile board.", "Compare with Table 1.",
         "Obtain sign-off before release."]


def lists_docx(path: Path) -> Path:
    from docx import Document

    document = Document()
    document.add_heading("Reflow Profile Verification Procedure", level=1)
    document.add_heading("4. Pre-run checklist", level=2)
    document.add_paragraph("Complete every step below before releasing the oven:")
    for step in STEPS:
        document.add_paragraph(step, style="List Bullet")
    document.add_heading("5. Post-run actions", level=2)
    for action in ("Store the profile file.", "Increment the run counter.", "Return the profile board."):
        document.add_paragraph(action, style="List Bullet")
    document.add_heading("6. Derby", level=2)
    for note in ("Two near misses were reported on line 2.", "The oven on line 2 is due for replacement."):
        document.add_paragraph(note, style="List Bullet")
    document.save(path)
    return path


@pytest.fixture(scope="module")
def ask(base_settings, tmp_path_factory):
    folder = tmp_path_factory.mktemp("checklists-docs")
    procedure_docx(folder / "PR-OPS-014 forklift pre-use check.docx",
                   "Forklift Truck Pre-Use Check Procedure", "2. Pre-use checklist", FORKLIFT)
    procedure_docx(folder / "PR-FLT-003 van walk-round check.docx",
                   "Delivery Van Walk-Round Check Procedure", "2. Walk-round checklist", VAN)
    lists_docx(folder / "PR-SMT-022 reflow profile verification.docx")
    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("checklists"))
    report = ingest([folder], settings, progress=False)
    assert report.indexed == 3 and not report.failed
    rank = ranking(settings)

    def answer(question: str):
        return CellLookup.from_settings(settings, Store(settings)).answer(question, rank(question)[1])

    return answer


def test_a_numbered_checklist_counts_its_items(ask):
    forklift = ask("How many items are on the forklift pre-use checklist?")
    assert forklift.kind == "count" and "lists 9 Check items" in forklift.text
    assert {f.doc for f in forklift.facts} == {"PR-OPS-014 forklift pre-use check.docx"}
    van = ask("How many check items does the van walk-round checklist have?")
    assert van.kind == "count" and "lists 6 Check items" in van.text


def test_a_bulleted_list_under_its_heading_counts_its_items(ask):
    steps = ask("How many steps are there in the pre-run checklist of the reflow profile verification?")
    assert steps.kind == "count" and "Pre-run checklist lists 9 steps" in steps.text
    assert [f.value for f in steps.facts] == STEPS
    assert {f.doc for f in steps.facts} == {"PR-SMT-022 reflow profile verification.docx"}
    # Derby's bullet points are no list of near misses
    assert ask("How many near misses were reported at Derby?") is None
