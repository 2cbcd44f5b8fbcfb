"""RAGAS metrics: string and ID metrics on hand-made rows; LLM metrics with the embedded judge."""

from __future__ import annotations

import pytest

from evaluation.ragas_eval import LLM_METRICS, NON_LLM_METRICS, RagasRow, ragas_scores

BATTERY_CONTEXT = (
    "A steel nail of 3 mm diameter was driven through cell 14 of the Orion battery pack at 80 mm/s. "
    "The cell temperature peaked at 61 degrees Celsius and no thermal runaway occurred."
)
BATTERY_Q = "What peak cell temperature was reached in the nail penetration test of the Orion pack?"
BATTERY_REF = "The peak cell temperature was 61 degrees Celsius."


def test_string_and_id_metrics_on_hand_made_rows():
    same = RagasRow("q", BATTERY_REF, ["c"], BATTERY_REF, ["a", "b", "c", "d"], ["a", "x"])
    unrelated = RagasRow("q", "The cafeteria opens at 7:30 on weekdays.", ["c"], BATTERY_REF, ["a"], [])
    no_reference = RagasRow("q", "Some answer.", ["c"], None, ["a", "b"], ["b"])

    s, u, n = ragas_scores([same, unrelated, no_reference], None, None, NON_LLM_METRICS, show_progress=False)

    for name in ("rouge", "bleu", "chrf", "string_similarity"):
        assert s[name] == pytest.approx(1.0)
        assert u[name] < 0.4, name  # character edit similarity of any two sentences is ~0.3
        assert n[name] is None
    assert s["id_context_precision"] == pytest.approx(1 / 4)  # 'a' of a, b, c, d
    assert s["id_context_recall"] == pytest.approx(1 / 2)  # 'a' of a, x
    assert u["id_context_precision"] is None and u["id_context_recall"] is None  # no gold ids
    assert n["id_context_precision"] == pytest.approx(1 / 2) and n["id_context_recall"] == 1.0


def test_bad_metric_requests_are_refused():
    row = RagasRow("q", "a", ["c"], "a", [], [])
    with pytest.raises(ValueError, match="bleu2"):
        ragas_scores([row], None, None, ["bleu2"], show_progress=False)
    with pytest.raises(ValueError, match="judge LLM"):
        ragas_scores([row], None, None, ["faithfulness"], show_progress=False)


@pytest.mark.slow
def test_llm_metrics_with_the_embedded_judge(pipeline):
    faithful = RagasRow(
        BATTERY_Q, "The cell temperature peaked at 61 degrees Celsius.", [BATTERY_CONTEXT], BATTERY_REF,
        [], [],
    )
    # No reference: only faithfulness and answer relevancy are judged (12 judge calls in all, not 18).
    contradicting = RagasRow(
        BATTERY_Q, "The cell temperature peaked at 250 degrees Celsius and the pack caught fire.",
        [BATTERY_CONTEXT], None, [], [],
    )

    good, bad = ragas_scores([faithful, contradicting], pipeline.llm, pipeline.embedding, LLM_METRICS)

    assert all(bad[name] is None for name in ("context_precision", "context_recall", "factual_correctness"))
    judged = [good[name] for name in LLM_METRICS] + [bad["faithfulness"], bad["answer_relevancy"]]
    assert all(v is None or (isinstance(v, float) and 0.0 <= v <= 1.0) for v in judged), (good, bad)
    assert sum(v is not None for v in judged) > len(judged) / 2, (good, bad)
    if good["faithfulness"] is not None and bad["faithfulness"] is not None:
        assert good["faithfulness"] >= bad["faithfulness"], (good, bad)
