"""The DP reference matcher on hand-made score matrices, and the sentence segmenter."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode

from rag.references import ReferenceMatcher
from rag.text import split_sentences
from rag.settings import ReferenceSettings, SupportSettings


class TableScorer:
    """Scores (segment, chunk) from a table keyed by segment text; unknown segments score 0.
    Keeps every batch it was asked for."""

    kind = "table"

    def __init__(self, table: dict[str, list[float]], chunks: list[str]):
        self.table, self.chunks = table, chunks
        self.batches: list[list[tuple[str, str]]] = []

    def __call__(self, pairs, asked=""):
        self.batches.append(list(pairs))
        return [self.table.get(seg, [0.0] * len(self.chunks))[self.chunks.index(chunk)]
                for seg, chunk in pairs]


CHUNKS = ["c0", "c1", "c2"]


def matcher(table, threshold, max_span, chunks=CHUNKS, **tuning) -> ReferenceMatcher:
    """The matcher as the pipeline builds it, the rest of its settings at their defaults."""
    settings = SimpleNamespace(support=SupportSettings(threshold=threshold),
                               references=ReferenceSettings(max_span=max_span, **tuning))
    return ReferenceMatcher.from_settings(settings, TableScorer(table, chunks))


def spans(segments):
    return [(s.start, s.end, s.supported, [r.chunk for r in s.references]) for s in segments]


def test_known_optimum_joins_only_when_joining_helps():
    table = {
        "A": [0.9, 0.1, 0.1],
        "B": [0.4, 0.2, 0.1],  # alone unsupported ("It was 35 km/h.")
        "A B": [0.8, 0.1, 0.1],  # with its antecedent well supported
        "C": [0.1, 0.1, 0.95],
        "B C": [0.2, 0.1, 0.6],
        "A B C": [0.5, 0.1, 0.5],
    }
    segments = matcher(table, 0.5, 3, margin=0.0, context_bonus=0.3).match(["A", "B", "C"], CHUNKS)
    # A B joined: A counts 0.8, B min(0.8, 0.4 + 0.3) = 0.7: 1.5 beats 0.9 + max(0.4, 0.5) = 1.4.
    assert spans(segments) == [(0, 1, True, [0]), (2, 2, True, [2])]
    assert [s.text for s in segments] == ["A B", "C"]


def test_an_unsupported_sentence_cannot_ride_along_in_a_strong_segment():
    table = {
        "A": [0.9, 0.0, 0.0],
        "W": [0.05, 0.02, 0.0],  # "The programme also bought a wind tunnel."
        "A W": [0.88, 0.0, 0.0],  # a bi-encoder barely notices the extra sentence
    }
    segments = matcher(table, 0.5, 2).match(["A", "W"], CHUNKS)
    assert spans(segments) == [(0, 0, True, [0]), (1, 1, False, [])]
    # Without the per-sentence cap (an unbounded bonus) W would be swallowed as supported.
    loose = matcher(table, 0.5, 2, context_bonus=1.0).match(["A", "W"], CHUNKS)
    assert spans(loose) == [(0, 1, True, [0])]


def test_does_not_merge_into_one_giant_segment_or_split_needlessly():
    table = {"A": [0.9, 0, 0], "B": [0, 0.9, 0], "A B": [0.5, 0.5, 0]}
    segments = matcher(table, 0.5, 2).match(["A", "B"], CHUNKS)
    assert spans(segments) == [(0, 0, True, [0]), (1, 1, True, [1])]
    tie = {"A": [0.9, 0, 0], "B": [0.9, 0, 0], "A B": [0.9, 0, 0]}
    segments = matcher(tie, 0.5, 2).match(["A", "B"], CHUNKS)
    assert spans(segments) == [(0, 1, True, [0])]  # equal support: fewer segments


def test_threshold_marks_unsupported_and_moves_with_threshold():
    table = {"A": [0.9, 0, 0], "B": [0.45, 0.4, 0], "A B": [0.6, 0, 0]}
    built = matcher(table, 0.5, 1)
    low = built.match(["A", "B"], CHUNKS, threshold=0.4)  # overridden for this call only
    high = built.match(["A", "B"], CHUNKS)
    assert spans(low) == [(0, 0, True, [0]), (1, 1, True, [0, 1])]  # 0.40 within margin of 0.45
    assert spans(high) == [(0, 0, True, [0]), (1, 1, False, [])]
    assert high[1].score == pytest.approx(0.45)
    assert spans(matcher(table, 0.4, 1).match(["A", "B"], CHUNKS)) == spans(low)


def test_margin_gives_several_references_best_first():
    table = {"A": [0.7, 0.9, 0.88]}
    segments = matcher(table, 0.5, 1, margin=0.05).match(["A"], CHUNKS)
    assert [r.chunk for r in segments[0].references] == [1, 2]
    assert segments[0].sentences == [0, 0]


def test_max_span_bounds_segments_and_one_batched_call():
    sentences = ["s0", "s1", "s2", "s3", "s4"]
    table = {" ".join(sentences[i : j + 1]): [0.9, 0, 0] for i in range(5) for j in range(i, 5)}
    built = matcher(table, 0.5, 2)
    segments = built.match(sentences, CHUNKS)
    assert all(s.end - s.start + 1 <= 2 for s in segments)
    assert [s.start for s in segments] == [0, 2, 4]
    # every span up to 2 sentences x every chunk, in one call
    assert [len(batch) for batch in built.scorer.batches] == [(5 + 4) * 3]


def test_empty_answer_one_sentence_and_no_chunks():
    assert matcher({}, 0.5, 3).match([], CHUNKS) == []
    one = matcher({"A": [0.2, 0.7, 0.1]}, 0.5, 3).match(["A"], CHUNKS)
    assert spans(one) == [(0, 0, True, [1])]
    none = matcher({}, 0.5, 3, chunks=[]).match(["A", "B"], [])
    assert [s.supported for s in none] == [False] and none[0].references == []


def test_duplicate_pairs_scored_once():
    table = {"X": [0.9, 0.9, 0.9], "X X": [0.9, 0.9, 0.9]}
    built = matcher(table, 0.5, 2, chunks=["c", "c", "c"])
    built.match(["X", "X"], ["c", "c", "c"])
    assert [len(batch) for batch in built.scorer.batches] == [2]  # ("X", "c") and ("X X", "c")


def test_run_scores_the_claims_against_the_chunks_as_embedded():
    """At the answer level: citation markers and the cited file's name are left out of what is
    scored, the chunk is read with its header, and each segment keeps the text as written."""
    node = TextNode(text="The HIC15 was 412.", metadata={"doc": "report-2024-08.docx", "Title": "FT-2024-07"},
                    excluded_embed_metadata_keys=["doc"])
    chunk = node.get_content(metadata_mode=MetadataMode.EMBED)
    assert chunk.startswith("Title: FT-2024-07")
    claim, other = "The HIC15 was 412 in .", "The programme bought a wind tunnel."
    built = matcher({claim: [0.9]}, 0.5, 1, chunks=[chunk])
    answer = f"The HIC15 was 412 in report-2024-08.docx [1]. {other}"
    segments = built.run(answer, [NodeWithScore(node=node, score=1.0)])
    assert built.scorer.batches == [[(claim, chunk), (other, chunk)]]
    assert [(s.text, s.supported, [r.chunk for r in s.references]) for s in segments] == [
        ("The HIC15 was 412 in report-2024-08.docx [1].", True, [0]), (other, False, [])]
    stricter = built.run(answer, [NodeWithScore(node=node, score=1.0)], threshold=0.95)
    assert [s.supported for s in stricter] == [False, False]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The car hit the barrier at 56 km/h. The HIC15 was 412 [1]. Limits were met.",
         ["The car hit the barrier at 56 km/h.", "The HIC15 was 412 [1].", "Limits were met."]),
        ("Deflection was 31.5 mm, e.g. below the limit. Dr. Park agreed. [2] Next step follows.",
         ["Deflection was 31.5 mm, e.g. below the limit.", "Dr. Park agreed. [2]", "Next step follows."]),
        ("Results:\n- HIC was 412.\n- Chest was 31 mm.\n\nAll passed!",
         ["Results:", "- HIC was 412.", "- Chest was 31 mm.", "All passed!"]),
        ("충돌 시험은 56 km/h에서 수행되었다. 결과는 양호했다 [1]. 추가 시험은 없다.",
         ["충돌 시험은 56 km/h에서 수행되었다.", "결과는 양호했다 [1].", "추가 시험은 없다."]),
        ("Is it safe? Yes. See Fig. 3 for details.", ["Is it safe?", "Yes.", "See Fig. 3 for details."]),
        ("", []),
    ],
)
def test_split_sentences(text, expected):
    assert split_sentences(text) == expected


RESULTS = """Title: Frontal impact test FT-2024-07
Test Name: FT-2024-07

