"""Cells reached through another register's row (rag/table_joins.py `through`). A row named by a
person, whose own label labels another table's rows: "the plant Priya Ramanathan runs" is the
site register's TLF, and the quality report's TLF row gives its 2023 first-pass yield, also where
the ranker put the site register out of the candidates (the pipeline's retrieved chunks,
`beyond`); Derby's row holds the same columns, and the 2022 column sits beside 2023's. A JSON work
order's nested technician id reaches the training register's rows holding it under the same key,
one per certificate: the one the question names."""

from __future__ import annotations

import json

import pytest
from conftest import fresh_settings, ranking

from ingestion.pipeline import ingest
from rag.cells import CellLookup
from rag.store import Store

SITES = ("site_code,site_name,site_manager,headcount\nDBY,Derby,Gareth Ollerenshaw,310\n"
         "TLF,Telford,Priya Ramanathan,240\nLNC,Lancaster,Marcus Hale,185\n")
REPORT = """# Annual Quality Report 2023

## Key indicators by site

| Site | FPY 2022 | FPY 2023 | Returns 2023 |
|---|---|---|---|
| DBY | 95.8% | 96.1% | 26 |
| TLF | 96.9% | 97.4% | 23 |
| LNC | 96.2% | 96.5% | 12 |

## Commentary

Telford's first-pass yield improved despite a new medical product family on line 2.
"""
QUESTION = "What was the 2023 FPY at the plant Priya Ramanathan runs?"
WORK_ORDERS = {"work_orders": [
    {"work_order": "WO-24-0187", "site_code": "TLF",
     "technician": {"name": "Dev Chauhan", "employee_id": "T-0418"}},
    {"work_order": "WO-24-0192", "site_code": "TLF",
     "technician": {"name": "Hannah Clegg", "employee_id": "T-0301"}}]}
TRAINING = """employee_id,name,certification,issued,expiry
T-0301,Hannah Clegg,IPC-A-610,2023-09-12,2025-09-12
T-0301,Hannah Clegg,IPC J-STD-001,2024-03-05,2026-03-05
T-0418,Dev Chauhan,IPC-A-610,2022-05-10,2024-05-10
"""


@pytest.fixture(scope="module")
def answer(base_settings, tmp_path_factory):
    folder = tmp_path_factory.mktemp("site-joins-docs")
    (folder / "site_register.csv").write_text(SITES, encoding="utf-8")
    (folder / "annual_quality_report_2023.md").write_text(REPORT, encoding="utf-8")
    (folder / "work_orders_2024_q3.json").write_text(json.dumps(WORK_ORDERS), encoding="utf-8")
    (folder / "training_register.csv").write_text(TRAINING, encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("site-joins"))
    assert ingest([folder], settings, progress=False).indexed == 4
    rank = ranking(settings)

    def ask(question: str, below: str = ""):
        """`below`: a document whose chunks were retrieved but ranked out of the candidates."""
        retrieved, found = rank(question)
        found = [n for n in found if n.node.metadata.get("doc") != below]
        return CellLookup.from_settings(settings, Store(settings)).answer(question, found, beyond=retrieved)

    return ask


@pytest.mark.parametrize("below", ["", "site_register.csv"])
def test_a_persons_site_labels_the_report_row_asked(answer, below):
    found = answer(QUESTION, below)
    assert found is not None and found.kind == "cell", found
    fact, via = found.facts
    assert (fact.doc, fact.row) == ("annual_quality_report_2023.md", "TLF")
    assert (fact.column, fact.value) == ("FPY 2023", "97.4%")
    assert (via.doc, via.row) == ("site_register.csv", "TLF")
    assert "site_manager Priya Ramanathan is TLF" in found.text


def test_a_nested_id_reaches_the_rows_holding_it_and_the_one_the_question_names(answer):
    found = answer("The technician on work order WO-24-0192 - when does their IPC-A-610 certificate expire?")
    assert found is not None and found.kind == "cell", found
    fact, via = found.facts
    assert (via.doc, via.row, via.column, via.value) == ("work_orders_2024_q3.json", "WO-24-0192",
                                                         "technician.employee_id", "T-0301")
    assert (fact.doc, fact.column, fact.value) == ("training_register.csv", "expiry", "2025-09-12")


def test_a_rows_own_label_leads_only_to_a_column_of_the_words_asked():
    """"What grade does the lead of the engagement rated 'Needs improvement' hold": the audit's row
    ENG-2024-022 labels the engagement register's row too, whose lead column the question names,
    but the grade is asked: no cell there (the hop reaches the lead's grade)."""
    from rag.fact_tables import FactTable
    from rag.facts import Fact
    from rag.labels import STOP, words
    from rag.table_joins import through
    from rag.table_question import TableQuestion

    def table(doc: str, key: str, cells: list[tuple[str, str, str]]) -> FactTable:
        facts = [Fact(doc, f"{doc}-0", key, row, column, value, None, "", None, None, "")
                 for row, column, value in cells]
        return FactTable.of(doc, key, facts, [], True)

    audit = table("audit.md", "#/tables/0|Engagement | Rating", [
        ("ENG-2024-022", "Rating", "Needs improvement"), ("ENG-2024-031", "Rating", "Satisfactory")])
    register = table("register.csv", "#/tables/0|engagement_id | lead", [
        ("ENG-2024-022", "lead", "Lena Krüger"), ("ENG-2024-031", "lead", "Min-jun Park")])
    question = "What grade does the lead of the engagement rated 'Needs improvement' hold?"
    ask = TableQuestion(tuple(w for w in words(question) if w not in STOP), 0.75, False)
    assert through(ask, [audit, register], ("grade",)) is None
    assert through(ask, [audit, register]).facts[0].value == "Lena Krüger"  # the words asked unknown
