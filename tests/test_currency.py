"""Document currency (ingestion/currency.py, rag/currency.py): fields and their origins read at a
real ingest, the family order and stated links computed at read time, the older document current
again once the newer is removed, and embeddings untouched by the new fields; at answer time the
newer version or erratum ranked above the older, the context saying which is current, the current
value answered (the real LLM), and the older current again once the newer is removed."""

from __future__ import annotations

import shutil

import pytest
from conftest import FIXTURES, cli, fixture_store, fresh_settings
from llama_index.core.schema import MetadataMode

from app.documents import document_rows
from app.render import render_answer
from ingestion.currency import currency_of
from ingestion.document import Block
from ingestion.pipeline import indexed_documents, ingest, remove
from rag.currency import METADATA_KEYS, Currency, Stored, corrections, current_documents
from rag.settings import CurrencySettings
from rag.store import all_nodes

V1, V2 = "remote-work-policy-v1.md", "remote-work-policy-v2.md"
ERRATUM, KO = "remote-work-erratum-2025-05.md", "hr-notice-ko.txt"


@pytest.fixture(scope="module")
def store(base_settings, tmp_path_factory):
    return fixture_store(base_settings, tmp_path_factory, "currency", 4)


def test_fields_are_read_with_their_origins(store):
    found = {d.doc: d.currency for d in indexed_documents(store)}
    # The file name comes before the first page.
    assert found[V1] == Currency("2024-03-01", "1", None, (), (),
                                 {"effective_date": "first page line 2", "version": "file name"})
    assert (found[V2].version, found[V2].effective_date, found[V2].status) == ("2", "2025-04-01", "final")
    assert found[V2].origin["status"] == "front matter status"
    erratum = found[ERRATUM]
    assert (erratum.status, erratum.effective_date, erratum.corrects) == (
        "erratum", "2025-05", ("Remote Work Policy version 2.0",))
    assert erratum.origin["effective_date"] == "file name"
    assert erratum.origin["corrects"] == "first page line 1"
    korean = found[KO]
    # The line that says when it takes effect wins over the date it was written.
    assert (korean.effective_date, korean.origin["effective_date"]) == ("2025-04-01", "first page line 3")
    assert korean.status == "final" and korean.supersedes == ("이 공지는 이전 버전",)


def test_the_family_orders_the_versions_and_the_erratum_corrects_the_one_it_names(store):
    documents = indexed_documents(store)
    superseded = current_documents(documents)
    assert superseded[V1].by == V2 and superseded[V1].how == "same family"
    assert "lower version (1 < 2)" in superseded[V1].origin
    assert superseded[V2] is None and superseded[ERRATUM] is None and superseded[KO] is None
    assert [link.by for link in corrections(documents)[V2]] == [ERRATUM] and corrections(documents)[V1] == []
    rows = {row[0]: row for row in document_rows(store)}
    assert rows[V1][4] == f"2024-03-01 · v1 · superseded by {V2} (same family)"
    assert rows[V2][4] == f"2025-04-01 · v2 · final · corrected by {ERRATUM}"


def test_the_cli_lists_the_currency(store, monkeypatch):
    lines = cli(monkeypatch, store, "documents").stdout.splitlines()
    listed = {line.split("\t")[0]: line.split("\t") for line in lines}
    assert listed[V1][4] == f"2024-03-01 · v1 · superseded by {V2} (same family)"
    assert listed[KO][4] == "2025-04-01 · final"


def test_embedded_and_llm_text_hold_none_of_the_fields(store):
    chunks = [n for n in all_nodes(store) if n.metadata["doc"] == V2]
    assert chunks and all(chunk.metadata["version"] == "2" for chunk in chunks)
    for chunk in chunks:
        bare = chunk.model_copy(deep=True)
        for key in METADATA_KEYS:
            bare.metadata.pop(key, None)
        for mode in (MetadataMode.EMBED, MetadataMode.LLM):
            assert chunk.get_content(metadata_mode=mode) == bare.get_content(metadata_mode=mode)
            assert "2025-04-01" not in chunk.get_content(metadata_mode=mode)


