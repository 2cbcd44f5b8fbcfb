"""The prompt's context: chunks cut into sentences and table rows, the relevant ones chosen within
the token budget, each chunk labelled with its place and header."""

from __future__ import annotations

import pytest
from llama_index.core.schema import QueryBundle

from rag.context import units

TABLE = """# Results

| Measurement | Driver | Passenger |
|---|---|---|
| HIC15 | 412 | 388 |
| Chest deflection (mm) | 31 | 28 |

- All values stayed below their limits. The column moved 38 mm."""


def test_units_are_rows_with_their_columns_and_sentences_in_order():
    got = units(TABLE)
    assert [u.text for u in got] == [
        "Measurement: HIC15; Driver: 412; Passenger: 388",
        "Measurement: Chest deflection (mm); Driver: 31; Passenger: 28",
        "- All values stayed below their limits.",
        "The column moved 38 mm.",
    ]
    assert all(u.lead == ("Results",) for u in got) and [u.position for u in got] == [0, 1, 2, 3]
    markdown = units(TABLE, tables="markdown")
    assert markdown[0].text == "| HIC15 | 412 | 388 |"
    assert markdown[0].lead == ("Results", "| Measurement | Driver | Passenger |", "|---|---|---|")


ERRATUM = """ERRATUM - Q3 2024 BUSINESS REPORT

1. Annual recurring revenue (ARR) at 30 September 2024

   Stated in the report: EUR 33.1M
   Corrected ARR figure: EUR 32.6M

   Reason: a prepaid contract was counted twice.

Revenue and every other figure are unaffected."""


def test_a_plain_title_leads_its_fields_and_a_correction_shows_only_its_value_in_force():
    # a record's fields (a JSON document's key paths) are a unit each, not one run-on sentence
    record = "add_ons.premium_support.price_per_month: 900\nadd_ons.extra_api_calls.price_per_block_month: 75"
    assert [u.text for u in units(record)] == record.splitlines()
    got = units(ERRATUM)
    assert [(u.lead, u.text) for u in got] == [
        ((), "ERRATUM - Q3 2024 BUSINESS REPORT"),
        (("Annual recurring revenue (ARR) at 30 September 2024",), "Corrected ARR figure: EUR 32.6M"),
        (("Annual recurring revenue (ARR) at 30 September 2024",),
         "Reason: a prepaid contract was counted twice."),
        ((), "Revenue and every other figure are unaffected."),
    ]


@pytest.fixture(scope="module")
def sample_pipeline(sample_indexed):
    from rag.pipeline import RagPipeline

    return RagPipeline(sample_indexed)


def context_for(pipeline, question: str) -> tuple[str, list]:
    query = QueryBundle(question)
    top = pipeline.reranker.postprocess_nodes(pipeline.current_retriever().retrieve(query),
                                              query_bundle=query)
    return pipeline.context.build(question, top, pipeline.budget(pipeline.room(question)))


def test_the_relevant_rows_of_a_long_table_are_chosen_within_the_budget(sample_pipeline):
    """The 20-row sled table does not fit the budget: the row the question names is chosen,
    though it is neither the first row nor the last."""
    budget = sample_pipeline.budget(sample_pipeline.room("x"))
    for question, row in (("Which sled test failed?", "run: SL-13;"),
                          ("What peak deceleration did sled run SL-05 reach?", "run: SL-05;")):
        context, shown = context_for(sample_pipeline, question)
        assert row in context, context
        assert context.count("run: SL-") < 20  # rows were chosen, not the whole table
        assert sample_pipeline.count_tokens(context) <= budget
        assert context.startswith("[1] sled-tests.csv") and shown[0].node.metadata["doc"] == "sled-tests.csv"


def test_each_chunk_is_labelled_and_header_fields_written_once_per_document(sample_pipeline):
    context, shown = context_for(sample_pipeline, "What HIC15 did the driver dummy reach in FT-2024-07?")
    assert "Measurement: HIC15; Driver: 412; Passenger: 388; Limit: 700" in context
    labels = [line for line in context.splitlines() if line.startswith("[")]
    assert len(labels) == len(shown) >= 2
    assert labels[0].startswith("[1] FT-2024-07.pptx, slide 3: Results "
                                "(Title: Frontal impact test FT-2024-07; Test Name: FT-2024-07;")
    repeated = [label for label in labels[1:] if "FT-2024-07.pptx" in label]
    assert repeated and all("Region:" not in label for label in repeated)  # the title only, after the first


def test_an_erratum_item_in_prose_shows_its_corrected_value_under_its_label():
    item = ("2. Written customer complaints. The report states 1,284. Complaints received through\n"
            "the web chat channel were omitted. The corrected figure is 1,348.")
    assert [(u.lead, u.text) for u in units(item)] == [
        (("Written customer complaints",), "Complaints received through the web chat channel were omitted."),
        (("Written customer complaints",), "The corrected figure is 1,348."),
    ]


def test_a_published_field_is_hidden_only_beside_its_correction():
    block = ("Report: Q2 2025 Depot Report\nPublished: 14 July 2025\n\n"
             "1. Hull - pallets despatched (section 2 table and section 3 narrative)\n\n"
             "   Published:  48,300\n   Correct:    43,800")
    assert [(u.lead, u.text) for u in units(block)] == [
        ((), "Report: Q2 2025 Depot Report"), ((), "Published: 14 July 2025"),
        (("Hull - pallets despatched",), "Correct: 43,800")]
