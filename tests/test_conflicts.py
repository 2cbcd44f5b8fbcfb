"""Conflicts (rag/conflicts.py): two documents no currency relation orders give the answer's
thing different figures: the Answer carries both values and both citations, its text and the CLI
rendering say "Sources disagree"; a figure the answer does not concern is not reported; documents
currency orders are no conflict unless the answer gave the older's value."""

from __future__ import annotations

import shutil
from dataclasses import replace
from types import SimpleNamespace

import pytest
from conftest import FIXTURES, ScriptedLLM, fresh_settings
from test_formats import errors

from app.render import render_answer
from ingestion.pipeline import ingest
from rag.answer import AnswerSegment, Source
from rag.conflicts import ConflictFinder, restated, said

SURVEY, REGISTER = "north-site-survey.md", "facilities-register.md"
P1, P2 = "travel-policy-v1.md", "travel-policy-v2.md"
DOCKS_Q = "How many loading docks does the north warehouse have?"


@pytest.fixture(scope="module")
def store(base_settings, tmp_path_factory):
    folder = tmp_path_factory.mktemp("conflicts")
    (folder / "docs").mkdir()
    for name in (SURVEY, REGISTER, P1, P2):
        shutil.copy(FIXTURES / "currency_answers" / name, folder / "docs" / name)
    settings = fresh_settings(base_settings, folder / "storage")
    assert ingest([folder / "docs"], settings, progress=False).indexed == 4
    return settings


def test_an_unlinked_conflict_is_reported_with_both_citations(store, pipeline):
    """The real LLM answers; whichever figure it gives, the other document's is reported."""
    from rag.pipeline import RagPipeline

    answer = RagPipeline(store, llm=pipeline.llm).answer(DOCKS_Q)
    refs = {s.doc: s.ref for s in answer.sources}
    assert answer.answerable and len(answer.conflicts) == 1, answer.answer
    conflict = answer.conflicts[0]
    assert {(v["value"], v["ref"], v["doc"]) for v in conflict["values"]} == {
        ("14", refs[SURVEY], SURVEY), ("12", refs[REGISTER], REGISTER)}
    assert conflict["current"] is None and "docks" in conflict["what"]
    assert "Sources disagree" in answer.answer and "conflicts" in answer.timings_ms
    shown = render_answer(answer.to_dict())
    assert f"[{refs[SURVEY]}] gives 14 ({SURVEY})" in shown and f"[{refs[REGISTER]}] gives 12" in shown


def test_ordered_documents_are_no_conflict_and_another_figure_is_not_reported(store):
    from rag.pipeline import RagPipeline

    replies = ["The daily meal allowance is EUR 55 per traveller [1].",
               "The south office has 3 meeting rooms [1]."]
    pipeline = RagPipeline(store, llm=ScriptedLLM(replies=replies, prompts=[]))
    answer = pipeline.answer("What is the daily meal allowance on business trips?")
    assert {s.doc for s in answer.sources} >= {P1, P2} and answer.conflicts == []
    # Both documents hold docks figures that differ; the answer is about meeting rooms.
    answer = pipeline.answer("How many meeting rooms does the south office have?")
    assert REGISTER in {s.doc for s in answer.sources} and answer.conflicts == []


def test_with_currency_ignored_the_versions_are_a_conflict(store):
    from rag.pipeline import RagPipeline

    off = fresh_settings(store, store.storage_dir, currency={"prefer_current": False})
    llm = ScriptedLLM(replies=["The daily meal allowance is EUR 55 [1]."], prompts=[])
    answer = RagPipeline(off, llm=llm).answer("What is the daily meal allowance on business trips?")
    assert [(c["values"][1]["doc"], c["current"]) for c in answer.conflicts] == [(P1, None)]


