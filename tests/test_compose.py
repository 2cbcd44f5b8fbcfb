"""Answers composed from evidence units (rag/compose.py): the reply read, a row quoted with its
units, and the pipeline's composed answers (the real llama.cpp model), its widening and its
stream (a scripted model, whose replies are chosen)."""

from __future__ import annotations

import pytest
from conftest import BATTERY_Q, FIXTURES, ScriptedLLM, fresh_settings

from rag.compose import notice, picks, quoted
from rag.context import Unit
from rag.text import MARKER


def with_mode(settings, mode: str, widen_steps: int = 0):
    answer = settings.answer.model_copy(update={"mode": mode})
    context = settings.context.model_copy(update={"widen_steps": widen_steps, "widen_time_s": 600.0})
    return settings.model_copy(update={"answer": answer, "context": context})


def test_the_reply_gives_the_numbers_picked_and_the_addition():
    assert picks("2", 3) == ([2], "")
    assert picks("1, 3. Yes, P-10 ran longer.", 3) == ([1, 3], "Yes, P-10 ran longer.")
    assert picks("[2] and [9]", 3) == ([2], "")  # 9: no such unit
    assert picks("Answer lines (English): 2, 2\nQuestion: what else?", 3) == ([2], "")
    assert picks("2번, 3번", 3) == ([2, 3], "")
    assert picks("0", 3) == ([], "")
    assert picks("The cell reached 61 degrees.", 3)[0] == []


def test_a_quoted_row_keeps_each_figure_with_its_unit():
    row = Unit(0, 0, "Test: FT-1; Peak force (kN): 61.2; Result (verdict): pass")
    assert quoted(row) == "Test: FT-1; Peak force: 61.2 kN; Result (verdict): pass"
    labelled = Unit(0, 0, "Measurement: Chest deflection (mm); Driver: 31; Passenger: 28; Note: late")
    assert quoted(labelled) == "Measurement: Chest deflection; Driver: 31 mm; Passenger: 28 mm; Note: late"
    sentence = Unit(0, 1, "The force (peak) was 61.2 kN.")
    assert quoted(sentence) == sentence.text


def test_a_composed_answer_quotes_its_units_and_cites_them_exactly(pipeline):
    """With mode = compose, each sentence of the answer is a unit of a source, cited to that
    source at 1.0; with mode = generate (composition off) the model writes it and the matcher
    scores it below 1. (Which units the 1.5B model picks is measured in docs/BENCHMARKS.md.)"""
    settings = pipeline.settings
    answers = {}
    try:
        for mode in ("compose", "generate"):
            pipeline.settings = with_mode(settings, mode)
            answers[mode] = pipeline.answer(BATTERY_Q)
    finally:
        pipeline.settings = settings
    composed, generated = answers["compose"], answers["generate"]
    assert composed.answerable and composed.mode == "composed" and composed.segments
    for segment in composed.segments:
        (reference,) = segment.references
        source = composed.sources[reference.ref - 1]
        assert reference.score == 1.0 and reference.chunk_id == source.chunk_id
        assert MARKER.sub("", segment.text).strip() in " ".join(source.text.split())
    assert composed.answer == "\n".join(segment.text for segment in composed.segments)
    assert generated.mode == "generated" and generated.answerable and "61" in generated.answer
    assert all(r.score < 1.0 for segment in generated.segments for r in segment.references)


