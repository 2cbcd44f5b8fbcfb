"""Questions answered from table cells (rag/cells.py) over a real store: the pipeline's retrieval
and rerank, then `CellLookup.answer` on the kept chunks. A cell, a blank cell (never a
neighbour's value), a comparison across rows and a count, each cited to its cell's chunk; a
question that names no cell gets None; with facts off every one is None."""

from __future__ import annotations


import pytest
from conftest import FIXTURES, fresh_settings, lookup_over
from documents import energy_report_folder
from llama_index.core.llms import MockLLM
from llama_index.core.schema import QueryBundle

from ingestion.pipeline import ingest
from rag.cells import CellLookup
from rag.facts import Fact, label_unit
from rag.labels import content, same
from rag.models import build_embedding
from rag.postprocessors import build_rerank_stage
from rag.retrieval import hybrid_retriever
from rag.store import Store, stored_nodes


@pytest.fixture(scope="module")
def tables(base_settings, tmp_path_factory):
    """The twelve fixture tables (a claims register, a loss triangle, Korean branch figures, courses,
    an asset register, an incident log, sites, travel allowances, monthly shipments, an events
    register, a JSON rate agreement, a KPI table) ingested, and
    a function: question -> the reranked candidates, as the pipeline keeps them."""
    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("tables"))
    report = ingest([FIXTURES / "tables"], settings, progress=False)
    assert report.indexed == 12 and not report.failed
    embedding = build_embedding(settings)
    retriever = hybrid_retriever(settings, embedding, MockLLM())  # the LLM is never called
    reranker = build_rerank_stage(settings, Store(settings), embedding)

    def candidates(question: str):
        query = QueryBundle(question)
        return reranker.postprocess_nodes(retriever.retrieve(query), query_bundle=query)

    return settings, candidates


def ask(tables, question: str, **facts):
    settings, candidates = tables
    settings = settings.model_copy(update={"facts": settings.facts.model_copy(update=facts)})
    found = candidates(question)
    answer = CellLookup.from_settings(settings, Store(settings)).answer(question, found)
    if answer is not None:  # every cell it rests on is in a chunk of the document it names
        chunks = {c.node.node_id: c.node.metadata["doc"] for c in found}
        assert all(Store(settings).lexical.chunk_documents()[f.chunk_id] == f.doc for f in answer.facts)
        assert all(chunks.get(f.chunk_id, f.doc) == f.doc for f in answer.facts)
    return answer


def test_a_cell_and_its_place(tables):
    answer = ask(tables, "What is the incurred amount of claim CL-2023-004?")
    assert answer.kind == "cell" and "240000" in answer.text
    (fact,) = answer.facts
    assert (fact.doc, fact.row, fact.column) == ("claims-register.csv", "CL-2023-004", "incurred_eur")
    triangle = ask(tables, "What was the paid amount for accident year 2020 at 36 months?")
    assert triangle.kind == "cell" and "801" in triangle.text and triangle.facts[0].doc == "loss-triangle.csv"
    korean = ask(tables, "서울 지점의 매출은 얼마입니까?")
    assert korean.kind == "cell" and "120" in korean.text and "서울" in korean.text
    # "what was Havbris's ...": a verb after "what", no noun asked of the cell
    verb = ask(tables, "What was Havbris's incurred amount on claim CL-2023-004?")
    assert verb.kind == "cell" and "240000" in verb.text


def test_a_blank_cell_is_blank_never_a_neighbour(tables):
    answer = ask(tables, "What is the incurred amount of claim CL-2023-003?")
    assert answer.kind == "blank" and answer.text.startswith("The table gives no value for incurred_eur")
    assert not any(n in answer.text for n in ("85000", "240000", "120000", "56000"))
    triangle = ask(tables, "What is the 36-month figure of accident year 2021?")
    assert triangle.kind == "blank" and "830" not in triangle.text
    korean = ask(tables, "부산 지점의 직원수는 몇 명입니까?")
    assert korean.kind == "blank" and korean.text.startswith("표에는") and "18" not in korean.text