# Results

| Measurement | Driver | Passenger | Limit |
|---|---|---|---|
| HIC15 | 412 | 388 | 700 |
| Chest deflection (mm) | 31 | 28 | 42 |"""


@pytest.mark.parametrize(("segment", "stated"), [
    ("The driver dummy reached a HIC15 of 412 in FT-2024-07.", True),  # the row's first value
    ("The passenger dummy reached a HIC15 of 388.", True),  # another column, named
    ("The passenger chest deflection was 28 mm.", True),
    ("The HIC15 was 388.", False),  # the passenger's value, its column not named
    ("The driver dummy reached a HIC15 of 700 in FT-2024-07.", False),  # the limit, not the driver's
    ("The driver dummy reached a HIC15 of 31.", False),  # a figure of another row
    ("The chest deflection of the driver was 412.", False),
    ("The steering column moved 38 mm.", False),  # no row named
])
def test_a_table_row_states_a_segment_only_with_its_own_cell(segment, stated):
    from rag.support_rules import table_support

    assert table_support(segment, RESULTS) is stated


def test_a_code_copied_from_another_row_does_not_name_that_row():
    from rag.support_rules import table_support

    inventory = ("| Dummy | Serial | Tests since calibration |\n|---|---|---|\n| ES-2re | ES-031 | 2 |\n"
                 "| WorldSID 50M | WS-015 | 11 |")
    assert table_support("The serial number of the WorldSID dummy is WS-015.", inventory)
    assert not table_support("The serial number of the WorldSID dummy is ES-031.", inventory)
    assert table_support("The WorldSID dummy has done 11 tests since its last calibration.", inventory)
    assert not table_support("The WorldSID dummy has done 2 tests since its last calibration.", inventory)


def test_a_run_code_names_its_row_and_not_its_neighbours():
    from rag.support_rules import table_support

    sled = ("| run | speed_kmh | peak_decel_g | result |\n|---|---|---|---|\n| SL-12 | 64 | 29.3 | pass |\n"
            "| SL-13 | 66 | 30.2 | fail |\n| SL-14 | 68 | 31.1 | pass |")
    assert table_support("The peak deceleration reached by sled test SL-13 was 30.2 g.", sled)
    assert table_support("Sled test SL-13 failed.", sled)
    assert not table_support("The peak deceleration reached by sled test SL-13 was 31.1 g.", sled)
    # not the row's first value, its column not named
    assert not table_support("Sled test SL-13 failed at 30.2.", sled)


FAQ = """Title: Chapter 12. Getting support for Debian GNU/Linux