def test_removing_the_newer_makes_the_older_current_again(store):
    remove([V2], store)
    documents = indexed_documents(store)
    assert current_documents(documents)[V1] is None
    # The erratum names version 2.0, which is gone: it corrects nothing indexed.
    assert all(not links for links in corrections(documents).values())


def test_spellings_of_dates_versions_and_links():
    cfg = CurrencySettings(patterns={"version": [r"\bedition\s+(\d+)"]})

    def read(*lines: str, name: str = "note.md", **fields) -> Currency:
        return currency_of(name, [Block(line) for line in lines], fields, {}, cfg)

    assert read("Memo", "Effective 1 April 2025; written 30 Sep 2024").effective_date == "2025-04-01"
    assert read("Memo", "Sent September 30, 2024").effective_date == "2024-09-30"
    assert read("회의록", "2024년 9월 30일").effective_date == "2024-09-30"
    assert read("x", name="report_20240930.pdf").effective_date == "2024-09-30"
    assert read("x", name="report_2024_09.pdf").effective_date == "2024-09"
    assert read("Manual", "Rev. B").version == "B" and read("규정", "개정 2판").version == "2"
    assert read("Guide", "Edition 4").version == "4"
    # A version a link names is not the document's own.
    linked = read("Policy", "This version supersedes v1.0.")
    assert (linked.version, linked.supersedes) == (None, ("v1.0",))
    # a bare "v2" in a sentence is a thing's version; spelled out, or in a title, the document's
    notes = read("Meeting notes", "- Ravi presented the 5.0 scope: new slotting engine, REST v2 as the "
                 "default API, redesigned mobile pick screens.")
    assert notes.version is None
    assert read("Support SLA v2").version == "2"
    spelled = read("Notes", "This is version 2.1 of the guide for all staff of the company, effective now.")
    assert spelled.version == "2.1"
    assert read("Corrigendum to the Annual Report 2024").status == "erratum"
    assert read("Draft budget").status == "draft" and read("Note", "The final figure is open").status is None
    assert read("Note", Date="2024-05-06").origin == {"effective_date": "front matter date"}
    assert read("Note") == Currency()
    # a report's code is no date; its issue line is
    assert read("Internal Audit Report IA-2024-07", "Issued: 18 November 2024").effective_date == "2024-11-18"
    # a title "Erratum: ..." names what it corrects; a memo changing what a meeting set names it
    assert read("Erratum: Internal Audit Report IA-2024-07").corrects == ("Internal Audit Report IA-2024-07",)
    assert read("Memo", "Following the leadership meeting of 14 January 2025, some dates have had to "
                "change.").corrects == ("the leadership meeting",)
    # a header field naming the corrected document, up to its bracket and the next field; the
    # date in the link is the other document's
    fixed = read("ERRATUM", "Document corrected: Q3 2024 Trading Report - Rooms and F&B (issued 18 October "
                 "2024) Erratum issued: 25 October 2024 From: Revenue Management")
    assert fixed.corrects == ("Q3 2024 Trading Report - Rooms and F&B",)
    assert fixed.effective_date == "2024-10-25"
    # a file name's report code is no date; a title run on past its code names the code
    code = read("ERRATUM TO REPORT IL-2024-02 Inter-laboratory comparison: assay and related substances of "
                "metformin hydrochloride 500 mg tablets (issued 15 October 2024)", "Date: 4 November 2024",
                name="erratum_IL-2024-02.txt")
    assert (code.corrects, code.effective_date) == (("REPORT IL-2024-02",), "2024-11-04")
    # a memo that revises (present tense) what a numbered meeting agreed
    assert read("MEMORANDUM", "This memo revises the key dates agreed at steering group meeting no. 4 on 12 "
                "September 2024.").corrects == ("steering group meeting no. 4",)
    # a numbered meeting whose dates a memo postpones
    assert read("MEMO", "The following dates agreed at Progress Meeting No. 7 on 12 March 2024 are therefore "
                "postponed:").corrects == ("Progress Meeting No. 7",)
    # an erratum's "Report:" field names what it corrects (its bracket with it: the date there is the
    # report's); the same field in another document names nothing it corrects
    notice = read("ERRATUM NOTICE", 'Report: TR-2024-07 "Adhesion of HX-Series Coatings" (issue 1, 19 '
                  'July 2024) Erratum no.: TR-2024-07-E1 Date issued: 2 September 2024',
                  name="TR-2024-07_erratum.txt")
    assert notice.corrects == ('TR-2024-07 "Adhesion of HX-Series Coatings" (issue 1, 19 July 2024)',)
    assert (notice.status, notice.effective_date) == ("erratum", "2024-09-02")
    assert read("Test record", "Report: TR-2024-07 Panel 4").corrects == ()
    # the organisation's name before the title, the report's bracket and the erratum's own "Issued:"
    wrapped = read("HARROWMERE WATER GROUP ERRATUM - Annual Drinking Water Quality Report 2024 (published 28 "
                   "February 2025) Issued: 19 March 2025")
    assert (wrapped.corrects, wrapped.effective_date) == (("Annual Drinking Water Quality Report 2024",),
                                                          "2025-03-19")
    # a department after a dash before the word erratum
    department = read("ACME ELECTRONICS LTD - GROUP QUALITY ERRATUM: ANNUAL QUALITY REPORT 2023 (published "
                      "29 February 2024) Issued: 22 March 2024")
    assert (department.corrects, department.effective_date) == (("ANNUAL QUALITY REPORT 2023",), "2024-03-22")
    # an ampersand in the organisation's name; a title ending in a year before "Issued:" (a figure
    # is no word of a field's label)
    ampersand = read("LARKMOOR CITY LIBRARIES & ARCHIVES ERRATUM - Annual Service Report 2023 Issued: "
                     "17 June 2024 Issued by: Office of the Director")
    assert (ampersand.corrects, ampersand.effective_date) == (("Annual Service Report 2023",), "2024-06-17")
    assert read("Some notes", "This erratum - as noted below - is short.").corrects == ()
    # the first page gives the file name's month its day
    dated = read("Memo", "Date: 20 February 2025", name="memo-2025-02.md")
    assert (dated.effective_date, dated.origin["effective_date"]) == ("2025-02-20", "first page line 2")