def test_korean_wording_and_a_refusal_checked_for_the_question():
    finder = ConflictFinder(lambda doc: [])
    sources = [SimpleNamespace(ref=1, doc="a.md", text="북부 창고의 하역장은 14개이다. 사무실은 3층이다."),
               SimpleNamespace(ref=2, doc="b.md", text="북부 창고의 하역장은 12개이다. 사무실은 5층이다.")]
    found, added = finder.find("북부 창고의 하역장은 몇 개인가?", "북부 창고의 하역장은 14개이다 [1].",
                               sources)
    assert added == []
    assert [[v["value"] for v in c.to_dict()["values"]] for c in found] == [["14", "12"]]
    text = said("답 [1].", found, "Korean")
    assert text.startswith("답 [1]. 출처마다 값이 다릅니다") and text.endswith(": [1]: 14, [2]: 12.")
    # The model declined: the question's thing is compared.
    refused, _ = finder.find("북부 창고의 하역장은 몇 개인가?", "", sources, gate="model")
    assert [[v["ref"] for v in c.values] for c in refused] == [[1, 2]]
    assert finder.find("북부 창고의 하역장은 몇 개인가?", "", sources, gate="retrieval") == ([], [])


def test_a_chunk_ranked_below_the_kept_ones_that_disagrees_joins_the_sources(store, pipeline):
    """Only the survey is kept; the register, ranked next, gives the docks another figure: it is
    added as source [2] and cited. With no candidates read, the answer says nothing of it."""
    from rag.pipeline import RagPipeline

    llm = ScriptedLLM(replies=["The north warehouse has 14 loading docks [1]."] * 2, prompts=[])
    answer = RagPipeline(store, llm=llm).answer(DOCKS_Q, docs=[SURVEY, REGISTER], keep_k=1)
    assert [s.doc for s in answer.sources] == [SURVEY, REGISTER], answer.answer
    assert [(v["value"], v["ref"]) for c in answer.conflicts for v in c["values"]] == [("14", 1), ("12", 2)]
    assert "[2] gives 12" in answer.answer
    off = fresh_settings(store, store.storage_dir, currency={"conflict_candidates": 0})
    answer = RagPipeline(off, llm=llm).answer(DOCKS_Q, docs=[SURVEY, REGISTER], keep_k=1)
    assert [s.doc for s in answer.sources] == [SURVEY] and answer.conflicts == []


def test_a_draft_no_source_backs_is_answered_by_the_disagreement(store):
    """The model mixes the two documents' words into a sentence neither backs (or declines): the
    answer is the disagreement itself, both values cited at 1.0, no longer a refusal."""
    from rag.pipeline import RagPipeline

    replies = ["The north warehouse has 13 loading docks, rebuilt after the 2019 fire [1].",
               "I cannot answer this from the documents."]
    pipeline = RagPipeline(store, llm=ScriptedLLM(replies=replies, prompts=[]))
    for reply in replies:
        answer = pipeline.answer(DOCKS_Q)
        refs = {s.doc: s.ref for s in answer.sources}
        assert answer.answerable and answer.mode == "conflict" and answer.draft == reply, answer.answer
        assert not errors("answer.schema.json", answer.to_dict())  # docs/FORMATS.md's schema knows the mode
        assert answer.answer.startswith("Sources disagree") and len(answer.segments) == 1
        assert {(r.doc, r.score) for r in answer.segments[0].references} == {(SURVEY, 1.0), (REGISTER, 1.0)}
        assert f"[{refs[SURVEY]}] gives 14" in answer.answer
        assert f"[{refs[REGISTER]}] gives 12" in answer.answer


WATER = [  # "sites 1 and 2" is not "site 1": the question's figures choose the sentence
    SimpleNamespace(ref=1, doc="update.md", text="- Our total water use for 2024 (sites 1 and 2) was "
                    "48,200 cubic metres, down from 51,000 in 2023.\n\n- Four vans are electric."),
    SimpleNamespace(ref=2, doc="report.pdf", text="Site 1 water use was 30,100 cubic metres.\n\n"
                    "Water use at sites 1 and 2 was 42,800 cubic metres, down from 51,000 in 2023.")]
QUALITY = [  # the report's heading holds the question's words: the sentence naming compliance
    SimpleNamespace(ref=1, doc="kpis.md", text="| Indicator | 2022/23 | 2023/24 |\n|---|---|---|\n"
                    "| Drinking water quality compliance (%) | 99.90 | 99.93 |"),
    SimpleNamespace(ref=2, doc="quality.pdf", text="## Drinking Water Quality Report 2023/24\n\n"
                    "During 2023/24 we took 18,420 samples.\n\nOverall compliance was 99.91%.")]


