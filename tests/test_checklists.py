"""A checklist kept as a numbered table ("No. | Check item | Pass criteria", a DOCX procedure's)
counted as a whole over a real store: its rows are named by the item column, not the running
number, and a second checklist of another length in another document is never the one counted."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import fresh_settings
from llama_index.core.llms import MockLLM
from llama_index.core.schema import QueryBundle

from ingestion.pipeline import ingest
from rag.cells import CellLookup
from rag.models import build_embedding
from rag.postprocessors import build_rerank_stage
from rag.retrieval import hybrid_retriever
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


@pytest.fixture(scope="module")
def ask(base_settings, tmp_path_factory):
    folder = tmp_path_factory.mktemp("checklists-docs")
    procedure_docx(folder / "PR-OPS-014 forklift pre-use check.docx",
                   "Forklift Truck Pre-Use Check Procedure", "2. Pre-use checklist", FORKLIFT)
    procedure_docx(folder / "PR-FLT-003 van walk-round check.docx",
                   "Delivery Van Walk-Round Check Procedure", "2. Walk-round checklist", VAN)
    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("checklists"))
    report = ingest([folder], settings, progress=False)
    assert report.indexed == 2 and not report.failed
    embedding = build_embedding(settings)
    retriever = hybrid_retriever(settings, embedding, MockLLM())  # the LLM is never called
    reranker = build_rerank_stage(settings, Store(settings), embedding)

    def answer(question: str):
        query = QueryBundle(question)
        found = reranker.postprocess_nodes(retriever.retrieve(query), query_bundle=query)
        return CellLookup.from_settings(settings, Store(settings)).answer(question, found)

    return answer


def test_a_numbered_checklist_counts_its_items(ask):
    forklift = ask("How many items are on the forklift pre-use checklist?")
    assert forklift.kind == "count" and "lists 9 Check items" in forklift.text
    assert {f.doc for f in forklift.facts} == {"PR-OPS-014 forklift pre-use check.docx"}
    van = ask("How many check items does the van walk-round checklist have?")
    assert van.kind == "count" and "lists 6 Check items" in van.text
