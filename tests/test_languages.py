"""Questions over corpora of two languages: translated only when the corpus lacks the question's
language, and then ranked by the better of the question and its translation. Scripted LLM
replies (the translation and the answer), so that what is tested is the pipeline's choice."""

from __future__ import annotations

import shutil

import pytest
from conftest import FIXTURES, SAMPLE, ScriptedLLM, fresh_settings
from test_formats import errors

from ingestion.pipeline import ingest
from rag.settings import Settings

KOREAN_Q = "TR-07 시험에서 열 폭주는 가열을 시작하고 몇 초 뒤에 발생했나요?"
KOREAN_ANSWER = "열 폭주는 가열을 시작하고 438초 뒤에 발생했다 [1]."


def store(base_settings, tmp_path_factory, files) -> Settings:
    folder = tmp_path_factory.mktemp("docs")
    for file in files:
        shutil.copy(file, folder / file.name)
    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("storage"))
    report = ingest([folder], settings, progress=False)
    assert report.indexed == len(files) and not report.failed
    return settings


@pytest.fixture(scope="module")
def mixed(base_settings, tmp_path_factory):
    """One document in three is Korean."""
    return store(base_settings, tmp_path_factory, [FIXTURES / "battery.md", FIXTURES / "cafeteria.md",
                                                   FIXTURES / "answers" / "thermal-runaway-ko.md"])


@pytest.fixture(scope="module")
def mostly_english(base_settings, tmp_path_factory):
    """One document in seven is Korean: the corpus lacks Korean."""
    english = [FIXTURES / "battery.md", FIXTURES / "cafeteria.md", FIXTURES / "answers" / "cell-tests.md",
               *(SAMPLE / "docs" / name
                 for name in ("glossary.md", "programme-overview.md", "test-procedure.md"))]
    return store(base_settings, tmp_path_factory, [*english, FIXTURES / "answers" / "thermal-runaway-ko.md"])


def pipeline(settings, *replies):
    from rag.pipeline import RagPipeline

    # One reply per LLM call, as scripted: no widening asks for another.
    settings = settings.model_copy(update={"context": settings.context.model_copy(update={"widen_steps": 0})})
    return RagPipeline(settings, llm=ScriptedLLM(replies=list(replies), prompts=[]))


def test_a_question_in_a_language_the_corpus_has_is_not_translated(mixed):
    asker = pipeline(mixed, KOREAN_ANSWER)
    answer = asker.answer(KOREAN_Q)
    assert answer.translated_question is None and len(asker.llm.prompts) == 1  # the answer's prompt only
    assert answer.answerable and answer.sources[0].doc == "thermal-runaway-ko.md", answer.segments


def test_a_translated_question_keeps_the_candidates_its_own_wording_ranks_best(mostly_english):
    """The translation (a vague one) ranks an English test report first; the question as asked
    ranks the Korean report first, and the better of the two decides."""
    vague = "How did the battery pack test go?"
    answer = pipeline(mostly_english, vague, KOREAN_ANSWER).answer(KOREAN_Q)
    assert answer.translated_question == vague
    assert answer.sources[0].doc == "thermal-runaway-ko.md", [s.doc for s in answer.sources]
    assert answer.answerable, answer.segments


def test_evidence_in_the_other_script_gets_the_question_in_its_language_beside_it(mixed):
    """The corpus has English, so the question is not translated for retrieval; but the evidence
    kept is Korean, and the small model reads it far better with the question in Korean too."""
    english = "In test TR-07, how many seconds after heating began did thermal runaway occur?"
    asker = pipeline(mixed, KOREAN_Q, "Thermal runaway occurred 438 seconds after heating began [1].")
    answer = asker.answer(english, docs=["thermal-runaway-ko.md"])
    assert len(asker.llm.prompts) == 2 and f"{english} ({KOREAN_Q})" in asker.llm.prompts[-1]
    assert answer.translated_question == KOREAN_Q and "translate" in answer.timings_ms
    assert answer.answerable and answer.sources[0].doc == "thermal-runaway-ko.md", answer.segments


REFUSAL = "I cannot answer this from the documents."
ENGLISH_Q = "In test TR-07, how many seconds after heating began did thermal runaway occur?"


def test_a_refusal_by_the_model_is_not_asked_of_the_other_language(mixed, base_settings, tmp_path_factory):
    """The model finds no answer in what the English question ranks first: the refusal stands,
    one call, though the corpus holds Korean documents (the small model, answering from the other
    language's nearest passages, answered questions the documents cannot answer). Over an
    English-only corpus the question naming a test no document names is refused before any call."""
    asker = pipeline(mixed, REFUSAL, "unused")
    refused = asker.answer(ENGLISH_Q, docs=["battery.md", "thermal-runaway-ko.md"])
    assert refused.refused_by == "model" and len(asker.llm.prompts) == 1 and not refused.widened
    english = store(base_settings, tmp_path_factory, [FIXTURES / "battery.md", FIXTURES / "cafeteria.md"])
    alone = pipeline(english, REFUSAL)
    refused = alone.answer(ENGLISH_Q)
    assert refused.refused_by == "premise" and not alone.llm.prompts and not refused.widened


def test_a_name_only_the_other_language_spells_is_looked_for_there(mostly_english):
    """"Ulsan" is in no English document the first round keeps, so the premise check refuses it
    without a model call; the corpus holds a Korean report, which spells it 울산: the question is
    asked again of the Korean documents alone, the closest by e5 first, whatever the (scripted,
    and poor) translation written beside it in the prompt says."""
    question = "At the Ulsan test site, how many seconds after heating began did thermal runaway occur?"
    runaway = "Thermal runaway occurred 438 seconds after heating began [1]."
    asker = pipeline(mostly_english, "하이소 시험장 질문입니까?", runaway)
    answer = asker.answer(question, retrieve_k=4, keep_k=1)  # the Korean report is not kept
    assert answer.answerable and answer.widened[-1]["reason"] == "other language", answer.segments
    assert answer.timings_ms["first_premise"] >= 0 and "first_generate" not in answer.timings_ms
    assert [s.doc for s in answer.sources] == ["thermal-runaway-ko.md"] * len(answer.sources)
    assert "thermal-runaway-ko.md" in {r.doc for r in answer.segments[0].references}
    assert not errors("answer.schema.json", answer.to_dict())  # docs/FORMATS.md's schema knows the reason
    # a figure reads alike in both languages: absent from the Korean report too, it is refused
    asker = pipeline(mostly_english, "unused", "unused")
    false = asker.answer(
        "Why did the Orion pack's nail penetration test at the Ulsan site run for 512 seconds?", retrieve_k=4,
        keep_k=1)
    assert false.refused_by == "premise" and "512" in false.answer and not false.widened
    assert not asker.llm.prompts
    # the widening's time cap spent, no other round starts
    capped = mostly_english.model_copy(update={"context": mostly_english.context.model_copy(
        update={"widen_time_s": 1e-6})})
    hurried = pipeline(capped, "unused").answer(question, retrieve_k=4, keep_k=1)
    assert hurried.refused_by == "premise" and not hurried.widened
