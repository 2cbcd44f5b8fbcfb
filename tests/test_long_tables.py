"""Tables whose rows no one column names (rag/facts.py `_label_columns`), and what is computed over
rows (rag/table_question.py, rag/table_rows.py, rag/table_bounds.py), over a real store.

Long-format data: a depot's row per quarter, a depot's loss per year and type; a training log of
one person's two courses, split over chunks. Each cell is asked among its neighbours (the other
quarters, years, types and courses hold figures of the same kind). A count within a figure's
bound, the best and the worst of a measure (a loss's best is its lowest) with a total row beside
the regions, a JSON list's items counted once per record, and two tables of one pair of rows (the
month's column, not the quarter's) and of one row and month (the fuel sheet's litres, not the
dashboard's on-time share).
"""

from __future__ import annotations

import json

import pytest
from conftest import fresh_settings, ranking

from ingestion.pipeline import ingest
from rag.cells import CellLookup
from rag.store import Store

DEPOTS = {"LDS": "Leeds", "BRS": "Bristol", "GLA": "Glasgow"}
QUARTERLY = {  # depot -> quarter -> (deliveries, late deliveries, late minutes, on-time %)
    "LDS": [(12040, 310, 5210, 97.43), (12388, 295, 4880, 97.62), (12906, 402, 6930, 96.89),
            (13410, 377, 6105, 97.19)],
    "BRS": [(9810, 190, 3140, 98.06), (9977, 214, 3620, 97.86), (10244, 260, 4475, 97.46),
            (10930, 248, 4015, 97.73)],
    "GLA": [(7420, 121, 1980, 98.37), (7511, 109, 1745, 98.55), (7690, 131, 2260, 98.30),
            (8012, 118, 2050, 98.53)],
}
LOSSES = {("LDS", 2023, "known"): (301200, 1.22), ("LDS", 2023, "unknown"): (140300, 0.57),
          ("LDS", 2024, "known"): (296800, 1.18), ("LDS", 2024, "unknown"): (151900, 0.60),
          ("BRS", 2023, "known"): (188400, 1.05), ("BRS", 2023, "unknown"): (97600, 0.54),
          ("BRS", 2024, "known"): (192300, 1.03), ("BRS", 2024, "unknown"): (104100, 0.56),
          ("GLA", 2023, "known"): (120900, 0.98), ("GLA", 2023, "unknown"): (60200, 0.49),
          ("GLA", 2024, "known"): (118700, 0.95), ("GLA", 2024, "unknown"): (66400, 0.53)}
COURSES = ["Manual Handling", "Keg Safety", "First Aid at Work", "Forklift Refresher", "Fire Warden"]
PEOPLE = ["Amira Castell", "Ben Okoro", "Cara Lindqvist", "Dev Malhotra", "Eli Novak", "Fay Brennan",
          "Gus Harlow", "Hana Sato", "Ivo Petrov", "Jade Mercer", "Kit Ansell", "Lou Varga",
          "Mo Reyes", "Nell Ashby", "Oren Tal", "Pia Lund", "Quin Royle", "Ros Baird", "Sol Ferris",
          "Tam Quayle", "Uma Devi", "Vic Lorne", "Wes Hadley", "Xia Wen", "Yan Kowal", "Zak Imre"]