def test_comparisons_and_counts_across_rows(tables):
    highest = ask(tables, "Which claim has the highest incurred amount?")
    assert highest.kind == "max" and "CL-2023-004" in highest.text and highest.facts[0].number == 240000
    lowest = ask(tables, "Which accident year had the lowest 12-month figure?")
    assert lowest.kind == "min" and "2019" in lowest.text
    # a superlative names its measure; "English-language" names a filter, not the column
    shortest = ask(tables, "Which English-language course is the shortest?")
    assert shortest.kind == "min" and "TR-3" in shortest.text and shortest.facts[0].column == "hours"
    # or by its unit: "the most hours" is the column in h (runtime_h), no other figure of the register
    hours = ask(tables, "Which asset in the register has run the most hours?")
    assert hours.kind == "max" and "PMP-097" in hours.text and hours.facts[0].column == "runtime_h"
    # "which plant" names a column whose values repeat: the plant with the highest total
    plant = ask(tables, "Which plant has the most runtime hours in the asset register?")
    assert plant.kind == "max" and "plant Brno" in plant.text and "53,420" in plant.text
    assert {f.row for f in plant.facts} == {"PMP-181", "PMP-097", "CMP-044", "WLD-007"}
    rows = ask(tables, "How many claims does the register list?")  # its rows, under claim_id
    assert rows.kind == "count" and "5 claim_ids" in rows.text and len(rows.facts) == 5
    # a condition on a column ("incurred") that no value matches is no count of every row
    assert ask(tables, "How many claims in the register have an incurred amount still to come?") is None
    count = ask(tables, "How many claims were open at 24 months?")
    assert count.kind == "count" and "2 rows" in count.text
    assert {f.row for f in count.facts} == {"CL-2023-002", "CL-2023-004"}


def test_a_month_row_named_in_words_and_a_name_with_accents(tables):
    """"March 2024" names the row "2024-03"; "Łódź" the column "lodz_units_out"."""
    answer = ask(tables, "How many units went out of Łódź in March 2024?")
    assert answer.kind == "cell" and "1410" in answer.text, answer
    assert (answer.facts[0].row, answer.facts[0].column) == ("2024-03", "lodz_units_out")


def test_the_earliest_or_latest_date_of_a_column(tables):
    earliest = ask(tables, "Which asset was commissioned earliest?")
    assert earliest.kind == "min" and "WLD-007" in earliest.text and "earliest" in earliest.text
    latest = ask(tables, "Which asset at Brno has the latest commissioned date?")  # of Brno's rows only
    assert latest.kind == "max" and "PMP-181" in latest.text, latest
    # the incident log's one date column, named, before the asset register's unnamed one
    reported = ask(tables, "Which incident was reported earliest?")
    assert reported.kind == "min" and "INC-02" in reported.text, reported


def test_no_cell_named_no_answer_and_facts_off(tables):
    assert ask(tables, "Who handles the claims of Nordlys?") is None  # two rows: no one cell
    assert ask(tables, "What is the reinsurance retention of the programme?") is None
    assert ask(tables, "What is the incurred amount of claim CL-2023-004?", enabled=False) is None


def lookup_for(tables, question: str):
    """The cell lookup over the fixture store, and the question's candidates."""
    settings, candidates = tables
    return CellLookup.from_settings(settings, Store(settings)), candidates(question)


def with_prose(tables, question: str, text: str, doc: str):
    """The lookup's answer on the question's candidates, and on them with a chunk of prose of
    `doc` (`text`) ranked last."""
    lookup, found = lookup_for(tables, question)
    return lookup.answer(question, found), lookup.answer(question, [*found, prose(text, doc)])


def prose(text: str, doc: str, score: float = 0.1):
    """A chunk of prose of `doc`, as a retrieved candidate."""
    from llama_index.core.schema import NodeWithScore, TextNode

    return NodeWithScore(node=TextNode(text=text, metadata={"doc": doc}), score=score)


def test_prose_of_another_document_that_gives_another_figure_leaves_it_to_the_pipeline(tables):
    """A cell another retrieved document contradicts in prose is not answered from the table."""
    question = "What was the paid amount for accident year 2020 at 36 months?"
    alone, memo = with_prose(tables, question, "Accident year 2020 stood at 795 paid at 36 months after the "
                             "restatement.", "restatement-memo.md")
    assert "801" in alone.text and memo is None
    _, agreeing = with_prose(tables, question, "Accident year 2020 stood at 801 paid at 36 months.",
                             "memo.md")
    assert "801" in agreeing.text
    # the cell's figure as the corrected one
    _, erratum = with_prose(tables, question,
                            "Accident year 2020 paid at 36 months should read 810, not 801.", "erratum.md")
    assert erratum is None