def test_no_answer_in_the_evidence_widens_it_reusing_the_prompt_read(indexed):
    """The model finds nothing in the first evidence ("0"): the evidence is widened once, the
    units already shown keep their numbers at the front of the prompt (llama.cpp reuses what it
    has read), and the stream shows notices, never the numbers the model writes."""
    from rag.pipeline import RagPipeline

    llm = ScriptedLLM(replies=["0", "1"], prompts=[])
    pipeline = RagPipeline(with_mode(indexed, "compose", widen_steps=1), llm=llm)
    streamed: list[str] = []
    answer = pipeline.answer(BATTERY_Q, on_token=streamed.append)
    assert answer.answerable and answer.mode == "composed" and answer.draft == "1"
    assert [step["reason"] for step in answer.widened] == ["no answer"]
    assert {"widen1_context", "widen1_generate", "widen1_match"} <= set(answer.timings_ms)
    first, second = llm.prompts
    shown = first.split("Numbered lines:\n", 1)[1].rsplit("\n\nQuestion:", 1)[0]
    assert second.startswith(first.rsplit("\n\nQuestion:", 1)[0]) and len(second) > len(first), shown
    assert "".join(streamed) == notice("compose", "English") + notice("widen", "English") + \
        notice("compose", "English")
    assert answer.segments[0].references[0].score == 1.0

    none = RagPipeline(with_mode(indexed, "compose", widen_steps=1),
                       llm=ScriptedLLM(replies=["0", "0"], prompts=[]))
    refused = none.answer(BATTERY_Q)
    assert refused.refused_by == "model" and len(refused.widened) == 1
    # Widening off (widen_steps = 0): the first "0" is the answer.
    once = RagPipeline(with_mode(indexed, "compose"), llm=ScriptedLLM(replies=["0", "1"], prompts=[]))
    assert once.answer(BATTERY_Q).refused_by == "model"


@pytest.fixture(scope="module")
def tables(base_settings, tmp_path_factory):
    from ingestion.pipeline import ingest

    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("tables"))
    assert not ingest([FIXTURES / "tables"], settings, progress=False).failed
    return settings


def switched(settings, section: str, enabled: bool):
    changed = getattr(settings, section).model_copy(update={"enabled": enabled})
    return settings.model_copy(update={section: changed})


def test_a_cell_answer_and_a_premise_refusal_flow_through_the_pipeline(tables):
    """A named cell is answered from the facts, cited at 1.0 to its chunk, and a question about a
    claim no document holds is refused by the premise check: neither asks the model (its script
    is empty). With the facts or the premise check off, the model is asked instead."""
    from rag.pipeline import RagPipeline

    silent = ScriptedLLM(replies=[], prompts=[])
    pipeline = RagPipeline(tables, llm=silent)
    cell = pipeline.answer("What is the incurred amount of claim CL-2023-004?")
    assert cell.mode == "cells" and cell.answerable and cell.segments[0].references[0].score == 1.0
    assert cell.sources and {s.doc for s in cell.sources} == {"claims-register.csv"}
    false = pipeline.answer("What is the incurred amount of claim CL-2023-099?")
    assert false.refused_by == "premise" and "CL-2023-099" in false.answer
    assert silent.prompts == []

    for section, question in (("facts", "What is the incurred amount of claim CL-2023-004?"),
                              ("premise", "What is the incurred amount of claim CL-2023-099?")):
        # the model declines: the refusal stands, though the tables hold Korean documents (only a
        # premise refusal for something the evidence lacks is asked of the other language)
        asked = ScriptedLLM(replies=["I cannot answer this from the documents."], prompts=[])
        answer = RagPipeline(switched(tables, section, False), llm=asked).answer(question)
        assert answer.mode == "generated" and answer.refused_by == "model" and len(asked.prompts) == 1


def test_a_heading_the_model_picks_is_no_answer():
    """The model picking a memo's letterhead ("KESTREL ANALYTICAL BV - GHENT SITE") picks nothing:
    with only headings picked there is no composed answer; beside a sentence, the sentence stands."""
    from llama_index.core.schema import NodeWithScore, TextNode

    from rag.answer import Source
    from rag.compose import Composer
    from rag.context import Evidence

    units = [Unit(0, 0, "KESTREL ANALYTICAL BV - GHENT SITE"), Unit(0, 1, "INTERNAL MEMO"),
             Unit(0, 2, "No client samples were lost in the excursion.")]
    node = NodeWithScore(node=TextNode(text="\n".join(u.text for u in units), metadata={"doc": "memo.txt"}),
                         score=1.0)
    evidence = Evidence("", [node], units, [0])
    composer = Composer(prompt="", matcher=None)  # no addition to match: the matcher is not called
    question = "Which client samples were lost when the Ghent freezer failed?"
    assert composer.compose("1, 2", evidence, Source.listed([node]), question=question) is None
    composed = composer.compose("1, 3", evidence, Source.listed([node]), question=question)
    assert composed.text == "No client samples were lost in the excursion [1]."
