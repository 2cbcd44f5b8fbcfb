"""Registers read by their fields, over a real store (rag/table_question.py, rag/table_rows.py,
rag/cells.py): a JSON list item chosen by its other field's value, a "who" question never answered
with a figure, a column named by the words the document's name does not hold, a count in the
register the question names where another table holds the same value, a name spelled out whose
initialism heads a column, and a report's cell corrected by an erratum's table of corrections.

A ferry operator's documents: supplier contracts whose service levels are lists of records, a
project register, a capital budget sheet with its title above the header row (two projects on
hold there too, one of them not on hold in the register), and a customer survey report with the
erratum that corrects two of its cells.
"""

from __future__ import annotations

import json

import pytest
from conftest import lookup_over

CONTRACTS = {"register": "Kestrel Ferries supplier contracts", "contracts": [
    {"contract_id": "KF-SC-011", "supplier": "Harbour Fuels Ltd", "annual_value_gbp": 412000,
     "internal_owner": "Rhona Baird",
     "sla": [{"metric": "Fuel quality", "target": "ISO 8217 on every delivery",
              "service_credit": "1% of the monthly invoice"},
             {"metric": "Delivery window", "target": "within 2 hours of the booked slot",
              "service_credit": "3% of the monthly invoice"},
             {"metric": "Spill response", "target": "on site within 45 minutes", "service_credit": None}]},
    {"contract_id": "KF-SC-014", "supplier": "Quayside Catering", "annual_value_gbp": 96500,
     "internal_owner": "Tomas Reid",
     "sla": [{"metric": "Delivery window", "target": "before 06:00",
              "service_credit": "2% of the monthly invoice"},
             {"metric": "Food safety rating", "target": "5 at every inspection",
              "service_credit": "contract review"}]},
]}
PROJECTS = {"title": "Capital projects register", "projects": [
    {"code": "KF-CX-0101", "title": "Linkspan hydraulics overhaul", "owner": "Rhona Baird",
     "status": "On hold"},
    {"code": "KF-CX-0102", "title": "Passenger lounge refit", "owner": "Iain Munro", "status": "Approved"},
    {"code": "KF-CX-0107", "title": "Shore power connection", "owner": "Tomas Reid", "status": "On hold"},
    {"code": "KF-CX-0110", "title": "Ticket gate replacement", "owner": "Iain Munro",
     "status": "In progress"},
]}
BUDGET = [("KF-CX-0101", 310000, 0, None, "On hold"), ("KF-CX-0102", 185000, 142000, None, "Q2"),
          ("KF-CX-0107", 920000, 15000, 15000, "Q3-Q4"), ("KF-CX-0110", 240000, 240000, 96500, "On hold")]
SURVEY = """# Customer Survey Report 2024

Issued 20 January 2025 by Customer Experience.

## Results by port

| Port | Responses | Overall score | NPS |
|---|---|---|---|
| Dover | 2,210 | 81.5 | +41 |
| Calais | 1,874 | 79.9 | +38 |
| Oban | 960 | 84.2 | +47 |
"""
ERRATUM = """# Erratum: Customer Survey Report 2024

Applies to: Customer Survey Report 2024 (customer-survey-report-2024.md), issued 20 January 2025.

Two figures in the report were wrong. All other figures are unaffected.

| Location in report | As printed | Corrected |
|---|---|---|
| Results by port, Dover, NPS | +41 | +44 |
| Results by port, Calais, Overall score | 79.9 | 80.6 |
"""


def _budget(path) -> None:
    """The capital budget sheet: its title in the first row, the header below it."""
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Capital 2025"
    sheet.append(["Kestrel Ferries - capital budget 2025"])
    sheet.append(["Project code", "Budget 2025 (GBP)", "Committed (GBP)", "Actual to date (GBP)", "Phasing"])
    for row in BUDGET:
        sheet.append(list(row))
    workbook.save(path)


@pytest.fixture(scope="module")
def ask(base_settings, tmp_path_factory):
    folder = tmp_path_factory.mktemp("kestrel-docs")
    (folder / "supplier-contracts.json").write_text(json.dumps(CONTRACTS, indent=1), encoding="utf-8")
    (folder / "capital-projects-register.json").write_text(json.dumps(PROJECTS, indent=1), encoding="utf-8")
    _budget(folder / "capital-budget-2025.xlsx")
    (folder / "customer-survey-report-2024.md").write_text(SURVEY, encoding="utf-8")
    (folder / "erratum-customer-survey-report-2024.md").write_text(ERRATUM, encoding="utf-8")
    answer, _ = lookup_over(base_settings, tmp_path_factory, folder, 5)
    return answer


def test_a_list_item_is_chosen_by_its_other_fields_value(ask):
    """Three service credits in the Harbour Fuels record: the delivery window's (its metric named)."""
    found = ask("What service credit applies if Harbour Fuels misses its delivery window target?")
    assert found is not None and found.kind == "cell", found
    assert (found.facts[0].row, found.facts[0].column) == ("KF-SC-011", "sla[1].service_credit")
    assert "3% of the monthly invoice" in found.text


def test_who_is_never_a_figure_and_names_its_doer(ask):
    """"Who owns" is the register's owner (the doer of "owns"), not the budget row's actual spend."""
    found = ask("Who owns project KF-CX-0102?")
    assert found is not None and found.kind == "cell", found
    assert (found.facts[0].column, found.facts[0].value) == ("owner", "Iain Munro")
    # no column named: the budget's figure in force (its actual spend) is no answer to who
    responsible = ask("Who is responsible for project KF-CX-0110?")
    assert responsible is None or all(f.number is None for f in responsible.facts), responsible


def test_the_documents_name_names_no_column_and_a_title_row_is_no_header(ask):
    """"spent to date ... according to the 2025 capital budget": the budget's name holds "budget" and
    "2025"; its other words name "Actual to date", which is blank for KF-CX-0102."""
    found = ask("How much has actually been spent to date on project KF-CX-0102 according to the 2025 "
                "capital budget?")
    assert found is not None and found.kind == "blank", found
    assert (found.facts[0].row, found.facts[0].column) == ("KF-CX-0102", "Actual to date (GBP)")
    committed = ask("What is committed on project KF-CX-0107 in the capital budget?")
    assert committed is not None and committed.kind == "cell", committed
    assert committed.facts[0].number == 15000


def test_a_count_reads_the_register_the_question_names(ask):
    """"On hold" is a status in the register and a phasing in the budget: the register is named."""
    found = ask("How many capital projects are on hold in the capital projects register?")
    assert found is not None and found.kind == "count", found
    on_hold = [p["code"] for p in PROJECTS["projects"] if p["status"] == "On hold"]
    assert sorted(f.row for f in found.facts) == on_hold and f"{len(on_hold)} rows" in found.text


def test_an_initialism_and_an_errata_table_of_corrections(ask):
    """"Net Promoter Score" is the NPS column's name, no other kind of thing and no name the table
    lacks; the erratum's row "Results by port, Dover, NPS | +41 | +44" corrects that cell, cited
    to the erratum."""
    found = ask("What Net Promoter Score did Dover achieve in 2024?")
    assert found is not None and found.kind == "cell", found
    assert (found.facts[0].row, found.facts[0].column, found.facts[0].number) == ("Dover", "NPS", 44)
    assert found.facts[0].doc == "customer-survey-report-2024.md" and "44" in found.text
    oban = ask("What Net Promoter Score did Oban achieve in 2024?")  # not corrected: the report's
    assert oban is not None and oban.kind == "cell" and oban.facts[0].number == 47, oban
