"""Retrieval metrics on hand-computed cases."""

from __future__ import annotations

import pytest

from evaluation.answers import refusal_metrics
from evaluation.correctness import states_answer
from evaluation.metrics import aggregate, question_metrics

ONE = [{"doc": "a"}]
TWO = [{"doc": "a"}, {"doc": "b"}]


def rows(*flags):
    return [list(f) for f in flags]


def test_single_relevant_chunk_at_rank_two():
    hits = rows([False], [True], [False])
    m = question_metrics(hits, hits, ONE)
    assert m["map@1"] == 0 and m["map@5"] == pytest.approx(0.5) and m["mrr"] == pytest.approx(0.5)
    assert (m["success@1"], m["success@5"]) == (0.0, 1.0)
    assert m["mean_evidence_rank"] == 2 and m["evidence_recall@5"] == 1.0
    assert m["source_traceability"] == 0.0


def test_several_relevant_chunks_and_ties_in_rank():
    hits = rows([True], [False], [True], [True])
    m = question_metrics(hits, hits, ONE)
    # AP@5 = (1/1 + 2/3 + 3/4) / 3
    assert m["map@5"] == pytest.approx((1 + 2 / 3 + 3 / 4) / 3)
    assert m["map@1"] == 1.0 and m["source_traceability"] == 1.0


def test_no_relevant_chunk():
    hits = rows([False], [False])
    m = question_metrics(hits, hits, ONE)
    assert m["map@10"] == 0 and m["mrr"] == 0 and m["mean_evidence_rank"] is None
    assert m["bundle_coverage@5"] == 0


def test_multi_evidence_bundle():
    hits = rows([True, False], [False, False], [False, True])
    m = question_metrics(hits, hits, TWO)
    assert m["evidence_recall@5"] == 1.0 and m["mean_evidence_rank"] == 3 and m["bundle_coverage@5"] == 1.0
    far = rows([True, False], *[[False, False]] * 5, [False, True])
    m = question_metrics(far, far, TWO)
    assert m["evidence_recall@5"] == 0.5 and m["bundle_coverage@5"] == 0 and m["mean_evidence_rank"] == 7


def test_optional_evidence_does_not_count_as_required():
    evidence = [{"doc": "a"}, {"doc": "b", "required": False}]
    hits = rows([False, True], [True, False])
    m = question_metrics(hits, hits, evidence)
    assert m["mrr"] == 0.5 and m["mean_evidence_rank"] == 2


def test_traceability_ignores_text_but_not_location():
    hits, located = rows([False]), rows([True])  # right page, text not in this chunk
    assert question_metrics(hits, located, ONE)["source_traceability"] == 1.0


def test_aggregate_means_and_rank_over_found_bundles():
    a = question_metrics(rows([True]), rows([True]), ONE)
    b = question_metrics(rows([False]), rows([False]), ONE)
    agg = aggregate([a, b])
    assert agg["map@1"] == 0.5 and agg["mean_evidence_rank"] == 1