## 12.5. How do I report a bug in Debian?

You can use the package reportbug that will guide you through the reporting process. \
Kernel modules to load at boot are listed in /etc/modules. Debian 6.0 was released as squeeze."""


@pytest.mark.parametrize(("segment", "stated"), [
    ("패키지는 `reportbug`입니다.", True),  # a terse Korean answer resting on a package name
    ("부팅할 때 불러올 커널 모듈 목록은 `/etc/modules` 파일에 둡니다.", True),
    ("부팅할 때 불러올 커널 모듈 목록은 `/etc/modprobe.conf` 파일에 둡니다.", False),  # not in the chunk
    ("데비안 13 릴리스의 코드명은 \"squeeze\"입니다.", False),  # a plain word, not a code
    ("데비안 13 릴리스의 코드명은 `squeeze`입니다.", False),  # the chunk's squeeze is 6.0's, not 13's
    ("데비안 6.0 릴리스의 코드명은 `squeeze`입니다.", True),
    ("Debian GNU/Linux는 많은 패키지를 포함합니다.", False),  # the title's name: the topic, not an answer
    ("You can use the package reportbug to report a bug.", False),  # same script: the learned model decides
])
def test_a_code_copied_into_the_other_language_states_the_segment(segment, stated):
    from rag.support_rules import code_support, common_codes

    assert code_support(segment, FAQ, common_codes([(segment, FAQ)])[segment]) is stated


def test_a_code_most_of_the_chunks_hold_names_the_topic():
    from rag.support_rules import common_codes

    chunks = ["apt-get install foo", "apt-get remove foo", "use dpkg-divert here"]
    segment = "`apt-get`과 `dpkg-divert`를 씁니다."
    assert common_codes([(segment, c) for c in chunks])[segment] == {"apt-get"}


FEMUR = RESULTS + "\n| Femur load (kN) | 3.1 | 2.7 | 9.07 |"
SLED = """Title: Sled test results

