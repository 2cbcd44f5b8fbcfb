"""The chat UI's answer stream: partial text while the LLM writes, then the finished Answer."""

from __future__ import annotations

import gradio as gr
import pytest
from conftest import BATTERY_Q

from app.ask import Conversation, answer_stream, chat_handler
from app.render import render_segments, render_sources, unescape
from app.ui import build_ui
from rag.answer import Answer


def test_stream_grows_then_ends_with_the_answer(pipeline):
    updates = list(answer_stream(pipeline, BATTERY_Q))
    partial, final = updates[:-1], updates[-1]
    assert len(partial) >= 3  # tokens arrive one by one, not all at the end
    assert all(len(a) <= len(b) for a, b in zip(partial, partial[1:]))
    assert isinstance(final, Answer) and final.answerable
    answer = final.to_dict()
    assert "refs: [" in render_segments(answer, markdown=True)
    assert "battery.md" in unescape(render_sources(answer, markdown=True))


def test_ui_builds(pipeline):
    assert isinstance(build_ui(pipeline), gr.Blocks)


def test_upload_indexes_files_and_reports_failures(base_settings, tmp_path):
    from conftest import fresh_settings

    from app.documents import index_uploads
    from rag.store import collection

    settings = fresh_settings(base_settings, tmp_path / "storage")
    good = tmp_path / "notes.md"
    good.write_text("# Notes\n\nThe wind tunnel is booked on Tuesdays.", encoding="utf-8")
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4 broken")
    seen = []

    def progress(fraction, desc="", unit=""):
        seen.append((fraction, desc))

    message = unescape(index_uploads(settings, [str(good), str(bad)], progress))  # the text a reader sees
    assert message.startswith("2 files: 1 indexed") and "pruned" not in message
    assert "**broken.pdf**: corrupt or unreadable PDF" in message
    assert seen[0] == ((0, 2), "indexing notes.md") and seen[-1] == ((2, 2), "done")
    assert {m["doc"] for m in collection(settings).get()["metadatas"]} == {"notes.md"}
    uploads = settings.storage_dir / "uploads"
    assert sorted(p.name for p in uploads.iterdir()) == ["notes.md"]  # no copy of the failed file

    # A new version of an upload replaces it, and says so; a broken one keeps the earlier one.
    good.write_text("# Notes\n\nThe wind tunnel is booked on Fridays now.", encoding="utf-8")
    message = unescape(index_uploads(settings, [str(good)]))
    assert message.startswith("1 file: 1 indexed") and "**notes.md** replaced the earlier upload" in message
    good.write_bytes(b"\xff\xfe\x00binary")
    message = unescape(index_uploads(settings, [str(good)]))
    assert "not UTF-8" in message
    assert "Fridays" in (uploads / "notes.md").read_text(encoding="utf-8")
    assert sorted(p.name for p in uploads.iterdir()) == ["notes.md"]

    # The name of a document indexed from elsewhere: both are kept, under distinct ids.
    from ingestion.pipeline import ingest

    elsewhere = tmp_path / "team" / "guide.md"
    elsewhere.parent.mkdir()
    elsewhere.write_text("# Guide\n\nThe lab opens at eight.", encoding="utf-8")
    ingest([elsewhere], settings, progress=False)
    upload = tmp_path / "guide.md"
    upload.write_text("# Guide\n\nThe workshop closes at six.", encoding="utf-8")
    message = index_uploads(settings, [str(upload)])
    from app.render import escape

    assert f"**{escape('guide.md', True)}** is indexed as **{escape('uploads/guide.md', True)}**" in message
    docs = {m["doc"] for m in collection(settings).get()["metadatas"]}
    assert {"guide.md", "uploads/guide.md"} <= docs

    # A copy of an indexed file under another name is not indexed twice, nor kept as an upload.
    copy = tmp_path / "guide-copy.md"
    copy.write_bytes(elsewhere.read_bytes())
    message = unescape(index_uploads(settings, [str(copy)]))
    assert "**guide-copy.md**: same content as **guide.md**, not indexed twice" in message, message
    assert not (uploads / "guide-copy.md").exists()
    assert {m["doc"] for m in collection(settings).get()["metadatas"]} == docs


def test_filters_reach_the_pipeline(pipeline):
    import pytest

    from rag.retrieval import FilterError

    with pytest.raises(FilterError, match="Title=Atlantis"):  # no indexed document has it
        list(answer_stream(pipeline, BATTERY_Q, where={"Title": "Atlantis"}))
    final = list(answer_stream(pipeline, BATTERY_Q, docs=["battery.md"]))[-1]
    assert final.answerable and {s.doc for s in final.sources} == {"battery.md"}