def test_a_document_code_in_a_link_names_the_one_document_holding_it():
    """"Technical Report TR-2024-019 Static Load Testing ..." names the report whose file name holds
    the code, however many words run on; a code two documents hold names neither."""
    erratum = Stored("TR-2024-019_erratum.txt", "Erratum", Currency(status="erratum", corrects=(
        "TECHNICAL REPORT TR-2024-019 Static Load Testing of Preliminary Piles - Feijenoord Quay (HM-2307",)))
    report = Stored("TR-2024-019_pile_load_tests.md", "Technical Report", Currency())
    other = Stored("HM-2307_programme.md", "Feijenoord programme", Currency())
    assert [link.by for link in corrections([erratum, report, other])[report.doc]] == [erratum.doc]
    twin = Stored("TR-2024-019_annex.md", "Annex", Currency())
    assert corrections([erratum, report, twin])[report.doc] == []


# ------------------------------------------------------------------ at answer time (rag/currency.py)

ANSWERS = FIXTURES / "currency_answers"
P1, P2, FIX = "travel-policy-v1.md", "travel-policy-v2.md", "travel-erratum-2024-10.md"
MEAL_Q = "What is the daily meal allowance on business trips?"


def answers_store(tmp_path_factory, base_settings, names, **currency):
    folder = tmp_path_factory.mktemp("answers")
    for name in names:
        (folder / "docs").mkdir(exist_ok=True)
        shutil.copy(ANSWERS / name, folder / "docs" / name)
    settings = fresh_settings(base_settings, folder / "storage", currency=currency)
    assert ingest([folder / "docs"], settings, progress=False).indexed == len(names)
    return settings