@pytest.mark.parametrize(("question", "sources", "values"), [
    ("What was our water use (sites 1 and 2) in 2024?", WATER, [("48,200", 1), ("42,800", 2)]),
    ("What was our drinking water quality compliance for 2023/24?", QUALITY, [("99.93%", 1), ("99.91%", 2)]),
])
def test_a_refusal_compares_the_sentences_naming_the_question_and_its_figures(question, sources, values):
    """No claim to check: each source's sentence or row naming most of the question's words (its
    own before its title's) and figures gives its value (a row's, under the question's period, in
    the unit its label names); two differ. Documents currency orders do not disagree."""
    found, _ = ConflictFinder(lambda doc: []).find(question, "", sources, gate="references")
    assert [[(v["value"], v["ref"]) for v in c.values] for c in found] == [values]
    newer = sources[1].doc
    ordered = ConflictFinder(lambda doc: [newer] if doc == sources[0].doc else [])
    assert ordered.find(question, "", sources, gate="model") == ([], [])


def test_a_quantity_is_not_asked_of_dates_and_one_date_in_two_spellings_agrees():
    """"How warm did the freezer get": the memo's date and the log's are no values of it; and
    "7 December 2024" and "7 December" are one date."""
    excursion = [SimpleNamespace(ref=1, doc="memo.txt", text="Ghent freezer excursion on 7 December 2024."),
                 SimpleNamespace(ref=2, doc="log.md", text="Ghent freezer excursion logged on 7 December.")]
    finder = ConflictFinder(lambda doc: [])
    assert finder.find("How warm did the Ghent freezer get in the excursion?", "", excursion,
                       gate="references") == ([], [])
    assert finder.find("When was the Ghent freezer excursion?", "", excursion, gate="references") == ([], [])


def test_a_cell_answer_under_a_period_column_meets_the_other_documents_row():
    """Quarters as columns: the deck's row measures what the report's row does, whatever the
    period its column names (the period tells which cell, not what is measured)."""
    deck = ("| Metric | Q3 2024 | Q4 2024 |\n|---|---|---|\n| Active customers | 418 | 441 |\n"
            "| Platform availability | 99.91% | 99.97% |")
    report = ("| Metric | Q2 2024 | Q3 2024 |\n|---|---|---|\n| Active customers | 385 | 412 |\n"
              "| Platform availability | 99.89% | 99.94% |")
    sources = [SimpleNamespace(ref=1, doc="report.md", text=report),
               SimpleNamespace(ref=2, doc="deck.pptx", text=deck)]
    found, _ = ConflictFinder(lambda doc: []).find(
        "What was our platform availability in Q3 2024?",
        "In q3-report, Platform availability (Q3 2024) is 99.94% [1].", sources)
    assert [[(v["value"], v["ref"]) for v in c.values] for c in found] == [[("99.94%", 1), ("99.91%", 2)]]


def test_a_code_the_cell_answer_spells_out_is_met_by_its_name():
    """"TLF (Telford)": a bulletin naming the site alone gives the same thing another figure."""
    report = ("| Site | Customer returns 2022 | Customer returns 2023 |\n|---|---|---|\n"
              "| TLF | 19 | 23 |\n| DBY | 31 | 26 |")
    bulletin = "Customer returns at Telford were 27 in 2023. Derby reduced its defect rate again."
    sources = [SimpleNamespace(ref=1, doc="report.pdf", text=report),
               SimpleNamespace(ref=2, doc="bulletin.html", text=bulletin)]
    found, _ = ConflictFinder(lambda doc: []).find(
        "How many customer returns did Telford have in 2023?",
        "In report, TLF (Telford) (Customer returns 2023) is 23 [1].", sources)
    assert [[(v["value"], v["ref"]) for v in c.values] for c in found] == [[("23", 1), ("27", 2)]]
    # "27 customer returns in 2023": the year after its preposition takes none of the words before it
    logged = SimpleNamespace(ref=2, doc="bulletin.html",
                             text="Telford logged 27 customer returns in 2023, up from 19 in 2022.")
    # a quarter's figure is not the year's ("Customer returns in Q1: ... TLF 5")
    quarter = SimpleNamespace(ref=3, doc="minutes.md", text="Customer returns in Q1: DBY 7, TLF 5, LNC 3. "
                                                            "The 2023 figures were confirmed.")
    found, _ = ConflictFinder(lambda doc: []).find(
        "How many customer returns did Telford have in 2023?",
        "In report, TLF (Telford) (Customer returns 2023) is 23 [1].", [sources[0], logged, quarter])
    assert [[(v["value"], v["ref"]) for v in c.values] for c in found] == [[("23", 1), ("27", 2)]]