@pytest.mark.parametrize("where", [None, "", "   ", " ; "])
def test_respond_takes_what_a_browser_sends(pipeline, where):
    respond = chat_handler(pipeline)
    *_, (reply, sources, answer, _) = respond(BATTERY_Q, [], None, where)
    assert isinstance(reply, list) and "refs: [" in reply[0].content and "battery.md" in unescape(sources)
    assert answer["answerable"] and answer["sources"][0]["doc"] == "battery.md"  # for this session's panels
    assert list(respond("   ", [], None, where)) == [("Please type a question.", "", None, gr.skip())]
    assert list(respond(None, [], None, where)) == [("Please type a question.", "", None, gr.skip())]


def test_respond_explains_bad_filters(pipeline):
    respond = chat_handler(pipeline)
    [(reply, _, _, _)] = list(respond(BATTERY_Q, [], None, "Region"))
    assert "not FIELD=VALUE" in unescape(reply)
    [(reply, _, _, _)] = list(respond(BATTERY_Q, [], ["nothing.md"], ""))
    assert "no indexed document has the id 'nothing.md'" in unescape(reply)


def test_each_answer_keeps_its_own_sources(pipeline):
    respond = chat_handler(pipeline)
    *_, (first, _, _, _) = respond(BATTERY_Q, [], None, "")
    *_, (second, _, _, _) = respond("What does the cafeteria serve on Fridays?", [], None, "")
    assert [m.metadata.get("title") for m in first] == [None, "Sources"]
    assert "[1] battery.md" in unescape(first[1].content)
    assert "[1] cafeteria.md" in unescape(second[1].content)


def test_document_text_is_shown_as_text():
    from app.render import render_answer

    hostile = "Known issue: <img src=x onerror=alert(1)> and <script>alert(1)</script> appear"
    answer = {"answerable": True, "answer": hostile, "scorer": "bi-encoder",
              "segments": [{"text": hostile, "supported": True, "references": [{"ref": 1, "score": 0.9}]}],
              "sources": [{"ref": 1, "doc": "<b>x</b>.md", "page": None, "slide": None, "section": None,
                           "text": hostile, "score": 0.9}]}
    from markdown_it import MarkdownIt

    shown = MarkdownIt("commonmark").render(render_answer(answer, markdown=True))  # what a browser gets
    assert "<img" not in shown and "<script" not in shown and "<b>" not in shown
    assert "&lt;img src=x onerror=alert(1)&gt;" in shown


def test_page_load_lists_documents_indexed_since_start(base_settings, tmp_path):
    from conftest import fresh_settings

    from app.documents import index_uploads
    from rag.pipeline import RagPipeline

    settings = fresh_settings(base_settings, tmp_path / "storage")
    first = tmp_path / "first.md"
    first.write_text("# First\n\nThe first note.", encoding="utf-8")
    index_uploads(settings, [str(first)])
    demo = build_ui(RagPipeline(settings))
    [load] = [f for f in demo.fns.values() if any(event == "load" for _, event in f.targets)]
    second = tmp_path / "second.md"
    second.write_text("# Second\n\nThe second note.", encoding="utf-8")
    index_uploads(settings, [str(second)])  # after the UI was built
    rows, delete_choice, ask_choice = load.fn()
    assert ask_choice["choices"] == delete_choice["choices"] == ["first.md", "second.md"]
    assert [row[:2] for row in rows] == [["first.md", 1], ["second.md", 1]]


