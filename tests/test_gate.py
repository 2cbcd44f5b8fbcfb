"""The references gate (rag/pipeline.py, rag/asked.py): an answer is given only where a sentence
a source supports gives what the question asks. A question that asks for a figure, answered
by a supported sentence that holds none beside an invented figure, or one in another unit than
the one it counts in, is refused; its twin whose figure is supported is answered, and so is a
question that asks for no figure."""

from __future__ import annotations


import pytest
from conftest import ScriptedLLM, fixture_store


APPLIES = "The expenses policy applies to all staff travelling on client or internal business."


@pytest.fixture(scope="module")
def store(base_settings, tmp_path_factory):
    return fixture_store(base_settings, tmp_path_factory, "gate", 1)


@pytest.mark.parametrize(("question", "reply", "answered"), [
    ("What mileage rate is paid for using a private car on business trips?",
     f"{APPLIES} The mileage rate for a private car is EUR 0.40 per km.", False),
    ("What is the daily meal allowance on business trips?",
     f"{APPLIES} The daily meal allowance is EUR 62.", True),
    ("Who does the expenses policy apply to?", APPLIES, True),
    # a count in days is not answered by a sum in euros: the figure is in the unit asked
    ("Within how many days of a trip are claims filed?",
     f"{APPLIES} Receipts are kept for every item above EUR 25.", False),
    ("Within how many days of a trip are claims filed?",
     f"{APPLIES} Claims are filed within 45 days of the trip.", True),
])
def test_an_answer_must_give_the_figure_it_was_asked_for(store, question, reply, answered):
    from rag.pipeline import RagPipeline

    answer = RagPipeline(store, llm=ScriptedLLM(replies=[reply], prompts=[])).answer(question)
    assert answer.segments and answer.segments[0].supported, answer.segments  # the policy's own words
    assert answer.answerable is answered, answer.answer
    assert answer.refused_by == (None if answered else "references")
