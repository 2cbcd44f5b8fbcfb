"""Questions answered from table cells (rag/cells.py) over a real store: the pipeline's retrieval
and rerank, then `CellLookup.answer` on the kept chunks. A cell, a blank cell (never a
neighbour's value), a comparison across rows and a count, each cited to its cell's chunk; a
question that names no cell gets None; with facts off every one is None."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, fresh_settings
from llama_index.core.llms import MockLLM
from llama_index.core.schema import QueryBundle

from ingestion.pipeline import ingest
from rag.cells import CellLookup
from rag.models import build_embedding
from rag.postprocessors import build_rerank_stage
from rag.retrieval import hybrid_retriever
from rag.store import Store


@pytest.fixture(scope="module")
def tables(base_settings, tmp_path_factory):
    """The four fixture tables (a claims register, a loss triangle, Korean branch figures, courses)
    ingested, and a function: question -> the reranked candidates, as the pipeline keeps them."""
    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("tables"))
    report = ingest([FIXTURES / "tables"], settings, progress=False)
    assert report.indexed == 4 and not report.failed
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
    rows = ask(tables, "How many claims does the register list?")  # its rows, under claim_id
    assert rows.kind == "count" and "5 claim_ids" in rows.text and len(rows.facts) == 5
    count = ask(tables, "How many claims were open at 24 months?")
    assert count.kind == "count" and "2 rows" in count.text
    assert {f.row for f in count.facts} == {"CL-2023-002", "CL-2023-004"}


def test_no_cell_named_no_answer_and_facts_off(tables):
    assert ask(tables, "Who handles the claims of Nordlys?") is None  # two rows: no one cell
    assert ask(tables, "What is the reinsurance retention of the programme?") is None
    assert ask(tables, "What is the incurred amount of claim CL-2023-004?", enabled=False) is None


def test_prose_of_another_document_that_gives_another_figure_leaves_it_to_the_pipeline(tables):
    """A cell another retrieved document contradicts in prose is not answered from the table."""
    from llama_index.core.schema import NodeWithScore, TextNode

    settings, candidates = tables
    question = "What was the paid amount for accident year 2020 at 36 months?"
    found = candidates(question)
    lookup = CellLookup.from_settings(settings, Store(settings))
    assert "801" in lookup.answer(question, found).text
    memo = TextNode(text="Accident year 2020 stood at 795 paid at 36 months after the restatement.",
                    metadata={"doc": "restatement-memo.md"})
    assert lookup.answer(question, [*found, NodeWithScore(node=memo, score=0.1)]) is None
    agreeing = TextNode(text="Accident year 2020 stood at 801 paid at 36 months.",
                        metadata={"doc": "memo.md"})
    assert "801" in lookup.answer(question, [*found, NodeWithScore(node=agreeing, score=0.1)]).text
    erratum = TextNode(text="Accident year 2020 paid at 36 months should read 810, not 801.",
                       metadata={"doc": "erratum.md"})  # the cell's figure as the corrected one
    assert lookup.answer(question, [*found, NodeWithScore(node=erratum, score=0.1)]) is None


def test_a_table_ranked_below_prose_answers_unless_the_prose_names_its_row(tables):
    """A cell of a table in one of the `top_chunks` best chunks answers, unless a better-ranked
    chunk of another document names the cell's row: that chunk may hold the answer itself."""
    from llama_index.core.schema import NodeWithScore, TextNode

    settings, candidates = tables
    question = "What is the incurred amount of claim CL-2023-004?"
    found = candidates(question)
    lookup = CellLookup.from_settings(settings, Store(settings))

    def ahead(text: str) -> list:
        return [NodeWithScore(node=TextNode(text=text, metadata={"doc": "notes.md"}), score=1.0), *found]

    assert "240000" in lookup.answer(question, ahead("Claims notes: the register was audited in May.")).text
    assert lookup.answer(question, ahead("Claim CL-2023-004: incurred is under review.")) is None
    narrow = CellLookup.from_settings(settings.model_copy(
        update={"facts": settings.facts.model_copy(update={"top_chunks": 1})}), Store(settings))
    assert narrow.answer(question, ahead("Claims notes: the register was audited in May.")) is None
