"""A postponement reaches the other documents' dates (rag/postponements.py through the context): a
museum's events calendar and its annual report each give the Night Tour's old date, and a memo,
which names no document, moves it. A volunteer day at the same museum on the same old date is
another event and keeps its date. The real store holds the three, the context shows the new
date where the old one stood, and the real model answers it."""

from __future__ import annotations

import pytest
from conftest import fresh_settings
from test_errata import context

from ingestion.pipeline import ingest

CALENDAR = """# Whitcombe Museum - What's On, Autumn 2024

Printed calendar issued 1 July 2024.

| Event | Date | Where |
|---|---|---|
| Fossil Handling Morning | Saturday 7 September 2024 | Learning Centre |
| Whitcombe Night Tour | Friday 20 September 2024 | Main Hall |
| Volunteer Open Morning | Friday 20 September 2024 | Learning Centre |
| Curator's Talk: Coastal Finds | Thursday 3 October 2024 | Lecture Room |
"""
REPORT = """# Whitcombe Museum Annual Review 2023

Published June 2024 by the Director's office.

## Looking ahead

The museum will run its first Whitcombe Night Tour on 20 September 2024, with torch-lit visits to
the Fossil Gallery. The Learning Centre extension opens in spring 2025.
"""
MEMO = """MEMORANDUM

To: All staff, Whitcombe Museum
From: Alys Penrose, Programme Manager
Date: 12 August 2024
Subject: Night Tour - POSTPONED

The Whitcombe Night Tour, which was due to take place on Friday 20 September 2024, has been
postponed. The Night Tour will now be held on Friday 18 October 2024, from 19:00 to 22:00.

The lighting contractor for the Fossil Gallery cannot finish before the end of September, and
the tour cannot run without the new lighting.
"""


@pytest.fixture(scope="module")
def moved(base_settings, tmp_path_factory, pipeline):
    from rag.pipeline import RagPipeline

    folder = tmp_path_factory.mktemp("postponed-docs")
    (folder / "whats-on-autumn-2024.md").write_text(CALENDAR, encoding="utf-8")
    (folder / "annual-review-2023.md").write_text(REPORT, encoding="utf-8")
    (folder / "memo-night-tour-postponed.txt").write_text(MEMO, encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("postponed"))
    assert ingest([folder], settings, progress=False).indexed == 3
    return RagPipeline(settings, llm=pipeline.llm)


def test_the_postponement_moves_the_events_date_in_the_other_documents_only(moved):
    shown = context(moved, "When is the Whitcombe Night Tour taking place?")
    assert "Friday 18 October 2024 (rescheduled)" in shown, shown
    assert "Night Tour on 20 September 2024" not in shown
    assert "which was due to take place on its original date" in shown
    # the volunteer morning on the old date is another event: its date stands
    volunteers = context(moved, "When is the Volunteer Open Morning at the Learning Centre?")
    assert "Volunteer Open Morning; Date: Friday 20 September 2024" in volunteers, volunteers


def test_the_model_answers_the_new_date(moved):
    answer = moved.answer("When is the Whitcombe Night Tour taking place?")
    assert answer.answerable and "18 October" in answer.answer, answer.answer
    assert "20 September" not in answer.answer, answer.answer