def test_a_name_answered_is_no_figure_to_disagree_on():
    """"Who is the quality manager", answered with a name: the minutes' section number and the
    register's line count are no values of it."""
    minutes = _source(1, "minutes.md", "### 4.2 Telford (TLF)\n\nOwen Jeffries, quality manager at Telford, "
                                       "reported on the audit.")
    register = _source(2, "site_register.csv", "| site_code | site_name | quality_manager | smt_lines |\n"
                                                "|---|---|---|---|\n| TLF | Telford | Owen Jeffries | 3 |")
    finder = ConflictFinder(lambda doc: [])
    question = "Who is the quality manager at Telford (TLF)?"  # as rag/codes.py expands it
    assert finder.find(question, "The quality manager at Telford (TLF) is Owen Jeffries [2].",
                       [minutes, register])[0] == []
    # refused, the question's thing is read: a heading's section number ("4.2 Telford") is no figure
    assert finder.find(question, "", [minutes, register], gate="references")[0] == []


def test_a_year_the_answer_mentions_is_no_disagreement_unless_a_year_is_asked():
    report = SimpleNamespace(ref=1, doc="report.md", text="The medical product family launched in 2023.")
    bulletin = SimpleNamespace(ref=2, doc="bulletin.html",
                               text="The medical product launch in 2022 was a big part of this.")
    answer = "Returns rose after the medical product family launched in 2023 [1]."
    finder = ConflictFinder(lambda doc: [])
    assert finder.find("Why did customer returns rise?", answer, [report, bulletin])[0] == []
    found, _ = finder.find("In what year did the medical product family launch?", answer, [report, bulletin])
    assert [[v["value"] for v in c.values] for c in found] == [["2023", "2022"]]


def test_a_name_the_kept_chunk_lacks_is_looked_for_in_the_next_ranked_before_a_premise_refusal(store):
    """One chunk kept: the question names the register, which only the next-ranked chunk holds;
    it leads the evidence instead of the premise gate refusing "nothing about Facilities Register"."""
    from rag.pipeline import RagPipeline

    llm = ScriptedLLM(replies=["The north warehouse has 12 loading docks [1]."], prompts=[])
    answer = RagPipeline(store, llm=llm).answer(
        "How many loading docks along the east wall by the drivers' covered waiting area does the "
        "Facilities Register give the north warehouse?",
        docs=[SURVEY, REGISTER], keep_k=1)
    assert answer.answerable and answer.sources[0].doc == REGISTER, answer.answer


def _source(ref: int, doc: str, text: str) -> Source:
    return Source(ref, f"{doc}-0", doc, None, None, None, None, False, text, 0.0)


TERMS = ("cedent: {}\n\nprogramme: Property catastrophe 2025\n\n"
         "| layer | retention_eur_m | rate_on_line_pct |\n|---|---|---|\n| 1 | 20 | {} |\n| 2 | 50 | {} |")