@pytest.mark.parametrize(("answer", "reference", "right"), [
    ("The driver dummy reached a HIC15 of 412.", "412", True),
    ("The driver dummy reached a HIC15 of 421.", "412", False),
    ("It deflected 28 millimetres.", "28 mm", True),
    ("It deflected 28 cm.", "28 mm", False),
    ("The airbag deployed 14ms after first contact.", "14 ms", True),
    ("에어백은 첫 접촉 후 14 밀리초에 전개되었다.", "14 ms", True),
    ("최대 하중은 61,2 kN이었다.", "61.2 kN", True),
    ("최대 하중은 61.2킬로뉴턴이었다.", "61.2 kN", True),
    ("The corpus holds 1,204 documents.", "1204 documents", True),
    ("The corpus holds 1,240 documents.", "1204 documents", False),
    ("It was run at the Aldenhoven proving ground.", "At the Aldenhoven proving ground", True),
    ("It was run at the Hwaseong laboratory.", "At the Aldenhoven proving ground", False),
    ("시험은 화성 시험소에서 진행되었다.", "화성 시험소", True),
    ("시험은 아헨 시험소에서 진행되었다.", "화성 시험소", False),
    ("The intrusion is 98 mm.", "98 mm in the retest SI-2024-05", True),  # a code is not a figure
    ("It was run in Hwaseong on 2024-08-28.", "Hwaseong, 2024-08-28", True),
    ("It was run in Hwaseong on 2024-08-29.", "Hwaseong, 2024-08-28", False),
    ("It was run in Hwaseong on August 28, 2024.", "Hwaseong, 2024-08-28", True),  # dates in any spelling
    ("화성에서 2024년 8월 28일에 진행되었다.", "Hwaseong, 2024-08-28", False),  # the place is missing
    ("It was run on 28 August 2024.", "2024-08-28", True),
    # a weekday before a date is the date's, however spelled
    ("The workshop is on Sat 5 Oct 2024 at 10:00 [1].", "Saturday 5 October 2024", True),
    ("The workshop is on Sat 12 Oct 2024 [1].", "Saturday 5 October 2024", False),
    ("It was run on 28 July 2024.", "2024-08-28", False),
    ("Two points near the A-pillar base are red.", "2", True),
    ("Yes, rear impact testing is part of the Model K programme in 2024.", "No, it is out of scope in 2024",
     False),
    ("No, rear impact testing is out of scope in 2024.", "No, it is out of scope in 2024", True),
    ("Rear impact testing is not part of the 2024 programme.", "No, it is out of scope in 2024", True),
    ("Rear impact testing is out of scope for the Model K in 2024.", "No, it is out of scope in 2024", True),
    ("Rear impact testing is part of the Model K programme in 2024.", "No, it is out of scope in 2024",
     False),
    ("후방 충돌 시험은 2024년 프로그램에 포함되지 않습니다.", "No, it is out of scope in 2024", True),
    # a particle after a name
    ("플래시 파일은 gnash 또는 swfdec로 재생할 수 있습니다.", "gnash와 swfdec", True),
    ("플래시 파일은 gnash로 재생할 수 있습니다.", "gnash와 swfdec", False),
    # a currency's scale: "EUR 1.24m" is EUR 1.24 million
    ("Busan made EUR 1.24 million in F&B revenue.", "EUR 1.24m", True),
    ("Busan made EUR 1.42 million in F&B revenue.", "EUR 1.24m", False),
    # every dash a hyphen; a bracketed note of the gold answer is no part of its key value
    ("The gate is open 06:00-14:00 on Saturdays.", "06:00–14:00", True),
    ("The deadline is still 31 March 2025.", "31 March 2025 (unchanged)", True),
    ("The deadline is 24 March 2025.", "31 March 2025 (unchanged)", False),
    # a citation mark is no figure
    ("Three results from the comparison need follow-up [1, 3].", "1", False),
    ("One result needs follow-up [2].", "1", True),
    ("1 result needs follow-up [2].", "1", True),
    ("Yes, the report is final.", "Yes", True),
    ("The report is not final.", "Yes", False),
])
def test_correctness_check_normalises_figures_units_and_korean_particles(answer, reference, right):
    assert states_answer(answer, reference) is right


def test_refusal_metrics_count_right_answers_and_supported_wrong_ones():
    def row(answer, reference, answered=True, share=1.0):
        return {"gold_answerable": True, "answered": answered, "answer": answer, "reference": reference,
                "reference_from": "answer", "supported_share": share, "timings_ms": {"total": 1.0}}

    rows = [row("The HIC15 was 412.", "412"), row("The HIC15 was 388.", "412"),
            row("I cannot answer this.", "28 mm", answered=False, share=None)]
    metrics = refusal_metrics(rows)
    assert metrics["n_checked"] == 3 and metrics["right_when_answerable"] == pytest.approx(1 / 3, abs=1e-3)
    assert metrics["supported_but_wrong"] == 1