def test_a_table_ranked_below_prose_answers_unless_the_prose_names_its_row(tables):
    """A cell of a table in one of the `top_chunks` best chunks answers, unless a better-ranked
    chunk of another document names the cell's row: that chunk may hold the answer itself."""
    settings, _ = tables
    question = "What is the incurred amount of claim CL-2023-004?"
    lookup, found = lookup_for(tables, question)

    def ahead(text: str) -> list:
        return [prose(text, "notes.md", 1.0), *found]

    assert "240000" in lookup.answer(question, ahead("Claims notes: the register was audited in May.")).text
    assert lookup.answer(question, ahead("Claim CL-2023-004: incurred is under review.")) is None
    narrow = CellLookup.from_settings(settings.model_copy(
        update={"facts": settings.facts.model_copy(update={"top_chunks": 1})}), Store(settings))
    assert narrow.answer(question, ahead("Claims notes: the register was audited in May.")) is None


def test_a_count_meets_every_value_named_and_a_list_cell_holds_its_items(tables):
    both = ask(tables, "How many assets at Brno are in repair right now?")  # plant and status
    assert both.kind == "count" and "3 rows" in both.text and "plant Brno and status in repair" in both.text
    assert {f.row for f in both.facts} == {"PMP-181", "PMP-097", "WLD-007"}
    items = ask(tables, "How many assets get a seal inspection?")  # "seal inspection; vibration" holds it
    assert items.kind == "count" and {f.row for f in items.facts} == {"PMP-118", "PMP-181", "TST-300"}


def test_a_count_of_one_named_row_or_in_a_unit_is_no_row_count(tables):
    # the question names the row (Brno): not how many rows have type "Plant"
    assert ask(tables, "How many people work at the Brno plant?") is None
    # "how many hours" asks a measure, not how many rows hold "Welding cell"
    assert ask(tables, "How many hours a week does the welding cell run?") is None


def test_when_asks_a_date(tables):
    """A row named by its code answers "when" from its one date; a name is no date."""
    answer = ask(tables, "When was PMP-118 put into service?")
    assert answer.kind == "cell" and "2023-04-11" in answer.text and answer.facts[0].column == "commissioned"
    assert ask(tables, "Until when is the certificate of the lead of CMP-044 valid?") is None
    assert "Ota Kral" in ask(tables, "Who is the lead of CMP-044?").text  # the same cell, asked as a name
    assert ask(tables, "Where is the lead of CMP-044 based?") is None  # a place, not the lead's name
    assert ask(tables, "Who is the lead auditor of CMP-044?") is None  # the lead is no auditor


def test_a_count_stated_in_prose_of_the_table_document_is_left_to_the_pipeline(tables):
    alone, stated = with_prose(tables, "How many assets does the register list?",
                               "The plants operate 214 assets; the register lists those under review.",
                               "asset-register.csv")
    assert "6 asset_ids" in alone.text and stated is None


def test_what_asks_for_a_thing_the_row_column_or_table_heading_names(tables):
    """"What daily allowance": the table's heading names it ("Per diem allowances"); the row's
    bound is its label, the country its column, not the neighbouring row or country."""
    question = "What daily allowance applies to a trip of more than 12 hours in the Czech Republic?"
    answer = ask(tables, question)
    assert answer.kind == "cell" and "EUR 38" in answer.text and "28" not in answer.text



def test_a_json_field_named_by_its_key_alone(tables):
    # "the express surcharge" is pricing.express_surcharge_pct: the path's "pricing" goes unnamed,
    # and the express turnaround's 6 hours is another key
    surcharge = ask(tables, "What express surcharge does Aurora Freight pay?")
    assert surcharge.kind == "cell" and "35" in surcharge.text and "6" not in surcharge.text.split()
    assert surcharge.facts[0].column == "express_surcharge_pct"
    # two rows hold the key: the one whose path the question names (Riga's 590, not Porto's 520)
    riga = ask(tables, "What is Aurora Freight's rate for an executive double in Riga?")
    assert riga.kind == "cell" and "590" in riga.text and "520" not in riga.text
    assert riga.facts[0].row == "properties.riga.rates_per_night"
    # neither row named: two values, no cell
    assert ask(tables, "What is Aurora Freight's executive double rate?") is None


