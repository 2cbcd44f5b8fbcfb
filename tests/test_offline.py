"""Ingest and ask with every non-loopback connection refused at the socket level."""

from __future__ import annotations

from conftest import BATTERY_Q, fresh_settings

from ingestion.pipeline import ingest
from rag import models
from rag.pipeline import RagPipeline


def test_ingest_and_ask_attempt_no_outside_connection(base_settings, corpus, tmp_path, no_network):
    # Load the models afresh under the guard, as a new process would.
    models._embedding.cache_clear()
    models._llamacpp.cache_clear()
    settings = fresh_settings(base_settings, tmp_path / "storage")
    assert ingest([corpus], settings, progress=False).indexed == 2
    answer = RagPipeline(settings).answer(BATTERY_Q)
    assert answer.answerable and answer.sources[0].doc == "battery.md"
    assert no_network == []
