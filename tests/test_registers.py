"""Registers as operations teams keep them, over a real store and asked as the pipeline asks them
(rag/codes.py, then `CellLookup.answer` on the reranked candidates): a site given only by the code
another document spells out, a row named by its values rather than its id, a column header's
contraction, the compared things as a table's columns, and an id that a second register gives.
Every answer here has a neighbour that would be wrong: the other site's row, the budget beside
the forecast, the target beside the sites."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, fresh_settings
from llama_index.core.llms import MockLLM
from llama_index.core.schema import QueryBundle

from ingestion.pipeline import ingest
from rag.cells import CellLookup
from rag.codes import CorpusCodes
from rag.models import build_embedding
from rag.names import sited
from rag.references import Reference, Segment
from rag.postprocessors import build_rerank_stage
from rag.retrieval import hybrid_retriever
from rag.store import Store


@pytest.fixture(scope="module")
def registers(base_settings, tmp_path_factory):
    """The seven fixture documents ingested; (answer(question, codes=True, join=True), codes)."""
    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("registers"))
    report = ingest([FIXTURES / "registers"], settings, progress=False)
    assert report.indexed == 7 and not report.failed
    store, embedding = Store(settings), build_embedding(settings)
    retriever = hybrid_retriever(settings, embedding, MockLLM())  # the LLM is never called
    reranker = build_rerank_stage(settings, store, embedding)
    codes = CorpusCodes.from_settings(settings, store.lexical)
    lookup = CellLookup.from_settings(settings, store)

    def answer(question: str, named_codes: bool = True, join: bool = True, sunk: str = "", below: str = ""):
        """`sunk`: a document whose candidates are put behind all others (ranked below the window);
        `below`: one whose chunks were retrieved but ranked out of the candidates."""
        asked = codes.expand(question) if named_codes else question
        query = QueryBundle(asked)
        retrieved = retriever.retrieve(query)
        found = reranker.postprocess_nodes(retrieved, query_bundle=query)
        found = sorted(found, key=lambda n: n.node.metadata.get("doc") == sunk)
        fetch = (lambda text: retriever.retrieve(QueryBundle(text))) if join else None
        if below:
            found = [n for n in found if n.node.metadata.get("doc") != below]
        return lookup.answer(asked, found, fetch=fetch, beyond=retrieved if below else ())

    return answer, codes


def test_a_name_is_asked_with_the_code_the_corpus_gives_it(registers):
    _, codes = registers
    assert codes.expand("What is the duty kW of final water pump 1 at Millbrook?") \
        == "What is the duty kW of final water pump 1 at Millbrook (MBW)?"
    assert codes.expand("Who runs Oakhurst Lane's budget?") == "Who runs Oakhurst Lane's (OLW) budget?"
    # a longer name is another thing: the road is named after the works, not coded with it
    assert codes.expand("What caused the burst main on Millbrook Road?") \
        == "What caused the burst main on Millbrook Road?"
    # typed all in lower case: the whole name, in any case ("millbrook" alone may be the road)
    assert codes.expand("duty kw of final water pump 1 at millbrook treatment works?") \
        == "duty kw of final water pump 1 at millbrook treatment works (MBW)?"
    assert codes.expand("what caused the burst main on millbrook road?") \
        == "what caused the burst main on millbrook road?"
    assert codes.spelled("OLW has the lowest Energy; OLW-P-001 is a pump.") \
        == "OLW (Oakhurst Lane Works) has the lowest Energy; OLW-P-001 is a pump."
    # a cell's column in brackets is no spelling of the code; the name once
    assert codes.spelled("In kpis, OLW (Energy) is 386.") \
        == "In kpis, OLW (Oakhurst Lane Works) (Energy) is 386."
    assert codes.spelled("OLW (Oakhurst Lane Works) is 386.") == "OLW (Oakhurst Lane Works) is 386."


def test_a_row_named_by_its_values_and_a_column_by_its_contraction(registers):
    answer, _ = registers
    duty = answer("What's the duty kW for final water pump 1 at Millbrook?")
    assert duty.kind == "cell" and "90" in duty.text and duty.facts[0].row == "MBW-P-003"
    forecast = answer("What's the forecast for chemicals spend at Millbrook?")
    assert forecast.kind == "cell" and forecast.facts[0].column == "Fcst_GBPk"
    assert "331 GBP k" in forecast.text and "298" not in forecast.text
    blank = answer("When was raw water pump 2 at Millbrook last inspected?")
    assert blank.kind == "blank" and blank.facts[0].row == "MBW-P-002" and "2024-08-29" not in blank.text
    # without the code the register holds, no row is named: the pipeline answers, not a neighbour
    assert answer("What's the duty kW for final water pump 1 at Millbrook?", named_codes=False) is None


def test_a_count_holds_the_code_and_leaves_an_unread_column_to_the_pipeline(registers):
    answer, _ = registers
    on_call = answer("How many of the Oakhurst Lane people on the staff roster are on the on-call rota?")
    assert on_call.kind == "count" and on_call.text.startswith("In staff-roster, 2 rows")
    assert {f.row for f in on_call.facts} == {"S004", "S012"}
    # "the top criticality rating" is a condition on Crit that no value of the question matches
    assert answer("How many Millbrook assets in the register are at the top criticality rating?") is None


def test_the_compared_things_as_columns_and_a_measure_named_by_one_word(registers):
    answer, _ = registers
    least = answer("Which site used the least energy per megalitre in Q3 2024?")
    assert least.kind == "min" and least.facts[0].column == "OLW" and "386" in least.text
    assert "380" not in least.text  # the target is no site
    most = answer("Which incident in the log hit the most customers?")
    assert most.kind == "max" and most.facts[0].row == "INC-24-088"


def test_a_cell_reached_through_an_id_another_register_gives(registers):
    answer, _ = registers
    value = answer("What's the annual value of the contract Helen Okafor manages?")
    assert value.kind == "cell" and "132750" in value.text and "Helen Okafor" in value.text
    assert [f.doc for f in value.facts] == ["contracts-register.csv", "staff-roster.csv"]
    assert value.facts[0].row == "CT-2024-005"
    # Tom Aldous (S006) manages no contract: no cell, and no neighbour's
    assert answer("What's the annual value of the contract Tom Aldous manages?") is None


def test_a_row_named_by_a_proper_name_or_its_own_words_and_the_end_a_verb_asks(registers):
    """"the Pellow contract" is supplier Pellow Telemetry; "the Oakhurst Lane pump contract" is
    scope "Pump maintenance" (most scopes are some maintenance) at OLW, not the telemetry contract
    that also covers OLW; "run out" asks End_Dt, not Start_Dt."""
    answer, _ = registers
    ends = answer("When does the Pellow contract run out?")
    assert ends.kind == "cell" and ends.facts[0].column == "End_Dt" and "2026-01-31" in ends.text, ends
    starts = answer("When did the Pellow contract start?")
    assert starts.kind == "cell" and starts.facts[0].column == "Start_Dt", starts
    pump = answer("What's the annual value of the Oakhurst Lane pump contract?")
    assert pump.kind == "cell" and pump.facts[0].row == "CT-2022-013" and "96500" in pump.text, pump
    # two of the scope's three words: "Bulk liquid nitrogen"
    nitrogen = answer("when does the bulk nitrogen supply contract run out")
    assert nitrogen.kind == "cell" and nitrogen.facts[0].row == "CT-2023-031", nitrogen
    assert nitrogen.facts[0].column == "End_Dt" and "2026-09-30" in nitrogen.text


def test_a_row_named_by_two_values_is_read_wherever_its_register_ranks(registers):
    """Sunk below the best-ranked window, the register still answers a question naming one of its
    rows by two values and one other column; a row named by one value does not."""
    answer, _ = registers
    ends = answer("When does the Aquaserv contract at Millbrook run out?", sunk="contracts-register.csv")
    assert ends.kind == "cell" and ends.facts[0].row == "CT-2022-014" and ends.facts[0].column == "End_Dt"
    assert answer("What's the annual value of the Pellow contract?", sunk="contracts-register.csv") is None


def test_a_cell_of_another_register_reached_from_the_named_rows_id(registers):
    """The HV contract's manager is Mgr_ID S014, whose Role the staff roster gives; a count of the
    contracts ending in a year reads the end dates (CT-2025-002 starts in it)."""
    answer, _ = registers
    role = answer("Who's the manager on the Millbrook HV maintenance contract, and what's their role?")
    assert role.kind == "cell" and "Process Technician" in role.text and "Sam Whitlock" in role.text, role
    assert [f.doc for f in role.facts] == ["staff-roster.csv", "contracts-register.csv"]
    ending = answer("How many of our contracts end in 2025?")
    assert ending.kind == "count" and {f.row for f in ending.facts} == {"CT-2022-013", "CT-2022-014"}, ending
    assert "(End_Dt: 2025)" in ending.text
    # a year and no date column named: the rows holding the year, whichever date (once an IndexError)
    listed = answer("How many of our contracts are on the books for 2025?")
    assert listed.kind == "count" and len(listed.facts) == 3, listed


def test_two_rows_set_against_each_other_are_both_given_and_compared(registers):
    """"OLW-P-001 or OLW-P-003": both rows' Duty_kW and which is higher; the other pumps' figures
    (132 at Millbrook) are no part of it."""
    answer, _ = registers
    pair = answer("Which has the higher duty kW, OLW-P-001 or OLW-P-003?")
    assert pair.kind == "cell" and [f.row for f in pair.facts] == ["OLW-P-001", "OLW-P-003"], pair
    assert "160" in pair.text and "110" in pair.text and "OLW-P-001's is higher, by 50" in pair.text
    assert "132" not in pair.text
    # the register ranked below every other candidate: two rows and a column named still find it
    sunk = answer("Which has the higher duty kW, OLW-P-001 or OLW-P-003?", sunk=pair.facts[0].doc)
    assert sunk.kind == "cell" and sunk.text == pair.text


MEMO = """Revised dates:
- Kellbrook UV reactor train A commissioning: postponed from 14 April 2025
  to 2 June 2025 (lamp driver delivery delayed).