def test_labels_named_by_an_initialism_a_derived_word_and_a_currency_code(tables):
    # "average daily rate" is ADR (Riga 171), not RevPAR (Tartu 131)
    adr = ask(tables, "Which property had the highest average daily rate in Q4 2024?")
    assert adr.kind == "max" and "Riga" in adr.text and adr.facts[0].column == "ADR (EUR)"
    # "attendance" names "attendees" (EV-131's 410), not the deposit (EV-130's 12500)
    attendance = ask(tables, "Which event had the largest attendance?")
    assert attendance.kind == "max" and "EV-131" in attendance.text
    assert attendance.facts[0].column == "attendees"
    # "cost" names cost_pln (PLN is a currency): EV-13's cost is blank, never a neighbour's
    cost = ask(tables, "What did event EV-13 cost?")
    assert cost.kind == "blank" and cost.facts[0].column == "cost_pln"
    assert not any(n in cost.text for n in ("41000", "8800", "5200"))


def test_a_count_of_the_rows_a_yes_no_column_marks(tables):
    ticketed = ask(tables, "How many events in the register are ticketed?")
    assert ticketed.kind == "count" and ticketed.text.split(", ")[1].startswith("3 rows")
    assert {f.row for f in ticketed.facts} == {"EV-13", "EV-31", "EV-131"}


def test_a_count_of_the_rows_whose_worded_value_holds_the_number_asked(tables):
    """"in cohort 2024": the number is in a cell's words, not a row's name, though another table's
    subject holds it (the KPI review of Q4 2024); it does not narrow the courses to rows named 2024."""
    cohort = ask(tables, "How many training courses belong to cohort 2024?")
    assert cohort.kind == "count" and {f.row for f in cohort.facts} == {"TR-1", "TR-3"}, cohort


def test_a_name_the_question_gives_the_row_of_a_one_value_table_is_held_against_the_cell(tables):
    """"the Vienna booking agent" where the travel office's one value column says Linz: the
    question's premise is false, and the correction cites the cell; its twins are answered."""
    corrected = ask(tables, "What is the name of the Vienna booking agent?")
    assert corrected.kind == "premise" and corrected.text == (
        "The documents give Alpen Reisen GmbH, Linz as the Booking agent, not Vienna."), corrected
    assert ask(tables, "What is the name of the Linz booking agent?").kind == "cell"
    assert ask(tables, "What is the name of the booking agent for business trips?").kind == "cell"


def test_a_count_of_another_things_rows_and_a_cell_of_the_thing_a_question_goes_through(tables):
    """"How many households ..." counts no asset register's rows; "the job title of the person
    who leads PMP-118" is not the lead's name: both are left to the pipeline (the hop)."""
    assert ask(tables, "How many assets at Brno are in repair right now?").kind == "count"
    assert ask(tables, "How many households at Brno are in repair right now?") is None
    assert ask(tables, "How many items of the asset register at Brno are in repair?").kind == "count"
    assert ask(tables, "Who leads asset PMP-118?").kind == "cell"
    assert ask(tables, "What is the job title of the person who leads asset PMP-118?") is None


def test_a_chunk_currency_lifted_widens_the_best_ranked_window(tables):
    """An erratum's prose that currency ranked first (rag/currency.py) does not push the table asked
    out of the `top_chunks` window: each lifted chunk widens it by one."""
    question = "Which property had the highest average daily rate in Q4 2024?"
    lookup, found = lookup_for(tables, question)
    erratum = prose("Correction 1 - Riga occupancy. Printed: 74.5%. Correct: 75.4%.", "kpi-erratum.txt")
    others = [prose("Guest NPS is surveyed after every stay.", f"survey-{i}.md") for i in range(2)]
    ranked = [erratum, *others, *found]
    assert lookup.answer(question, ranked) is None
    lifted = lookup.answer(question, ranked, frozenset({erratum.node.node_id}))
    assert lifted.kind == "max" and "Riga" in lifted.text