def test_one_decode_at_a_time_and_abandoned_answers_stop(pipeline):
    """Two generations on one model object at once crash llama.cpp: whatever calls it, they
    must take turns; an answer nobody reads any more stops and frees the model."""
    import threading
    import time

    llm = pipeline.llm
    real = llm._model
    state = {"active": 0, "most": 0}
    guard = threading.Lock()

    class Recorder:
        def __getattr__(self, name):
            return getattr(real, name)

        def __call__(self, **kwargs):
            with guard:
                state["active"] += 1
                state["most"] = max(state["most"], state["active"])
                overlap = state["active"] > 1
            if overlap:  # never let two decodes reach llama.cpp in a failing run
                with guard:
                    state["active"] -= 1
                raise RuntimeError("two decodes at once")
            time.sleep(0.3)
            try:
                result = real(**kwargs)
                if not kwargs.get("stream"):
                    return result
                return self._stream(result)
            finally:
                if not kwargs.get("stream"):
                    with guard:
                        state["active"] -= 1

        def _stream(self, parts):
            try:
                yield from parts
            finally:
                with guard:
                    state["active"] -= 1

    # Not monkeypatch: its undo deletes a pydantic private attribute instead of restoring it.
    llm._model = Recorder()
    try:
        errors = []

        def complete():
            try:
                llm.complete("Say one word.")
            except Exception as error:
                errors.append(error)

        def stream():
            try:
                for _ in llm.stream_complete("Count from one to five."):
                    pass
            except Exception as error:
                errors.append(error)

        threads = [threading.Thread(target=t) for t in (complete, stream, complete)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert errors == [] and state["most"] == 1

        # Abandon an answer after a few tokens: the model is free again within a token or two.
        long_one = "Describe the nail penetration test of the Orion pack in detail, step by step."
        updates = answer_stream(pipeline, long_one)
        for _ in range(3):
            next(updates)
        updates.close()
        started = time.monotonic()
        assert llm._lock.acquire(timeout=2), "the abandoned generation kept the model"
        llm._lock.release()
        assert time.monotonic() - started < 2
        final = list(answer_stream(pipeline, BATTERY_Q))[-1]
        assert isinstance(final, Answer) and final.answerable
    finally:
        llm._model = real


def test_uploads_reach_both_retrieval_channels(base_settings, tmp_path):
    """A UI started on an empty store (dense only) finds an upload through BM25 too."""
    from conftest import fresh_settings
    from llama_index.core.retrievers import QueryFusionRetriever
    from llama_index.core.schema import QueryBundle

    from app.documents import index_uploads
    from rag.pipeline import RagPipeline

    settings = fresh_settings(base_settings, tmp_path / "storage")
    pipeline = RagPipeline(settings)
    note = tmp_path / "tunnel.md"
    note.write_text("# Wind tunnel\n\nThe climatic wind tunnel WT-7 is booked on Thursdays.",
                    encoding="utf-8")
    index_uploads(settings, [str(note)])
    retriever = pipeline.current_retriever()
    assert isinstance(retriever, QueryFusionRetriever)
    dense, bm25 = retriever._retrievers
    assert [n.node.metadata["doc"] for n in bm25.retrieve(QueryBundle("WT-7"))] == ["tunnel.md"]


def test_a_follow_up_is_given_the_answer_as_written_not_as_shown(pipeline, monkeypatch):
    """The rewriter gets each earlier turn as (question, the answer's text), kept in the session:
    never read back from the chat, whose marks, folded sources and wording are for readers (a
    reworded mark here: read back, it would ride along into the follow-up)."""
    import app.ask
    from rag.pipeline import QuestionError

    shown = app.ask.render_segments
    monkeypatch.setattr(app.ask, "render_segments",
                        lambda answer, markdown=False: shown(answer, markdown).replace("*(refs:", "*(cited:"))
    respond = chat_handler(pipeline)
    *_, (reply, _, first, conversation) = respond(BATTERY_Q, [], None, "")
    chat = [{"role": "user", "content": BATTERY_Q}, *(vars(m) for m in reply)]
    assert "*(cited: [1]" in reply[0].content and reply[1].metadata["title"] == "Sources"
    given = []

    def standalone(question, history):
        given.append(list(history))
        raise QuestionError("seen")  # what the rewriter is given is all this test needs

    monkeypatch.setattr(pipeline.rewriter, "standalone", standalone)
    list(respond("And in the crush test?", chat, None, "", conversation=conversation))
    assert given == [[(BATTERY_Q, first["answer"])]]


def test_undo_retry_and_clear_cut_the_turns_with_the_chat():
    """One entry per question in the chat, so whatever cuts the chat's messages cuts the turns."""
    def answer(n):
        return {"question": f"q{n}", "standalone_question": f"s{n}" if n else None, "answer": f"a{n}"}

    def chat(n):
        return [{"role": role, "content": "..."} for _ in range(n) for role in ("user", "assistant")]

    turns = Conversation().answered(0, answer(0)).answered(2, answer(2))  # the second was stopped
    assert turns.history(chat(3)) == [("q0", "a0"), ("s2", "a2")]
    assert turns.history(chat(2)) == [("q0", "a0")] and turns.history([]) == []  # undone, cleared
    assert turns.answered(1, answer(1)).history(chat(3)) == [("q0", "a0"), ("s1", "a1")]  # retried


def test_sources_are_shown_by_rank_not_by_the_rankers_score(pipeline):
    """The ranker's score is the probability that a chunk is the one that answers: 0.00 for most
    sources, which readers took for "unrelated" beside a reference's 0.9. A source shows its
    rank (the number it is cited by), in the UI and the CLI."""
    import re

    answer = pipeline.answer(BATTERY_Q, keep_k=3).to_dict()
    assert len(answer["sources"]) >= 2 and min(s["score"] for s in answer["sources"]) < 0.005
    for markdown in (True, False):
        shown = render_sources(answer, markdown)
        assert "score" not in shown and "0.00" not in shown and "best ranked first" in shown.splitlines()[0]
        assert re.findall(r"^\W*\[(\d+)\]", shown, re.M) == [str(s["ref"]) for s in answer["sources"]]
        assert [s["ref"] for s in answer["sources"]] == list(range(1, len(answer["sources"]) + 1))