def test_candidates_are_read_for_the_same_thing_only():
    """The question's own figures ("layer 1", "2025") are given, not claimed; a rival must be
    the same layer's rate (the row), in the same cedent's terms (the names)."""
    note = _source(1, "solvik-notes.md", "Layer 1 of the 2025 programme of Solvik Mutual was placed at "
                                         "a rate on line of 15.0%. Nordkap Re leads with 30%.")
    solvik = _source(2, "solvik-terms.json", TERMS.format("Solvik Mutual", "14.5", "7.2"))
    karrow = _source(3, "karrow-terms.json", TERMS.format("Karrow Insurance", "16.0", "6.8"))
    finder = ConflictFinder(lambda doc: [])
    question = "At what rate on line was layer {} of Solvik Mutual's 2025 programme placed?"
    found, added = finder.find(question.format(1), "Layer 1 of Solvik Mutual's 2025 programme was placed at "
                               "a rate on line of 15.0% [1].", [note], candidates=[karrow, solvik])
    assert [[v["value"] for v in c.values] for c in found] == [["15.0%", "14.5%"]]  # its column's unit
    assert [(s.ref, s.doc) for s in added] == [(2, "solvik-terms.json")] and found[0].values[1]["ref"] == 2
    # Layer 2's rate: not layer 1's in the note, not Karrow's.
    found, added = finder.find(question.format(2), "Layer 2 of Solvik Mutual's 2025 programme was placed at "
                               "a rate on line of 7.2% [1].", [solvik],
                               candidates=[replace(note, ref=2), replace(karrow, ref=3)])
    assert found == [] and added == []


def test_a_word_and_its_inflection_name_one_thing():
    """"filed" in the answer and "File" in the newer version are one word: the stale value is
    reported with the newer document as current."""
    old = _source(1, P1, "Claims must be filed within 30 days of the end of the trip.")
    new = _source(2, P2, "File expense claims within 45 days of the end of the trip, with receipts.")
    finder = ConflictFinder(lambda doc: [P2] if doc == P1 else [])
    found, _ = finder.find("Within how many days of a trip must expense claims be filed?",
                           "Claims must be filed within 30 days of the end of the trip [1].", [old, new])
    assert [([v["value"] for v in c.values], c.current) for c in found] == [(["30 day", "45 day"], 2)]


def test_a_value_another_document_moves_away_from_is_superseded_without_a_link():
    """A memo that moves the shutdown "from week 32 to week 34" supersedes the notes that set week
    32, though no currency relation links the two: the answer gets the memo's sentence."""
    notes = _source(1, "ops-notes.docx", "The summer maintenance shutdown at Linz is planned for week 32.")
    memo = _source(2, "schedule-memo.md", "The summer maintenance shutdown at Linz moves from week 32 to "
                                          "week 34. Holiday requests should be discussed by 31 March.")
    finder = ConflictFinder(lambda doc: [])
    answer = "The Linz plant shuts down for summer maintenance in week 32 [1]."
    found, _ = finder.find("Which week will the Linz plant shut down for summer maintenance?", answer,
                           [notes, memo])
    assert [([v["value"] for v in c.values], c.current) for c in found] == [(["32", "34"], 2)]
    segment = AnswerSegment(answer, [0, 0], True, [notes.reference(0.9)])
    text, _ = restated(answer, [segment], found, [notes, memo])
    assert text == "The summer maintenance shutdown at Linz moves from week 32 to week 34 [2]."


def test_a_date_a_memo_withdraws_is_superseded_in_a_segment_citing_another_source():
    """"Will no longer take place on 11 June" withdraws the notice's date (one date, no "from ...
    to"); the answer citing the minutes that repeat it gets the memo's new date."""
    notice = _source(1, "audit-notice.md", "The customer audit at Telford is scheduled for 11 June 2024.")
    minutes = _source(2, "minutes.md", "Priya reported that the customer audit at Telford is scheduled for "
                                       "11 June 2024.")
    memo = _source(3, "postponement.txt", "The customer audit at Telford will no longer take place on "
                                          "11 June 2024.\n\nThe audit has been rescheduled to Tuesday 2 July "
                                          "2024.")
    answer = "The customer audit at Telford is scheduled for 11 June 2024 [2]."
    found, _ = ConflictFinder(lambda doc: []).find("When is the customer audit at Telford?", answer,
                                                   [notice, minutes, memo])
    assert [([v["value"] for v in c.values], c.current) for c in found] == [(["2024-06-11", "2024-07-02"], 3)]
    segment = AnswerSegment(answer, [0, 0], True, [minutes.reference(0.9)])
    text, _ = restated(answer, [segment], found, [notice, minutes, memo])
    assert text == "The audit has been rescheduled to Tuesday 2 July 2024 [3]."