- Gimhae SCADA cutover: postponed from 19 May 2025 to 8 September 2025."""
SITES = {"KBW": "Kellbrook Water Treatment Works", "GMH": "Gimhae Water Treatment Plant"}


@pytest.mark.parametrize("sentence, backed", [
    ("The UV reactor at Kellbrook will be commissioned on 2 June 2025 [1].", True),
    ("The UV reactor at Gimhae (GMH) was commissioned on 2 June 2025 [1].", False),  # Kellbrook's date
    ("The Gimhae SCADA cutover is on 8 September 2025 [1].", True),
    ("The UV reactor was commissioned on 2 June 2025 [1].", True),  # no site named: other rules read it
])
def test_a_figure_a_chunk_gives_another_site_backs_no_sentence_of_this_one(sentence, backed):
    segment = Segment(0, 0, sentence, 0.9, True, [Reference(0, 0.9)])
    assert sited(segment, [MEMO], SITES).supported is backed


def test_a_name_the_table_never_gives_is_no_row_of_it(registers):
    """"the Northern Power Systems contract" meets the budget's Power row by one word: the table
    gives no such supplier, so no cell answers; its twin asking the power budget is answered."""
    answer, _ = registers
    assert answer("What is the Northern Power Systems contract budget at Millbrook?") is None
    power = answer("What is the power budget at Millbrook?")
    assert power.kind == "cell" and power.facts[0].value == "980", power


def test_a_register_ranked_out_of_the_candidates_answers_a_row_and_column_it_names(registers):
    """Retrieved, but ranked below every candidate: the asset register still gives the cell of the
    row and column the question names, and nothing where it names no column of it."""
    answer, _ = registers
    inspected = answer("When was MBW-P-003 last inspected?", below="asset-register.csv")
    assert inspected.kind == "cell" and inspected.facts[0].row == "MBW-P-003", inspected
    assert inspected.facts[0].column == "Last_Insp" and "2024-11-05" in inspected.text
    unnamed = answer("Who looks after MBW-P-003?", below="asset-register.csv")
    assert unnamed is None or unnamed.facts[0].doc != "asset-register.csv"
    # the question names a candidate document: the register out of the candidates is not read
    logged = answer("When was MBW-P-003 last inspected according to the opex budget?",
                    below="asset-register.csv")
    assert logged is None or logged.facts[0].doc != "asset-register.csv"