REGIONS = """# Customer Complaints Review 2024

Owner: Head of Customer Care. Issued January 2025.

## Summary

Customers raised 9,418 complaints in 2024 and were paid £612,350 in compensation. Complaints fell
in every region except Online, where missing items remain the leading cause. The review recommends
tighter picking checks for online orders and a new returns form for pubs.

## Complaints by region

| Region | Complaints (number) | Complaint cost | Top cause |
|---|---|---|---|
| North | 2,911 | £171,400 | Late delivery |
| Midlands | 2,204 | £198,750 | Damaged kegs |
| South West | 1,886 | £104,900 | Late delivery |
| Online | 2,417 | £137,300 | Missing items |
| Total | 9,418 | £612,350 |  |

## Next steps

Regional managers will report complaint trends monthly from April 2025.
"""
DASHBOARD = """# On-time Delivery Dashboard Q4 2024

| Depot | Oct 2024 | Nov 2024 | Dec 2024 | Q4 2024 | Target |
|---|---|---|---|---|---|
| LDS | 97.4% | 97.0% | 96.2% | 96.9% | 97.5% |
| BRS | 97.9% | 98.1% | 98.9% | 97.9% | 97.5% |
| GLA | 98.6% | 98.4% | 98.7% | 98.6% | 97.5% |
"""
WASTE = """# Depot Waste Summary 2024

| Depot | Food waste (tonnes) | Redistributed (tonnes) |
|---|---|---|
| North DC | 1,204 | 288 |
| South DC | 1,377 | 341 |
| UK DC total | 2,581 | 629 |
"""
MEETING = """# Depot Managers Meeting, November 2024

| Field | Detail |
|---|---|
| Chair | Head of Logistics |
| Date | 28 November 2024 |

## On-time delivery

The managers discussed which depot had the best on-time delivery record and which the worst, and
agreed that December 2024 figures will be reviewed in January. On-time delivery remains the
first item of every depot meeting.
"""
SLIDES = """# Q4 2024 Logistics Review

## On-time by depot

| Depot | On-time Q4 2024 | Deliveries Q4 2024 |
|---|---|---|
| LDS | 96.9% | 13,410 |
| BRS | 97.9% | 10,930 |
| GLA | 98.6% | 8,012 |
"""
FUEL = "\n".join(["month,depot,diesel_litres,adblue_litres,fuel_cost_gbp"] + [
    f"2024-{m:02d},{depot},{40000 + 997 * m + 3001 * i},{1200 + 13 * m + 101 * i},"
    f"{52000 + 1301 * m + 3907 * i}"
    for m in range(1, 13) for i, depot in enumerate(DEPOTS)]) + "\n"
AUDITS = [
    {"audit_id": "BA-24-01", "audit": {"auditor": "Rhea Motte", "date": "2024-02-10"},
     "brewer": {"name": "Hollin Hops"},
     "non_conformities": [{"ref": "NC-1", "severity": "minor"}]},
    {"audit_id": "BA-24-02", "audit": {"auditor": "Colm Drury", "date": "2024-03-11"},
     "brewer": {"name": "Tarn Maltings"},
     "non_conformities": [{"ref": "NC-1", "severity": "major"}, {"ref": "NC-2", "severity": "major"}]},
    {"audit_id": "BA-24-03", "audit": {"auditor": "Rhea Motte", "date": "2024-04-12"},
     "brewer": {"name": "Greyfell Casks"},
     "non_conformities": [{"ref": "NC-1", "severity": "minor"}, {"ref": "NC-2", "severity": "major"}]},
    {"audit_id": "BA-24-04", "audit": {"auditor": "Ines Vale", "date": "2024-05-13"},
     "brewer": {"name": "Wensley Yeasts"}, "non_conformities": []},
    {"audit_id": "BA-24-05", "audit": {"auditor": "Colm Drury", "date": "2024-06-14"},
     "brewer": {"name": "Skelder Bottling"},
     "non_conformities": [{"ref": "NC-1", "severity": "major"}]},
]


def _training() -> str:
    """26 people, one course each, and Ben Okoro's second course far below his first (the table
    is split over chunks); his second course's score is blank."""
    rows = [f"E{100 + i},{name},{list(DEPOTS)[i % 3]},{COURSES[i % 5]},2024-0{1 + i % 9}-1{i % 9},"
            f"{70 + (i * 7) % 29}" for i, name in enumerate(PEOPLE)]
    rows.append("E101,Ben Okoro,BRS,Fire Warden,2024-10-02,")
    return "employee_id,name,depot,course,completed,score\n" + "\n".join(rows) + "\n"


def _fleet_costs(path) -> None:
    """A finance sheet: monthly rows per depot, then the year's totals below a blank row."""
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Fleet costs"
    sheet.append(["Month", "Depot", "Diesel (litres)", "Fuel cost (GBP)"])
    for m, month in enumerate(("2024-04", "2024-05", "2024-06")):
        for i, depot in enumerate(DEPOTS):
            sheet.append([month, depot, 30000 + 911 * m + 2003 * i, 38000 + 1201 * m + 2609 * i])
    sheet.append([])
    for depot, (litres, cost) in FLEET_TOTALS.items():
        sheet.append(["FY2024/25 total", depot, litres, cost])
    workbook.save(path)


