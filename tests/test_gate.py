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
    # the document's heading, quoted back, answers nothing
    ("Which trips does the expenses policy cover?", "EXPENSES POLICY [1]", False),
])
def test_an_answer_must_give_the_figure_it_was_asked_for(store, question, reply, answered):
    from rag.pipeline import RagPipeline

    answer = RagPipeline(store, llm=ScriptedLLM(replies=[reply], prompts=[])).answer(question)
    assert answer.segments and answer.segments[0].supported, answer.segments  # the policy's own words
    assert answer.answerable is answered, answer.answer
    assert answer.refused_by == (None if answered else "references")


@pytest.mark.parametrize(("question", "backed", "lacking"), [
    # a date is no amount of notice; a figure is
    ("How much notice must we give to end the agreement?",
     "We must give notice by 28 February 2025, after the Q4 review.", "no figure"),
    ("How much notice must we give to end the agreement?", "We must give 90 days' notice.", None),
    # a schedule's number labels it, and "until 30 April" is a date: no length of validity
    ("How long is a quote valid for?", "The fees in Schedule 2 apply until 30 April 2025.", "no figure"),
    ("How long is a quote valid for?", "Quotes are valid for 90 days.", None),
    ("When does the agreement end?", "It ends on 30 June 2027.", None),
    # a "where" answered with its own words and a date says no place
    ("Where do visitors check in at the Rotterdam warehouse when they arrive?",
     "You can check in at the Rotterdam warehouse on 31 October.", "no place"),
    ("Where do visitors check in at the Rotterdam warehouse?",
     "Visitors check in at the gatehouse reception at Gate 2.", None),
    # the question's own figure said back is no answer; a figure of the answer's own is
    ("How warm did the Ghent -80 freezer get during the excursion?",
     "The Ghent -80 freezer got to -80 degrees Celsius during the excursion.", "no figure"),
    ("How warm did the Ghent -80 freezer get during the excursion?",
     "The Ghent -80 freezer warmed to -52 °C during the excursion.", None),
])
def test_what_the_question_asks_is_what_the_answer_must_give(question, backed, lacking):
    from rag.asked import lacks

    assert lacks(question, [backed]) == lacking


@pytest.mark.parametrize(("reply", "mode"), [
    ("The daily meal allowance is EUR 62 [1].", "generated"),
    # a site the document never names (another office's allowance, for all the reader knows) is
    # not backed: the policy's own sentence is quoted instead (rag/quotes.py)
    ("The daily meal allowance at the Oslo office is EUR 62 [1].", "composed"),
])
def test_a_name_the_cited_document_never_gives_is_not_backed(store, reply, mode):
    from rag.pipeline import RagPipeline

    answer = RagPipeline(store, llm=ScriptedLLM(replies=[reply], prompts=[])).answer(
        "What is the daily meal allowance?")
    assert answer.answerable and answer.mode == mode and "Oslo" not in answer.answer, answer.answer


def test_a_reference_is_kept_only_where_its_document_gives_the_segments_names():
    from rag.names import named
    from rag.references import Reference, Segment

    segment = Segment(0, 0, "The yard speed limit at the Leeds site is 10 km/h [1][2].", 0.9, True,
                      [Reference(0, 0.9), Reference(1, 0.7)])
    docs = ["rotterdam-handbook.md", "leeds-handbook.md"]
    chunks = ["Yard speed limit: 10 km/h.", "Vehicles in the yard keep to 10 km/h."]
    documents = {"rotterdam-handbook.md": "Rotterdam site handbook. Yard speed limit: 10 km/h.",
                 "leeds-handbook.md": "Leeds site handbook. Vehicles in the yard keep to 10 km/h."}
    kept = named(segment, docs, chunks, documents.get)
    assert kept.supported and [r.chunk for r in kept.references] == [1] and kept.score == 0.7
    rotterdam = {"rotterdam-handbook.md": documents["rotterdam-handbook.md"]}
    alone = named(segment, docs[:1] * 2, chunks, rotterdam.get)
    assert not alone.supported and alone.references == []
    korean = ["부산 터미널 안내. 야드 제한 속도: 10 km/h."] * 2  # the other script: names spelled otherwise
    assert named(segment, ["busan.md"] * 2, korean, {"busan.md": korean[0]}.get) == segment