def test_only_a_json_documents_fields_answer_by_their_key_alone():
    """A JSON document's `path: value` fields may be named by the key alone (the path is structure);
    a table's rows must be named: "What is a load limiter?" names the column Limit and half the
    row "Femur load", which asks for no cell."""
    from rag.fact_tables import FactTable
    from rag.labels import STOP, words
    from rag.table_question import TableQuestion

    def table(key: str, cells: list[tuple[str, str, str]]) -> FactTable:
        facts = [Fact("d.x", "d-0", key, row, column, value, float(value), "", None, None, "")
                 for row, column, value in cells]
        return FactTable.of("d.x", key, facts, [], True)

    def cell(question: str, tables: list[FactTable]):
        asked = tuple(w for w in words(question) if w not in STOP)
        return TableQuestion(asked, 0.75, False).cell(tables, None, False)

    crash = table("#/tables/0|Measure | Value | Limit", [
        ("Femur load", "Value", "5.1"), ("Femur load", "Limit", "9.07"),
        ("Chest deflection", "Value", "31"), ("Chest deflection", "Limit", "42")])
    assert cell("What is a load limiter?", [crash]) is None
    pricing = table("#pricing", [("pricing", "express_surcharge_pct", "35"),
                                 ("pricing", "minimum_fee", "90")])
    assert "35" in cell("What express surcharge applies?", [pricing]).text


def test_a_register_row_is_named_by_its_description_and_a_first_by_its_date(tables):
    """The first worded column names its rows though two share a value ("Centrifugal pump"): the
    one row it tells apart is named, the two it does not are compared; "commissioned first" orders
    the date column."""
    runtime = ask(tables, "What is the runtime of the dosing pump?")
    assert runtime.kind == "cell" and "30950" in runtime.text and runtime.facts[0].row == "PMP-097"
    pumps = ask(tables, "Which centrifugal pump has the highest runtime?")
    assert pumps.kind == "max" and pumps.facts[0].row == "PMP-118"
    first = ask(tables, "Which asset was commissioned first?")
    assert first.kind == "min" and first.facts[0].row == "WLD-007" and "2021-04-26" in first.text


def test_a_postponing_memo_restates_the_meetings_cells(base_settings, tmp_path_factory):
    """A memo that postpones dates agreed at a meeting (linked at ingest, rag/currency.py) gives
    the date now in force, from its "Revised date" column beside "Previous date"; a row it does not
    name keeps the meeting's date."""
    answer, _ = lookup_over(base_settings, tmp_path_factory, "postponed", 2)

    lift = answer("When is the main span deck lift?")
    assert lift.kind == "cell" and "8 June 2024" in lift.text
    assert (lift.facts[0].doc, lift.facts[0].column) == ("memo-revised-programme.md", "Revised date")
    lighting = answer("When is lighting commissioning?")
    assert lighting.kind == "cell" and "24 June 2024" in lighting.text


def test_a_year_is_held_by_a_rows_date_and_the_named_register_is_counted(tables):
    """"In 2024" holds the incident log's rows reported in 2024 (their dates, not their names);
    "the incident log" names the table counted, whichever chunk ranks first."""
    brno = ask(tables, "How many incidents at Brno were reported in 2024 according to the incident log?")
    assert brno.kind == "count" and {f.row for f in brno.facts} == {"INC-03"}


def test_a_columns_words_and_their_inflections():
    """"Spent to date" is named by "spent"; "own" names "owned"; a header's "no" is a number."""
    assert content("Spent to date (GBP)") == ("spent",)
    assert same("owned", "own") and not same("owner", "own") and same("no", "number")


def test_two_documents_whose_cells_differ_are_both_said(base_settings, tmp_path_factory):
    """A staff directory and the intranet give one person two extensions, neither newer: both
    cells are said, each of its document; where they agree, the one value. Tenure is read from
    the start dates."""
    answer, _ = lookup_over(base_settings, tmp_path_factory, "disagree", 2)

    owen = answer("What is Owen Tranter's extension?")
    assert owen.kind == "conflict" and "2214" in owen.text and "2241" in owen.text
    assert {f.doc for f in owen.facts} == {"staff-directory.csv", "intranet-contacts.md"}
    mara = answer("What is Mara Quist's extension?")
    assert mara.kind == "cell" and "2001" in mara.text
    # "been with us the longest": the earliest start date
    longest = answer("Who has been with the company the longest, according to the staff directory?")
    assert longest.kind == "min" and longest.facts[0].row == "E1001" and "2006-04-03" in longest.text