def test_a_correction_rivals_only_the_value_it_replaces():
    """The erratum's "should read 76.9, not 78.4" is the audit score's rival (its words stand
    beside the year the sentence gives, "in 2024"), not a rival of a count of audits."""
    report = _source(1, "audit-report-2024.md", "Group Procurement audited 42 suppliers in 2024: 31 audits "
                                                "on site. The average audit score across all audited "
                                                "suppliers was 78.4.")
    erratum = _source(2, "audit-erratum.md", "Erratum to the Supplier Audit Report 2024.\n\n3. In Section "
                                             "4, the average audit score across all audited suppliers "
                                             "should read 76.9, not 78.4.")
    finder = ConflictFinder(lambda doc: ["audit-erratum.md"] if doc == "audit-report-2024.md" else [])
    found, _ = finder.find("What was the average supplier audit score in 2024?",
                           "The average supplier audit score in 2024 was 78.4 [1].", [report, erratum])
    assert [([v["value"] for v in c.values], c.current) for c in found] == [(["78.4", "76.9"], 2)]
    found, _ = finder.find("How many audits were carried out on site?",
                           "There were 31 audits carried out on site in 2024 [1].", [report, erratum])
    assert found == []


def test_an_erratum_field_pair_replaces_the_printed_value():
    """A plain-text erratum gives each correction as a title over "Printed:" and "Correct:" fields:
    an answer that gave the printed figure, however the model worded the thing ("according to the
    corrected report"), is restated with the title and the correct field, cited to the erratum."""
    report = _source(1, "q3-trading-report.md", "## Results by property\n\n| Property | Occupancy |\n"
                                                "|---|---|\n| Lisbon | 84.0% |\n| Krakow | 78.6% |")
    erratum = _source(2, "q3-trading-report-erratum.txt",
                      "ERRATUM\n\nCorrection 1 - Krakow occupancy\nPrinted: 78.6%\nCorrect: 76.8%\n"
                      "The digits were transposed.\n\nCorrection 2 - Lisbon rooms revenue\n"
                      "Printed: EUR 2.10m\nCorrect: EUR 2.01m")
    erratum_of = {"q3-trading-report.md": ["q3-trading-report-erratum.txt"]}
    finder = ConflictFinder(lambda doc: erratum_of.get(doc, []))
    answer = "Krakow's occupancy in Q3 was 78.6% according to the corrected report [1]."
    found, _ = finder.find("What was Krakow's occupancy in Q3?", answer, [report, erratum])
    assert [([v["value"] for v in c.values], c.current) for c in found] == [(["78.6%", "76.8%"], 2)]
    segment = AnswerSegment(answer, [0, 0], True, [report.reference(0.9)])
    text, _ = restated(answer, [segment], found, [report, erratum])
    assert text == "Correction 1 - Krakow occupancy. Correct: 76.8% [2]"


def test_reported_and_corrected_fields_with_a_reason_are_a_pair():
    """"Reported:" is an old side as "Printed:" is, a wrapped "Reason:" after the pair
    notwithstanding: the reported z-score is restated with the corrected one."""
    report = _source(1, "interlab-report-IL-2024-02.md", "| Laboratory | Assay z-score |\n|---|---|\n"
                                                        "| Cambridge | 0.3 |\n| Ghent | 2.4 |")
    erratum = _source(2, "erratum-IL-2024-02.txt",
                      "Correction 1 - Ghent assay z-score\n  Reported:   2.4\n  Corrected:  1.4\n"
                      "  Reason:     the z-score was calculated with a sigma of 0.65 % taken\n"
                      "              from a previous round.")
    finder = ConflictFinder(lambda doc: [erratum.doc] if doc == report.doc else [])
    answer = "Ghent's assay z-score in IL-2024-02 was 2.4 [1]."
    found, _ = finder.find("What assay z-score did Ghent get in IL-2024-02?", answer, [report, erratum])
    assert [([v["value"] for v in c.values], c.current) for c in found] == [(["2.4", "1.4"], 2)]
    segment = AnswerSegment(answer, [0, 0], True, [report.reference(0.9)])
    text, _ = restated(answer, [segment], found, [report, erratum])
    assert "1.4 [2]" in text and "2.4" not in text