| run | speed_kmh | peak_decel_g | result |
|---|---|---|---|
| SL-12 | 64 | 29.3 | pass |
| SL-13 | 66 | 30.2 | fail |"""
TEXT = """Title: Side impact retest SI-2024-05

The B-pillar intruded 142 mm; the internal target is 120 mm. The barrier struck at 50 km/h, and the
driver airbag deployed 14 ms after first contact. 시험 TR-07에서 열폭주는 가열 시작 438초 후에 발생했다."""


@pytest.mark.parametrize(("segment", "chunk", "backed"), [
    ("The passenger chest deflection was 28 mm.", RESULTS, True),  # the row's label names the unit
    ("The driver's femur load was 3.1 kN.", FEMUR, True),
    ("The driver's femur load was 3.1 mm.", FEMUR, False),  # the row says kN
    ("The driver reached a HIC15 of 412 ms.", RESULTS, False),  # HIC15 has no unit
    ("The driver reached a HIC15 of 412.", RESULTS, True),  # no unit claimed: none needed
    ("운전석 HIC15는 412 mm였다.", RESULTS, False),
    ("Sled run SL-13 reached 66 km/h.", SLED, True),  # the column header names it ("speed_kmh")
    ("Sled run SL-13 peaked at 30.2 g.", SLED, True),
    ("Sled run SL-13 reached 66 mph.", SLED, False),
    ("The airbag deployed 14 milliseconds after first contact.", TEXT, True),  # spelled out
    ("The airbag deployed 14 seconds after first contact.", TEXT, False),
    ("The barrier struck at 50 km/h.", TEXT, True),
    ("Thermal runaway began 438 seconds after heating started in TR-07.", TEXT, True),  # 438초
    ("Thermal runaway began 438 ms after heating started in TR-07.", TEXT, False),
    ("The pack's outside peaked at 87 °C.", "팩 외부의 최고 온도는 87도였다.", True),
    ("The pack's outside peaked at 87 mm.", "팩 외부의 최고 온도는 87도였다.", False),
    ("The B-pillar intruded 15 mm.", TEXT, False),  # a figure the chunk lacks
])
def test_a_figure_needs_its_unit_in_the_chunk(segment, chunk, backed):
    from rag.claims import claims_backed

    assert claims_backed(segment, chunk) is backed


@pytest.mark.parametrize(("segment", "holds"), [
    ("The B-pillar intrusion of 98 mm was within the 120 mm target.", True),
    ("The femur load of 9.5 kN stayed below the 9.07 kN limit.", False),
    ("The femur load of 3.1 kN stayed below the 9.07 kN limit.", True),
    ("At 31 mm the chest deflection exceeded the 42 mm limit.", False),
    ("The HIC15 of 412 did not exceed the limit of 700.", True),
    ("The HIC15 of 812 did not exceed the limit of 700.", False),
    ("The limit of 700 was exceeded by the 412 reading.", False),  # passive: 412 > 700 is claimed
    ("The pack weighed 1,200 kg, more than the 950 kg allowed.", True),
    ("The deployment came within 5 ms of the 14 ms target.", True),  # a tolerance, not an order
    ("The car hit the barrier at 56 km/h in 2024.", True),  # no comparison
    ("The test speed of 64 km/h was above the 2 mm threshold.", True),  # other units: not compared
    ("흉부 변위는 28 mm로 기준 42 mm 이내였다.", True),
    ("흉부 변위는 48 mm로 기준 42 mm 이내였다.", False),
    ("HIC15는 412로 기준 700을 초과했다.", False),
])
def test_a_comparison_must_agree_with_its_figures(segment, holds):
    from rag.units import comparisons_hold

    assert comparisons_hold(segment) is holds


def test_the_support_model_rejects_a_changed_unit_or_a_false_comparison(base_settings):
    """Through the learned support model with the real encoder: the right claim is backed, the
    same claim with an invented unit or a comparison its figures contradict is not."""
    from rag.models import build_embedding
    from rag.scoring import bi_encoder
    from rag.support import support_scorer

    scorer = support_scorer(base_settings, bi_encoder(base_settings, build_embedding(base_settings)))
    retest = ("Title: Side impact retest SI-2024-05\n\n# Findings\n\n"
              "The B-pillar intrusion was 142 mm against an "
              "internal target of 120 mm, so the target was missed. The passenger HIC15 was 388.")
    right, unit, within, table = scorer([
        ("The B-pillar intrusion was 142 mm, against an internal target of 120 mm.", retest),
        ("The passenger HIC15 was 388 mm.", retest),
        ("The B-pillar intrusion was 142 mm, which was within the internal target of 120 mm.", retest),
        ("The passenger dummy reached a HIC15 value of 388 mm.", RESULTS),
    ])
    assert right >= 0.5 and unit == within == table == 0.0, (right, unit, within, table)
    # a qualifier the chunk states the opposite of: the frontal test's findings are no rear test's
    frontal = ("Title: Frontal impact test FT-2024-07\n\n# Findings\n\n"
               "- The steering column moved 38 mm rearward.")
    same, flipped = scorer([("In the frontal impact test the steering column moved 38 mm rearward.", frontal),
                            ("In the rear impact test the steering column moved 38 mm rearward.", frontal)])
    assert same >= 0.5 and flipped == 0.0, (same, flipped)


def test_the_marks_a_reader_sees_are_the_matchers():
    """The model's [n] replaced by the references found, before the closing punctuation; none on
    an unsupported segment; the layout between segments kept."""
    from rag.references import cited, marked

    assert marked("Curtain airbags protect the head [2].", [1]) == "Curtain airbags protect the head [1]."
    assert marked("The HIC15 was 412. [2]", [1, 3]) == "The HIC15 was 412 [1, 3]."
    assert marked("운전석 에어백은 14 ms 만에 전개되었다 [1].", [3]) == \
        "운전석 에어백은 14 ms 만에 전개되었다 [3]."
    assert marked("A wind tunnel was bought [1].", []) == "A wind tunnel was bought."
    draft = "Results:\n- The HIC15 was 412 [2].\n- The chest   deflection was 31 mm [2].\n\nAll passed [1]."
    assert cited(draft, [(0, 0, []), (1, 2, [1]), (3, 3, [])]) == \
        "Results:\n- The HIC15 was 412.\n- The chest   deflection was 31 mm [1].\n\nAll passed."


def test_a_korean_sentence_full_of_latin_names_is_read_across_scripts(base_settings):
    """A Korean answer that carries a record's Latin names outweighs its syllables in letters,
    yet is Korean: it is scored as a translation of the English record, and a changed name is not."""
    from rag.models import build_embedding
    from rag.scoring import bi_encoder
    from rag.support import support_scorer
    from rag.text import across_scripts

    terms = ("cedent: Karrow Insurance\n\nprogramme: Property catastrophe excess of loss 2025\n\n"
             "lead_reinsurer: Rheinwall Re\n\nbroker: Halden & Co")
    korean = "Karrow Insurance 2025년 프로그램의 선두 재보험사는 Rheinwall Re입니다."
    assert across_scripts(korean, terms) and not across_scripts("The lead reinsurer is Rheinwall Re.", terms)
    scorer = support_scorer(base_settings, bi_encoder(base_settings, build_embedding(base_settings)))
    right, swapped = scorer([(korean, terms), (korean.replace("Rheinwall Re", "Nordkap Re"), terms)])
    assert right >= 0.5 > swapped, (right, swapped)