FLEET_TOTALS = {"LDS": (361200, 463950), "BRS": (385310, 494870), "GLA": (409880, 526120)}


@pytest.fixture(scope="module")
def ask(base_settings, tmp_path_factory):
    folder = tmp_path_factory.mktemp("long-tables-docs")
    quarterly = ["depot_code,quarter,deliveries,late_deliveries,late_minutes_total,on_time_pct"] + [
        f"{depot},2024-Q{q + 1},{d},{late},{minutes},{pct}"
        for depot, quarters in QUARTERLY.items() for q, (d, late, minutes, pct) in enumerate(quarters)]
    (folder / "deliveries-by-quarter-2024.csv").write_text("\n".join(quarterly) + "\n", encoding="utf-8")
    losses = ["depot_code,year,loss_type,value_gbp,pct_of_sales"] + [
        f"{depot},{year},{kind},{value},{pct}" for (depot, year, kind), (value, pct) in LOSSES.items()]
    (folder / "stock-loss-by-depot.csv").write_text("\n".join(losses) + "\n", encoding="utf-8")
    (folder / "training-log-2024.csv").write_text(_training(), encoding="utf-8")
    (folder / "complaints-review-2024.md").write_text(REGIONS, encoding="utf-8")
    (folder / "on-time-dashboard-q4-2024.md").write_text(DASHBOARD, encoding="utf-8")
    (folder / "q4-2024-logistics-review.md").write_text(SLIDES, encoding="utf-8")
    (folder / "depot-managers-meeting-2024-11.md").write_text(MEETING, encoding="utf-8")
    (folder / "depot-waste-summary-2024.md").write_text(WASTE, encoding="utf-8")
    _fleet_costs(folder / "fleet-costs-fy2024-25.xlsx")
    (folder / "fleet-fuel-2024.csv").write_text(FUEL, encoding="utf-8")
    (folder / "brewer-audits-2024.json").write_text(json.dumps(AUDITS, indent=2), encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("long-tables"))
    assert ingest([folder], settings, progress=False).indexed == 11
    rank = ranking(settings)

    def answer(question: str, first: str = ""):
        """`first`: a document whose chunks are put at the top of the candidates."""
        retrieved, found = rank(question)
        found = sorted(found, key=lambda n: n.node.metadata.get("doc") != first) if first else found
        return CellLookup.from_settings(settings, Store(settings)).answer(question, found, beyond=retrieved)

    return answer


@pytest.mark.parametrize(("question", "depot", "quarter", "column", "index"), [
    ("What were the total late minutes at BRS in Q3 2024?", "BRS", 3, "late_minutes_total", 2),
    ("How many late deliveries did GLA have in Q2 2024?", "GLA", 2, "late_deliveries", 1),
])
def test_a_long_tables_row_is_named_by_its_keys_together(ask, question, depot, quarter, column, index):
    found = ask(question)
    assert found is not None and found.kind == "cell", found
    (fact,) = found.facts
    assert (fact.doc, fact.column) == ("deliveries-by-quarter-2024.csv", column)
    assert fact.row == f"{depot} 2024-Q{quarter}"
    assert fact.number == QUARTERLY[depot][quarter - 1][index]


def test_a_long_tables_three_keys_and_a_persons_two_courses_over_chunks(ask):
    loss = ask("What was BRS's unknown loss in 2023, in pounds?")
    assert loss is not None and loss.kind == "cell", loss
    assert loss.facts[0].row == "BRS 2023 unknown"
    assert loss.facts[0].number == LOSSES[("BRS", 2023, "unknown")][0]
    blank = ask("What score did Ben Okoro get on his Fire Warden course?")
    assert blank is not None and blank.kind == "blank", blank
    assert blank.facts[0].row == "E101 Fire Warden" and "score" in blank.text
    first = ask("What score did Ben Okoro get on his Keg Safety course?")
    assert first is not None and first.kind == "cell" and first.facts[0].row == "E101 Keg Safety", first


def test_a_count_within_a_figures_bound(ask):
    found = ask("In how many quarters of 2024 was BRS's on-time delivery below 97.8%?")
    assert found is not None and found.kind == "count", found
    expected = [q for q, row in enumerate(QUARTERLY["BRS"], 1) if row[3] < 97.8]
    assert f"{len(expected)} of 4 rows" in found.text
    assert sorted(f.row for f in found.facts) == [f"BRS 2024-Q{q}" for q in expected]