def test_a_moved_date_takes_the_new_sides_year_and_its_own_sentence_first():
    """"moved from 12 May to 2 June 2025": 12 May is 2025's, and its replacement is 2 June, not a
    date of the next sentence (a training start, a freeze)."""
    notes = _source(1, "leadership-notes.md", "The new system goes live in Lisbon on 12 May 2025.")
    memo = _source(2, "memo-dates.txt", "Go-live in Lisbon has been moved from 12 May to 2 June\n2025. "
                                        "Training now starts on 12 May instead of 14 April, and the freeze "
                                        "on new rate codes begins on 19 May.")
    finder = ConflictFinder(lambda doc: ["memo-dates.txt"] if doc == "leadership-notes.md" else [])
    answer = "The new system goes live in Lisbon on 12 May 2025 [1]."
    found, _ = finder.find("When does the new system go live in Lisbon?", answer, [notes, memo])
    assert [([v["value"] for v in c.values], c.current) for c in found] == [
        (["2025-05-12", "2025-06-02"], 2)]
    segment = AnswerSegment(answer, [0, 0], True, [notes.reference(0.9)])
    text, _ = restated(answer, [segment], found, [notes, memo])
    assert text == "Go-live in Lisbon has been moved from 12 May to 2 June 2025 [2]."


def test_a_frequency_the_newer_version_changed_is_superseded():
    """v1 tests the alarms quarterly, v2 (which supersedes it) monthly: a frequency in words is a
    figure, and a clause's number ("6.1") takes no words from it, so the answer that gave v1's
    "quarterly" is restated with v2's clause, cited to v2."""
    clause = ("## 6. Alarms and monitoring\n\n6.1 Medical gas alarm systems (area and plant alarms) must be "
              "tested {} and the results recorded in the MGPS logbook.\n\n6.2 Any alarm fault must be "
              "reported to the estates helpdesk as a P1 job.")
    old = _source(1, "gas-policy-v1.md", clause.format("quarterly"))
    new = _source(2, "gas-policy-v2.md", clause.format("monthly"))
    finder = ConflictFinder(lambda doc: [new.doc] if doc == old.doc else [])
    answer = "Quarterly: medical gas alarm systems in each area are tested that often [1]."
    found, _ = finder.find("How often are we supposed to test the medical gas alarms?", answer, [old, new])
    assert [([v["value"] for v in c.values], c.current) for c in found] == [(["Quarterly", "monthly"], 2)]
    segment = AnswerSegment(answer, [0, 0], True, [old.reference(0.9)])
    text, _ = restated(answer, [segment], found, [old, new])
    assert "tested monthly" in text and "[2]" in text and "uarterly" not in text


def test_a_value_the_answers_source_moved_away_from_is_no_disagreement():
    """The memo revises the outage "from 8 hours to 10 hours"; the minutes it follows, unlinked,
    still say 8 hours: the answer's 10 hours, cited to the memo, stands without "sources disagree"
    (the memo itself gives 8 as the former value). Notes that gave 12 hours would disagree."""
    minutes = _source(1, "ops-minutes-2024-09.md", "Ward Block tank replacement: the water outage will "
                                                   "last 8 hours.")
    memo = _source(2, "memo-2024-10.txt", "Ward Block tank replacement: the outage duration has been "
                                          "revised from 8 hours to 10 hours (06:00-16:00).")
    finder = ConflictFinder(lambda doc: [])
    answer = "The Ward Block tank replacement outage will last 10 hours [2]."
    question = "How long will the Ward Block tank replacement outage last?"
    found, _ = finder.find(question, answer, [minutes, memo])
    assert found == []
    notes = _source(1, "site-notes.md", "Ward Block tank replacement: the water outage will last 12 hours.")
    found, _ = finder.find(question, answer, [notes, memo])
    assert [sorted(v["value"] for v in c.values) for c in found] == [["10 h", "12 h"]]