@pytest.fixture(scope="module")
def policies(base_settings, tmp_path_factory):
    return answers_store(tmp_path_factory, base_settings, [P1, P2, FIX])


def scripted(settings, *replies):
    from conftest import ScriptedLLM

    from rag.pipeline import RagPipeline

    return RagPipeline(settings, llm=ScriptedLLM(replies=list(replies), prompts=[]))


def labels(prompt: str) -> dict[str, str]:
    """Each passage's document -> its label line, from the prompt's passages."""
    passages = prompt.split("Passages:")[-1]
    return {line.split()[1].rstrip(":"): line for line in passages.splitlines() if line.startswith("[")}


def test_the_newer_version_is_ranked_first_and_the_context_says_which_is_current(policies):
    pipeline = scripted(policies, "The daily meal allowance is EUR 55 [1].", "The hotel limit is EUR 180.")
    answer = pipeline.answer(MEAL_Q)
    refs = {s.doc: s.ref for s in answer.sources}
    assert refs[P2] < refs[P1] and "currency" in answer.timings_ms
    shown = labels(pipeline.llm.prompts[-1])
    assert f"(current: final, 30 Sep 2024; supersedes [{refs[P1]}]" in shown[P2]
    assert shown[P1].endswith(f"(superseded by [{refs[P2]}])")
    answer = pipeline.answer("What is the hotel limit per night?")
    refs = {s.doc: s.ref for s in answer.sources}
    shown = labels(pipeline.llm.prompts[-1])
    assert refs[FIX] < refs[P2] and shown[FIX].endswith(f"(corrects [{refs[P2]}])")
    assert f"corrected by [{refs[FIX]}]" in shown[P2]


def test_the_best_chunk_of_the_newer_moves_just_above_the_older(policies):
    from llama_index.core.schema import NodeWithScore

    from rag.currency import CurrentFirst
    from rag.store import Store

    nodes = {n.metadata["doc"]: NodeWithScore(node=n, score=0.0) for n in all_nodes(policies)}
    current = CurrentFirst.from_settings(policies, Store(policies))
    ranked = current.prefer([nodes[P1], nodes[P2], nodes[FIX]])
    # v2 above v1, then the erratum above v2: each older stays, below.
    assert [n.node.metadata["doc"] for n in ranked] == [FIX, P2, P1]
    off = CurrentFirst(Store(policies), enabled=False)
    assert [n.node.metadata["doc"] for n in off.prefer([nodes[P1], nodes[P2]])] == [P1, P2]


def test_the_newer_versions_chunk_of_the_same_section_goes_just_above_the_older(policies):
    """v1's "Claims" kept where v2 ranks only by its "Allowances": v2's "Claims" is moved (or
    fetched) to stand just above v1's, so the prompt's budget reaches the current wording."""
    from llama_index.core.schema import NodeWithScore, TextNode

    from rag.currency import CurrentFirst
    from rag.store import Store

    def chunk(doc: str, part: str) -> NodeWithScore:
        meta = {"doc": doc, "section": f"Travel Policy > {part}"}
        return NodeWithScore(node=TextNode(id_=f"{doc}:{part}", text=part, metadata=meta), score=0.0)

    def order(nodes) -> list[str]:
        return [n.node.node_id for n in nodes]

    current = CurrentFirst.from_settings(policies, Store(policies))
    ranked = [chunk(P2, "Allowances"), chunk(P1, "Allowances"), chunk(P1, "Claims"), chunk(P2, "Claims")]
    assert order(current.prefer(ranked, keep=3)) == [f"{P2}:Allowances", f"{P1}:Allowances", f"{P2}:Claims",
                                                      f"{P1}:Claims"]
    asked: list[list[str]] = []

    def fetch(docs: list[str]) -> list[NodeWithScore]:
        asked.append(docs)
        return [chunk(P2, "Allowances"), chunk(P2, "Claims")]

    got = current.prefer(ranked[:3], keep=3, fetch=fetch)
    assert P2 in asked[0]
    assert order(got) == [f"{P2}:Allowances", f"{P1}:Allowances", f"{P2}:Claims", f"{P1}:Claims"]