def test_an_erratum_that_corrects_a_cell_is_read_into_the_table(base_settings, tmp_path_factory):
    """An erratum (linked at ingest) saying "Pump P-2, vibration: the value should read 7.9 mm/s
    (the report incorrectly gave 3.1 mm/s)" corrects that cell: the highest vibration is P-2's now,
    not P-4's 5.6, cited to the erratum; a cell it does not name keeps the report's value. So does
    a correction written as fields ("Reported: 74 dB" / "Corrected: 79 dB")."""
    answer, store = lookup_over(base_settings, tmp_path_factory, "corrected", 2)

    def doc(chunk_id: str) -> str:
        return stored_nodes(store.collection, ids=[chunk_id])[0].metadata["doc"]

    highest = answer("Which pump had the highest vibration?")
    assert highest.kind == "max" and highest.facts[0].row == "P-2" and "7.9 mm/s" in highest.text, highest
    assert doc(highest.facts[0].chunk_id) == "PR-2025-04_erratum.txt"
    p2 = answer("What was the vibration of pump P-2?")
    assert p2.kind == "cell" and p2.facts[0].value == "7.9"
    assert doc(p2.facts[0].chunk_id) == "PR-2025-04_erratum.txt"
    p4 = answer("What was the vibration of pump P-4?")
    assert p4.kind == "cell" and p4.facts[0].value == "5.6"
    assert doc(p4.facts[0].chunk_id) == "PR-2025-04_pump_endurance.md"
    noise = answer("Which pump had the highest noise?")
    assert noise.kind == "max" and noise.facts[0].row == "P-3" and noise.facts[0].value == "79", noise


def test_an_erratum_naming_a_site_corrects_the_coded_row_of_a_pdf_table(base_settings, tmp_path_factory):
    """A text PDF's tables without grid lines (ingestion/pdf_tables.py) give their rows by site
    code; the erratum names the sites in full ("Northgate General Hospital", NGH in a site
    register's name column) and corrects one cell of each of two tables (the second in prose: "in
    2024 were printed as 91.2%. The correct figure is 87.9%."), and a total as a consequence:
    each corrected cell is answered from the erratum; the same site's row of the table it does
    not correct keeps the report's figures."""
    answer, store = lookup_over(base_settings, tmp_path_factory,
                                energy_report_folder(tmp_path_factory.mktemp("energy")), 3)

    def doc(fact: Fact) -> str:
        return stored_nodes(store.collection, ids=[fact.chunk_id])[0].metadata["doc"]

    northgate = answer("What was Northgate's electricity use in 2024-25?")
    assert northgate.kind == "cell" and northgate.facts[0].value == "16,840", northgate
    assert doc(northgate.facts[0]) == "energy_report_erratum.txt"
    total = answer("What was the total electricity use in 2024-25?")
    assert total.kind == "cell" and total.facts[0].value == "21,230", total  # the consequence's pair
    riverside = answer("What share of reactive jobs did Riverside complete within target?")
    assert riverside.kind == "cell" and riverside.facts[0].value.startswith("87.9"), riverside
    gas = answer("How much gas did Riverside use in 2024-25?")
    assert gas.kind == "cell" and gas.facts[0].value == "6,980" and doc(gas.facts[0]) == "energy_report.pdf"


def test_a_price_takes_its_documents_currency_field_or_its_headers_bracket(base_settings, tmp_path_factory):
    """A JSON rate card's rows name no currency, its "currency" field does: the rate is said with
    it and per its row's unit; a column "Staff price (EUR, incl. VAT)" is in EUR."""
    assert label_unit("Internal rate (GBP, excl. VAT)") == "GBP" and label_unit("Settlement (mm)") == "mm"
    answer, _ = lookup_over(base_settings, tmp_path_factory, "rates", 2)
    dumper = answer("What is the hire rate of the 5 t site dumper?")
    assert dumper.kind == "cell" and "120.0 EUR per day" in dumper.text, dumper
    meal = answer("How much does a hot meal cost staff in the canteen?")
    assert meal.kind == "cell" and "6.50 EUR" in meal.text, meal


