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
