"""The chat UI's answer stream: partial text while the LLM writes, then the finished Answer."""

from __future__ import annotations

import gradio as gr
from conftest import BATTERY_Q

from app.render import render_segments, render_sources
from app.ui import answer_stream, build_ui
from rag.pipeline import Answer


def test_stream_grows_then_ends_with_the_answer(pipeline):
    updates = list(answer_stream(pipeline, BATTERY_Q))
    partial, final = updates[:-1], updates[-1]
    assert len(partial) >= 3  # tokens arrive one by one, not all at the end
    assert all(len(a) <= len(b) for a, b in zip(partial, partial[1:]))
    assert isinstance(final, Answer) and final.answerable
    answer = final.to_dict()
    assert "refs: [" in render_segments(answer, markdown=True)
    assert "battery.md" in render_sources(answer, markdown=True)


def test_ui_builds(pipeline):
    assert isinstance(build_ui(pipeline), gr.Blocks)


def test_upload_indexes_files_and_reports_failures(base_settings, tmp_path):
    from conftest import fresh_settings

    from app.ui import index_uploads
    from rag.store import collection

    settings = fresh_settings(base_settings, tmp_path / "storage")
    good = tmp_path / "notes.md"
    good.write_text("# Notes\n\nThe wind tunnel is booked on Tuesdays.", encoding="utf-8")
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4 broken")
    seen = []

    def progress(fraction, desc="", unit=""):
        seen.append((fraction, desc))

    message = index_uploads(settings, [str(good), str(bad)], progress)
    assert message.startswith("2 files: 1 indexed")
    assert "**broken.pdf**: corrupt or unreadable PDF" in message
    assert seen[0] == ((0, 2), "indexing notes.md") and seen[-1] == ((2, 2), "done")
    assert {m["doc"] for m in collection(settings).get()["metadatas"]} == {"notes.md"}


def test_filters_reach_the_pipeline(pipeline):
    # No indexed document has this header value, so nothing is retrieved and the answer is refused.
    final = list(answer_stream(pipeline, BATTERY_Q, where={"Region": "Atlantis"}))[-1]
    assert isinstance(final, Answer) and not final.answerable and final.sources == []
    final = list(answer_stream(pipeline, BATTERY_Q, docs=["battery.md"]))[-1]
    assert final.answerable and {s["doc"] for s in final.sources} == {"battery.md"}