def test_the_best_and_worst_of_a_measure_and_no_total_row(ask):
    # two columns named alike: a bill is the one in a currency
    biggest = ask("Which region had the biggest complaint bill in 2024?")
    assert biggest is not None and biggest.kind == "max", biggest
    assert (biggest.facts[0].row, biggest.facts[0].column) == ("Midlands", "Complaint cost")
    most = ask("Which region raised the most complaints by number in 2024?")
    assert most is not None and most.facts[0].row == "North", most  # not the Total row
    # December's column, whose best is not the quarter's (GLA), also below the meeting's table in
    # the ranking (the best-ranked chunk's tables give no such column: the top chunks' are read)
    best = ask("Which depot had the best on-time delivery in December 2024?")
    assert best is not None and best.kind == "max" and best.facts[0].row == "BRS", best
    best = ask("Which depot had the best figure in December 2024?", first="depot-managers-meeting-2024-11.md")
    assert best is not None and best.kind == "max" and best.facts[0].row == "BRS", best
    worst = ask("Which depot had the worst on-time delivery in December 2024?")
    assert worst is not None and worst.kind == "min" and worst.facts[0].row == "LDS", worst
    # complaints are a measure of which less is better: their best is the lowest
    fewest = ask("Which region had the best complaints number in 2024?")
    assert fewest is not None and fewest.kind == "min" and fewest.facts[0].row == "South West", fewest


def test_a_column_named_by_its_agent_noun_and_a_rate_by_its_percentage(ask):
    """"Who audited" names the auditor (not the brewer's name); "loss rate" the percentage column,
    not the loss's value."""
    auditor = ask("Who audited Tarn Maltings in 2024?")
    assert auditor is not None and auditor.kind == "cell", auditor
    assert (auditor.facts[0].column, auditor.facts[0].value) == ("audit.auditor", "Colm Drury")
    rate = ask("What was GLA's known loss rate in 2024?")
    assert rate is not None and rate.kind == "cell", rate
    assert (rate.facts[0].row, rate.facts[0].column) == ("GLA 2024 known", "pct_of_sales")
    assert rate.facts[0].number == LOSSES[("GLA", 2024, "known")][1]


def test_a_json_lists_items_count_once_per_record(ask):
    found = ask("How many brewer audits raised at least one major non-conformity?")
    assert found is not None and found.kind == "count", found
    majors = [a["audit_id"] for a in AUDITS if any(n["severity"] == "major" for n in a["non_conformities"])]
    assert sorted(f.row for f in found.facts) == majors and f"{len(majors)} rows" in found.text


def test_a_pair_in_the_column_named_whole_and_a_cell_by_its_own_words(ask):
    pair = ask("In December 2024, was Leeds (LDS) or Bristol (BRS) worse on on-time delivery?")
    assert pair is not None and pair.kind == "cell", pair
    assert {(f.doc, f.column) for f in pair.facts} == {("on-time-dashboard-q4-2024.md", "Dec 2024")}
    litres = ask("How many litres of diesel did BRS use in November 2024?")
    assert litres is not None and litres.kind == "cell", litres
    (fact,) = litres.facts
    assert (fact.doc, fact.row, fact.column) == ("fleet-fuel-2024.csv", "2024-11 BRS", "diesel_litres")
    assert fact.number == 40000 + 997 * 11 + 3001


def test_a_sheets_totals_a_row_named_by_words_no_other_holds_all_of_and_a_plural(ask):
    """The totals below the sheet's blank row are rows of its table; "FY2024/25 ... GLA" names
    "FY2024/25 total GLA" (no other row holds both); "spend" is the column in a currency; "the UK
    DCs" names "UK DC total"."""
    spend = ask("What did GLA spend on fleet fuel in FY2024/25?")
    assert spend is not None and spend.kind == "cell", spend
    (fact,) = spend.facts
    assert (fact.row, fact.column) == ("FY2024/25 total GLA", "Fuel cost (GBP)")
    assert fact.number == FLEET_TOTALS["GLA"][1]
    total = ask("What was the food waste total across the UK DCs in 2024?")
    assert total is not None and total.kind == "cell", total
    assert (total.facts[0].row, total.facts[0].value) == ("UK DC total", "2,581")
