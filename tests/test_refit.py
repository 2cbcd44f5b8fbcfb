"""The ranker refit after an ingest (training/refit.py) on the sample corpus's real store: adopted
where it ranks the corpus's held-out mined questions better than the configured weights, not
where the configured weights are already fitted to those questions, and then used by the rerank
stage."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from rag.models import build_embedding
from rag.postprocessors import build_rerank_stage
from rag.ranking import DEFAULT_RANKER, LinearRanker
from rag.store import Store
from training.refit import RankerRefit

from conftest import fresh_settings

QUESTIONS = 30  # the fewest [rerank] refit_questions allows: each costs a retrieval


@pytest.fixture
def sample_copy(sample_indexed, base_settings, tmp_path):
    """A copy of the sample store: the refit writes its choice there."""
    shutil.copytree(sample_indexed.storage_dir, tmp_path / "store")
    return lambda ranker_file, **rerank: fresh_settings(
        base_settings, tmp_path / "store",
        rerank={"ranker_file": ranker_file, "refit": True, "refit_questions": QUESTIONS} | rerank,
    )


def in_use(settings) -> LinearRanker:
    return build_rerank_stage(settings, Store(settings), build_embedding(settings)).ranker


def test_refit_is_adopted_where_it_wins_and_not_where_it_loses(sample_copy, tmp_path):
    # The shipped weights negated rank the likeliest chunk last: the refit beats them.
    shipped = LinearRanker.load(DEFAULT_RANKER)
    inverted = LinearRanker([-w for w in shipped.weights], -shipped.bias, source="inverted")
    inverted.save(tmp_path / "inverted.json")
    settings = sample_copy(tmp_path / "inverted.json")
    line = RankerRefit.from_settings(settings).after_ingest(settings, progress=False)
    record = json.loads(Store(settings).refit_file.read_text(encoding="utf-8"))
    assert record["choice"] == "refit" and line.startswith("ranker: refit ")
    figures = record["heldout"]
    assert figures["refit"]["map@1"] >= figures["shipped"]["map@1"] + settings.rerank.refit_margin
    assert record["questions"] == QUESTIONS
    refit = in_use(settings)
    assert refit.weights == record["weights"] != inverted.weights
    assert RankerRefit.from_settings(settings).after_ingest(settings) is None  # nothing changed since
    assert in_use(sample_copy(tmp_path / "inverted.json", refit=False)).weights == inverted.weights

    # Configured weights fitted on all of these questions: the refit, judged on questions its
    # folds did not see, does not beat them, and they stay in use.
    refit.save(tmp_path / "fitted.json")
    Store(settings).refit_file.unlink()
    settings = sample_copy(tmp_path / "fitted.json")
    line = RankerRefit.from_settings(settings).after_ingest(settings, progress=False)
    record = json.loads(Store(settings).refit_file.read_text(encoding="utf-8"))
    assert record["choice"] == "shipped" and line.startswith("ranker: shipped ")
    assert "weights" not in record
    assert record["heldout"]["refit"]["map@1"] < record["heldout"]["shipped"]["map@1"] + 0.02
    assert np.allclose(in_use(settings).weights, refit.weights)