def test_a_documents_initialisms_are_read_as_it_spells_them_out():
    from rag.initialisms import definitions, spelled_out

    assert definitions("loaded to the design working load (WL) up to 1.5 x WL") == {"WL": "working load"}
    assert definitions("neutral salt-spray life (SSL) and haze") == {"SSL": "salt-spray life"}
    assert definitions("WCA = water contact angle, in degrees") == {"WCA": "water contact angle"}
    assert definitions("the working load (WL); the wet load (WL)") == {}  # two spellings: neither
    assert spelled_out("SSL (h)", {"SSL": "salt-spray life"}) == "salt-spray life (h)"


def test_a_documents_name_an_initialism_and_a_currencys_scale(base_settings, tmp_path_factory):
    """"In the Q4 2024 board review ... in Q3 2024": Q3 2024 is the column (the name's Q4 2024 is the
    document's), in £k as its row says; "the 2025 capacity plan" asked of December 2024 keeps the
    plan's table (a year the question names too rules no table out); "settled the most at working
    load" names the column the report heads "Settlement at WL (mm)", having spelled out "working
    load (WL)", not the 1.5 x WL one; "the cut-off for ..." names the row "Last date to ..."; the
    Leiden permit's row is no answer for the Utrecht office."""
    assert label_unit("Revenue (£k)") == "GBP k" and label_unit("Spend (€000)") == "EUR thousand"
    assert label_unit("Claims ratio (% of revenue)") == "%"  # what it is a share of qualifies the unit
    answer, _ = lookup_over(base_settings, tmp_path_factory, "quarters", 5)

    revenue = answer("In the Q4 2024 board review, what was revenue in Q3 2024?")
    assert revenue.kind == "cell" and revenue.facts[0].column == "Q3 2024", revenue
    assert "3,410 GBP k" in revenue.text
    third = answer("How many new contracts were signed in the third quarter of 2024?")  # "third quarter": Q3
    assert third.kind == "cell" and third.facts[0].value == "12", third
    occupied = answer("In the 2025 capacity plan, how many shelf positions were occupied in CH-02 in "
                      "December 2024?")
    assert occupied.kind == "cell" and occupied.facts[0].value == "388", occupied
    settled = answer("Which pile settled the most at working load?")
    assert settled.kind == "max" and settled.facts[0].row == "QP-2" and "7.4 mm" in settled.text, settled
    # "the cut-off" asks the row's last date
    services = answer("What's the cut-off for raising purchase orders for services before the year-end?")
    assert services.kind == "cell" and services.facts[0].value == "4 July 2025", services
    # a numbered row is said by its name, not "# 2"
    fieldwork = answer("When does audit fieldwork start?")
    assert fieldwork.kind == "cell" and "Audit fieldwork starts" in fieldwork.text, fieldwork
    assert "8 September 2025" in fieldwork.text
    # another office's row is no answer for this one: said so, not given
    leiden = answer("How much is a staff parking permit at the Leiden office?")
    assert leiden.kind == "cell" and "£240" in leiden.text, leiden
    june = answer("How much was a staff parking permit in June?")  # a month is no other site
    assert june.kind == "cell" and "£240" in june.text, june
    dearest = answer("What is the most expensive item on the quick reference?")  # the charge column
    assert dearest.kind == "max" and dearest.facts[0].row == "Leiden staff parking permit", dearest
    utrecht = answer("How much is a staff parking permit at the Utrecht office?")
    assert utrecht.kind == "premise" and "not one for Utrecht" in utrecht.text and "240" not in utrecht.text


def test_a_values_short_name_in_brackets_names_its_row():
    """A register's description "X-ray photoelectron spectrometer (XPS)" names its row, and so
    does "XPS" alone."""
    from rag.fact_tables import FactTable
    from rag.facts import Fact

    def cell(row: str, column: str, value: str) -> Fact:
        return Fact("equipment.csv", "c1", "#/tables/0", row, column, value, None, "", None, None, "")

    facts = [cell("EQ-1", "description", "X-ray photoelectron spectrometer (XPS)"),
             cell("EQ-2", "description", "Tensile test frame"), cell("EQ-1", "room", "E0.02"),
             cell("EQ-2", "room", "E1.07")]
    table = FactTable.of("equipment.csv", "#/tables/0", facts, [], True)
    assert {"XPS", "X-ray photoelectron spectrometer (XPS)"} <= set(table.aliases["EQ-1"])