def test_the_current_value_is_answered_and_cited(policies, pipeline):
    """The real LLM: the newer value, cited to the newer document; the older shown as superseded."""
    from rag.pipeline import RagPipeline

    answer = RagPipeline(policies, llm=pipeline.llm).answer(MEAL_Q)
    refs = {s.doc: s.ref for s in answer.sources}
    assert "55" in answer.answer and "40" not in answer.answer, answer.answer
    cited = {r.doc for segment in answer.segments for r in segment.references}
    assert P2 in cited and P1 in refs


def test_the_older_is_current_again_once_the_newer_is_removed(base_settings, tmp_path_factory):
    settings = answers_store(tmp_path_factory, base_settings, [P1, P2])
    pipeline = scripted(settings, *["The daily meal allowance is EUR 40 [1]."] * 2)
    answer = pipeline.answer(MEAL_Q)
    assert "superseded by" in labels(pipeline.llm.prompts[-1])[P1]
    newer = {s.doc: s.ref for s in answer.sources}[P2]
    assert answer.conflicts and answer.conflicts[0]["current"] == newer
    assert f"[{newer}] is current" in render_answer(answer.to_dict())
    # the older's value is not the answer: the newer's sentence stands in its place, cited to it
    [segment] = answer.segments
    assert "EUR 55" in segment.text and [(r.doc, r.score) for r in segment.references] == [(P2, 1.0)]
    assert answer.answer.startswith(segment.text)
    assert answer.draft.startswith("The daily meal allowance is EUR 40")  # the model's words stay the draft
    remove([P2], settings)
    answer = pipeline.answer(MEAL_Q)  # the same pipeline: nothing stale
    assert [s.doc for s in answer.sources] == [P1] and "supersede" not in labels(pipeline.llm.prompts[-1])[P1]
    assert answer.conflicts == []


NOTES, MEMO = "leadership-meeting-2025-01.md", "memo-2025-02.md"
MOVE_Q = "When is the office move to Harbour House?"


def test_a_newer_document_retrieval_missed_is_fetched_above_the_older(base_settings, tmp_path_factory):
    """The memo moves the date in other words ("the relocation"): one candidate retrieved finds the
    notes alone; the memo that corrects them is fetched and ranked above them, unless the asker's
    document filter leaves it out or currency is off."""
    settings = answers_store(tmp_path_factory, base_settings, [NOTES, MEMO, P1])
    pipeline = scripted(settings, *["The office move is set for 3 March 2025 [1]."] * 3)
    assert pipeline.current.newer(NOTES) == [MEMO]
    answer = pipeline.answer(MOVE_Q, retrieve_k=1)
    docs = [s.doc for s in answer.sources]
    assert MEMO in docs and NOTES in docs and docs.index(MEMO) < docs.index(NOTES), docs
    assert "corrects [" in labels(pipeline.llm.prompts[-1])[MEMO]
    assert MEMO not in [s.doc for s in pipeline.answer(MOVE_Q, retrieve_k=1, docs=[NOTES, P1]).sources]
    off = scripted(fresh_settings(settings, settings.storage_dir, currency={"prefer_current": False}),
                   "The office move is set for 3 March 2025 [1].")
    assert MEMO not in [s.doc for s in off.answer(MOVE_Q, retrieve_k=1).sources]
