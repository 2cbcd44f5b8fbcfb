"""The evaluation module end to end: retrieval by stage, reference matching, answers with the
real embedded LLM as generator and judge, pairwise order swap, run folders, reports, resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES, ScriptedLLM, fresh_settings

from evaluation.judge import CRITERIA, Judge, combine_orders, parse_grades, parse_preferences
from evaluation.references import evaluate_references, load_gold
from evaluation.report import fmt
from evaluation.runner import compare, run_answers, run_references, run_retrieval
from evaluation.runs import Run
from rag.settings import load_settings

QA = FIXTURES / "qa.jsonl"
GOLD = FIXTURES / "references_gold.jsonl"
METRIC_KEYS = {"map@1", "map@5", "map@10", "success@1", "success@5", "success@10", "mrr", "evidence_recall@5",
               "mean_evidence_rank", "bundle_coverage@5", "source_traceability"}


def scripted_judge(*replies: str) -> Judge:
    return Judge(ScriptedLLM(replies=list(replies), prompts=[]), "Q {question} R {reference} A {answer}",
                 "Q {question} R {reference} 1 {first} 2 {second}", retries=2)


def test_grades_are_strict_json_with_retries():
    assert parse_grades('Sure! {"correctness": 4, "helpfulness": "5", "informativeness": 3, '
                        '"rationale": "ok"}') == {
        "correctness": 4, "helpfulness": 5, "informativeness": 3, "rationale": "ok"}
    assert parse_grades('{"correctness": 7, "helpfulness": 5, "informativeness": 3}') is None  # out of range
    assert parse_grades('{"correctness": 4, "helpfulness": 5}') is None  # a criterion missing
    assert parse_grades("4/5, quite good") is None
    judge = scripted_judge("no JSON here", '{"correctness": true}',
                           '{"correctness": 2, "helpfulness": 3, "informativeness": 4, "rationale": "r"}')
    assert judge.grade("q", None, "a")["correctness"] == 2 and judge.calls == 3
    assert "not the JSON object asked for" in judge.llm.prompts[1]
    failing = scripted_judge("x", "y", "z")
    assert failing.grade("q", "ref", "a")["error"] == "malformed judge reply"


def test_pairwise_order_swap_cancels_position_bias():
    assert parse_preferences('{"correctness": "Answer 1", "helpfulness": "tie", "informativeness": 2}') == {
        "correctness": "1", "helpfulness": "tie", "informativeness": "2"}
    # A shown first wins correctness and, shown second, wins it again: a win. A judge that always
    # prefers the first answer gives A one win and one loss: a tie.
    first = {"correctness": "1", "helpfulness": "1", "informativeness": "tie"}
    swapped = {"correctness": "2", "helpfulness": "1", "informativeness": "1"}
    assert combine_orders(first, swapped) == {"correctness": "win", "helpfulness": "tie",
                                              "informativeness": "tie"}
    judge = scripted_judge('{"correctness": "1", "helpfulness": "1", "informativeness": "1"}',
                           '{"correctness": "1", "helpfulness": "2", "informativeness": "tie"}')
    verdict = judge.compare("q", "ref", "answer A", "answer B")
    assert verdict["outcome"] == {"correctness": "tie", "helpfulness": "win", "informativeness": "tie"}
    assert "1 answer A 2 answer B" in judge.llm.prompts[0] and "1 answer B 2 answer A" in judge.llm.prompts[1]


def test_reference_metrics_on_a_known_score_table(tmp_path):
    items = load_gold(GOLD)
    table = {  # sentence i -> scores against chunks c1, c2
        0: [0.9, 0.3], 1: [0.55, 0.6], 2: [0.2, 0.45],
    }
    sentences = items[0]["answer_sentences"]
    chunks = [c["text"] for c in items[0]["chunks"]]

    class TableScorer:
        kind = "table"

        def __call__(self, pairs):
            out = []
            for sentence, chunk in pairs:
                parts = [i for i, s in enumerate(sentences) if s in sentence]
                out.append(min(table[i][chunks.index(chunk)] for i in parts))
            return out

    settings = fresh_settings(load_settings(), Path("/nonexistent"),
                              support={"threshold": 0.5}, references={"max_span": 1, "margin": 0.0})
    metrics, rows = evaluate_references(settings, items, TableScorer(), progress=False)
    # At 0.5: sentences 0 (c1) and 1 (c2) supported and right, sentence 2 unsupported.
    assert (metrics["precision"], metrics["coverage"]) == (1.0, 1.0)
    curve = {p["threshold"]: p for p in metrics["by_threshold"]}
    assert curve[0.4]["precision"] == pytest.approx(2 / 3, abs=1e-4)  # the gold-less sentence now counts
    assert curve[0.6]["coverage"] == 1.0 and curve[0.65]["coverage"] == 0.5
    assert metrics["pairs_scored"] == 6 and rows[0]["gold"] == [[0], [1], []]
    assert metrics["scorer"] == "table"
    bad = tmp_path / "bad_gold.jsonl"
    bad.write_text('{"id": "x", "answer_sentences": ["a"], "chunks": [], "gold": []}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="one list per answer sentence"):
        load_gold(bad)


def test_eval_retrieval_and_references_write_runs(indexed, corpus, tmp_path):
    settings = fresh_settings(indexed, indexed.storage_dir)
    path = run_retrieval(settings, QA, ns=[5], progress=False)
    metrics = json.loads((path / "metrics.json").read_text())
    assert metrics["n_questions"] == 2  # the unanswerable question has no evidence to rank
    assert list(metrics["stages"]) == ["dense", "bm25", "hybrid", "rerank"]
    assert all(set(m) == METRIC_KEYS for m in metrics["stages"].values())
    assert metrics["stages"]["hybrid"]["map@1"] == 1.0  # two documents, two clear questions
    assert len(Run(path).results()) == 2 and (path / "stages.png").stat().st_size > 5000
    assert "| rerank |" in (path / "report.md").read_text()

    swept = run_retrieval(settings, QA, ns=[5], vary=["headers.enabled=true,false"], corpus=[corpus],
                          progress=False)
    variants = json.loads((swept / "metrics.json").read_text())["variants"]
    assert set(variants) == {"headers.enabled=true", "headers.enabled=false"}
    assert (swept / "variants.png").is_file()
    with pytest.raises(ValueError, match="needs --corpus"):
        run_retrieval(settings, QA, vary=["headers.enabled=true,false"], progress=False)

    refs = run_references(settings, GOLD, progress=False)
    metrics = json.loads((refs / "metrics.json").read_text())
    assert {"n_sentences", "precision", "coverage", "by_threshold", "p50_ms", "p95_ms",
            "pairs_scored"} <= set(metrics)
    assert metrics["n_sentences"] == 3 and metrics["pairs_scored"] == 12  # (3 + 2 + 1 segments) x 2 chunks
    assert (refs / "threshold_curve.png").is_file()
    side = run_references(settings, GOLD, vary=["support.threshold=0.5,0.97"], progress=False)
    by = json.loads((side / "metrics.json").read_text())["variants"]
    assert list(by) == ["support.threshold=0.5", "support.threshold=0.97"]
    assert by["support.threshold=0.97"]["coverage"] < by["support.threshold=0.5"]["coverage"]
    assert "## Variants" in (side / "report.md").read_text()

    both = compare(settings, path, swept)
    assert "| stages.hybrid.map@1 |" in (both / "report.md").read_text()


def last_line(result) -> Path:
    """The run folder a `ragqa eval ...` or `ragqa report` printed last (stdout; stderr has bars)."""
    assert result.exit_code == 0, result.output
    return Path(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_answers_judge_pairwise_and_resume_without_network(pipeline, monkeypatch, no_network, tmp_path):
    """FORKING.md step 5 from the command line: an answers run cut short, graded by `ragqa eval
    judge RUN`, then resumed with --judge (only the missing questions answered and graded),
    scored by `ragqa eval ragas RUN --metric ...` (only the metrics named), then compared with a
    --no-rag run by `ragqa eval judge --a RUN --b RUN` (both orders asked). One answerable and one
    unanswerable question: every judge and generator call costs seconds on a CPU."""
    from conftest import cli

    from rag.pipeline import RagPipeline

    settings = fresh_settings(pipeline.settings, pipeline.settings.storage_dir)
    questions = {json.loads(line)["id"]: json.loads(line)["question"] for line in QA.read_text().splitlines()}
    qa = tmp_path / "qa.jsonl"
    qa.write_text("".join(line + "\n" for line in QA.read_text().splitlines()
                          if json.loads(line)["id"] in ("battery-peak", "world-cup")), encoding="utf-8")
    asked, graded, pairwise_prompts = [], [], []
    real_answer, real_grade, real_ask = RagPipeline.answer, Judge.grade, Judge._ask

    def answer(self, question, *args, **kwargs):
        asked.append(question)
        return real_answer(self, question, *args, **kwargs)

    def grade(self, question, *args, **kwargs):
        graded.append(question)
        return real_grade(self, question, *args, **kwargs)

    def ask(self, prompt, parse):
        if parse is parse_preferences:
            pairwise_prompts.append(prompt)
        return real_ask(self, prompt, parse)

    monkeypatch.setattr(RagPipeline, "answer", answer)
    monkeypatch.setattr(Judge, "grade", grade)
    monkeypatch.setattr(Judge, "_ask", ask)

    first = run_answers(settings, qa, limit=1, pipeline=pipeline, progress=False)
    assert ([r["id"] for r in Run(first).results()] == ["battery-peak"]
            and asked == [questions["battery-peak"]])
    assert last_line(cli(monkeypatch, settings, "eval", "judge", str(first))) == first
    assert graded == [questions["battery-peak"]] and len(Run(first).results("judge")) == 1
    answered, judged = (first / "results.jsonl").read_text(), (first / "judge.jsonl").read_text()

    # Resume: the answered and graded question is kept as it was; only the others are answered
    # and graded.
    asked.clear()
    graded.clear()
    resumed = cli(monkeypatch, settings, "eval", "answers", "--qa", str(qa), "--resume", str(first),
                  "--judge")
    path = last_line(resumed)
    assert path == first
    assert asked == [questions["world-cup"]] and graded == asked
    for name, before in (("results", answered), ("judge", judged)):
        text = (path / f"{name}.jsonl").read_text()
        assert text.startswith(before) and len(text.splitlines()) == 2  # appended, nothing rewritten
    rows = {r["id"]: r for r in Run(path).results()}
    assert set(rows) == {"battery-peak", "world-cup"}
    assert rows["battery-peak"]["answered"] and "61" in rows["battery-peak"]["answer"]
    assert (rows["battery-peak"]["gold_ids"]
            and rows["battery-peak"]["gold_ids"][0] in rows["battery-peak"]["retrieved_ids"])
    assert not rows["world-cup"]["answered"]
    metrics = json.loads((path / "metrics.json").read_text())
    assert metrics["answers"]["n_questions"] == 2
    assert (metrics["answers"]["refusal_accuracy"] == 1.0
            and metrics["answers"]["refused_when_unanswerable"] == 1.0)
    from test_formats import errors

    assert not errors("answers_metrics.schema.json", metrics)  # docs/FORMATS.md
    # The correctness check ran on the answerable item; the battery answer states 61 (above).
    assert metrics["answers"]["n_checked"] == 1 and metrics["answers"]["right_when_answerable"] == 1.0

    # Every answer graded, on the 1-5 scale: the greedy 1.5B judge kept to the JSON on both
    # (a malformed reply is asked again, evaluation.judge.Judge._ask), a refusal included.
    grades = {g["id"]: g["judge"] for g in Run(path).results("judge")}
    assert set(grades) == set(rows) and all("error" not in g for g in grades.values()), grades
    assert all(isinstance(g[c], int) and 1 <= g[c] <= 5 for g in grades.values() for c in CRITERIA)
    assert (metrics["judge"]["n_graded"], metrics["judge"]["n_failed"]) == (2, 0)
    for criterion in CRITERIA:
        assert metrics["judge"][criterion] == pytest.approx(sum(g[criterion] for g in grades.values()) / 2,
                                                            abs=1e-3)
    report = (path / "report.md").read_text()
    assert "## LLM judge" in report and (path / "judge_scores.png").is_file()

    def ragas_rows() -> dict[str, dict]:
        return {r["id"]: r["scores"] for r in Run(path).results("ragas")}

    assert last_line(cli(monkeypatch, settings, "eval", "ragas", str(path), "--metric", "rouge",
                         "--metric", "id_context_recall")) == path
    scored = ragas_rows()  # the answered question only: a refusal has nothing to score
    assert set(scored) == {"battery-peak"}
    assert all(set(s) == {"rouge", "id_context_recall"} for s in scored.values()), scored  # only those named
    ragas = json.loads((path / "metrics.json").read_text())["ragas"]
    assert set(ragas) == {"rouge", "id_context_recall"}
    # gold chunks retrieved
    assert ragas["id_context_recall"]["n"] == 1 and ragas["id_context_recall"]["mean"] == 1.0
    assert 0.0 < ragas["rouge"]["mean"] <= 1.0 and "## RAGAS" in (path / "report.md").read_text()
    # adds one
    assert last_line(cli(monkeypatch, settings, "eval", "ragas", str(path), "--metric", "bleu")) == path
    again = ragas_rows()
    assert all(set(s) == {"rouge", "bleu", "id_context_recall"} for s in again.values())
    assert {k: s["rouge"] for k, s in again.items()} == {k: s["rouge"] for k, s in scored.items()}  # kept
    assert set(json.loads((path / "metrics.json").read_text())["ragas"]) == {"rouge", "bleu",
                                                                             "id_context_recall"}

    baseline = last_line(cli(monkeypatch, settings, "eval", "answers", "--qa", str(qa), "--no-rag",
                             "--limit", "1"))
    assert Run(baseline).config()["no_rag"] and Run(baseline).results()[0]["contexts"] == []
    assert len(asked) == 1  # the bare LLM answered, not the pipeline
    pair = last_line(cli(monkeypatch, settings, "eval", "judge", "--a", str(path), "--b", str(baseline)))
    assert pair.parent == settings.reports_dir and pair not in (path, baseline)
    # Both orders were asked: A's answer first, then B's first.
    answer_a, answer_b = rows["battery-peak"]["answer"], Run(baseline).results()[0]["answer"]
    assert answer_a != answer_b and len(pairwise_prompts) == 2
    assert pairwise_prompts[0].index(answer_a) < pairwise_prompts[0].index(answer_b)
    assert pairwise_prompts[1].index(answer_b) < pairwise_prompts[1].index(answer_a)
    [verdict] = [r["pair"] for r in Run(pair).results()]
    assert "error" not in verdict, verdict
    for order in ("a_first", "b_first"):
        assert set(verdict[order]) == set(CRITERIA) and set(verdict[order].values()) <= {"1", "2", "tie"}
    assert verdict["outcome"] == combine_orders(verdict["a_first"], verdict["b_first"])
    pairwise = json.loads((pair / "metrics.json").read_text())["pairwise"]
    assert (pairwise["n_compared"], pairwise["n_failed"]) == (1, 0)
    for criterion in CRITERIA:
        counts = pairwise[criterion]
        assert (counts["win"] + counts["tie"] + counts["lose"] == 1
                and counts[verdict["outcome"][criterion]] == 1)
    assert (pair / "pairwise.png").is_file()
    assert no_network == []


def test_cli_prints_the_run_folder_last(base_settings, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from app.cli import app

    monkeypatch.setenv("RAGQA_STORAGE_DIR", str(tmp_path / "storage"))
    monkeypatch.setenv("RAGQA_MODELS_DIR", str(base_settings.models_dir))
    result = CliRunner().invoke(app, ["eval", "references", "--gold", str(GOLD)])
    assert result.exit_code == 0, result.output
    folder = Path(result.output.strip().splitlines()[-1])
    assert folder.parent == tmp_path / "storage" / "reports" and (folder / "report.md").is_file()
    again = CliRunner().invoke(app, ["report", str(folder)])
    assert again.exit_code == 0 and again.output.strip().splitlines()[-1] == str(folder)
    # A second run under a fork's settings (--config), then both side by side (`ragqa report A B`).
    fork = tmp_path / "fork.toml"
    fork.write_text("[support]\nthreshold = 0.97\n", encoding="utf-8")
    strict = last_line(CliRunner().invoke(app, ["eval", "references", "--gold", str(GOLD),
                                                "--config", str(fork)]))
    a, b = (json.loads((run / "metrics.json").read_text()) for run in (folder, strict))
    assert (a["threshold"], b["threshold"]) == (base_settings.support.threshold, 0.97)
    assert b["coverage"] < a["coverage"]  # fewer sentences reach the stricter threshold
    both = last_line(CliRunner().invoke(app, ["report", str(folder), str(strict)]))
    assert both.parent == folder.parent and both not in (folder, strict)
    side = (both / "report.md").read_text()
    assert f"A: `{folder.name}`" in side and f"B: `{strict.name}`" in side and str(tmp_path) not in side
    for key in ("threshold", "precision", "coverage", "n_sentences"):
        assert f"| {key} | {fmt(a[key])} | {fmt(b[key])} | {fmt(b[key] - a[key])} |" in side, side
    diff = json.loads((both / "metrics.json").read_text())["diff"]
    assert diff["coverage"] == {"a": a["coverage"], "b": b["coverage"],
                                "delta": b["coverage"] - a["coverage"]}
    # Runs of different kinds share no metrics: refused in one line, and no compare folder is made.
    folders = set(folder.parent.iterdir())
    mixed = CliRunner().invoke(app, ["report", str(folder), str(both)])
    assert mixed.exit_code == 1 and "only runs of the same kind can be compared" in mixed.output, mixed.output
    assert len(mixed.output.strip().splitlines()) == 1 and set(folder.parent.iterdir()) == folders
    wrong = CliRunner().invoke(app, ["eval", "judge", "--a", str(folder)])
    assert wrong.exit_code == 1 and "either one answers run" in wrong.output
    empty = CliRunner().invoke(app, ["eval", "retrieval", "--qa", str(QA)])
    assert empty.exit_code == 1 and "no documents are indexed" in empty.output
    # --corpus stops when a file fails to ingest, naming it; the configured store is left alone.
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "notes.md").write_text("# Notes\n\nThe pump delivers 40 litres a minute.", encoding="utf-8")
    (corpus / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    stopped = CliRunner().invoke(app, ["eval", "retrieval", "--qa", str(QA), "--corpus", str(corpus),
                                       "--vary", "headers.enabled=true,false"])
    assert stopped.exit_code == 1 and "1 files of --corpus failed to ingest" in stopped.output, stopped.output
    assert "broken.pdf: corrupt or unreadable PDF" in stopped.output
    assert "no documents are indexed" in CliRunner().invoke(app, ["eval", "retrieval",
                                                                  "--qa", str(QA)]).output


def test_a_resume_with_other_options_is_refused(pipeline, monkeypatch, tmp_path):
    """`eval answers --resume RUN` appends to RUN, whose config.json names the options it was
    started with: another --qa or --no-rag is refused in one line and nothing appended (another
    --limit is allowed: answering more of the same file is what a resume is for)."""
    from conftest import cli
    from test_cli import one_line_error

    settings = fresh_settings(pipeline.settings, tmp_path / "storage")
    unanswerable = [line for line in QA.read_text().splitlines() if not json.loads(line)["answerable"]]
    qa, other = tmp_path / "qa.jsonl", tmp_path / "other.jsonl"
    qa.write_text(unanswerable[0] + "\n", encoding="utf-8")  # refused by retrieval: no generation
    other.write_text(QA.read_text(), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    first = run_answers(settings, Path("qa.jsonl"), pipeline=pipeline, progress=False)  # a relative path
    before = (first / "results.jsonl").read_text()
    for options, needle in (((str(other),), f"--qa {other} (started with {qa})"),
                            ((str(qa), "--no-rag"), "--no-rag on (started with off)")):
        one_line_error(cli(monkeypatch, settings, "eval", "answers", "--resume", str(first), "--qa",
                           *options), 1, f"--resume {first}: {needle}")
    assert (first / "results.jsonl").read_text() == before
    # The same options, the QA file named by its absolute path: resumed, nothing left to answer.
    resumed = cli(monkeypatch, settings, "eval", "answers", "--resume", str(first), "--qa", str(qa))
    assert last_line(resumed) == first and (first / "results.jsonl").read_text() == before


def typed_row(kind, answer, reference, answerable=True, answered=True, share=1.0, question="What fee?"):
    return {"id": f"{kind}-{len(answer)}", "type": kind, "question": question, "gold_answerable": answerable,
            "answered": answered, "answer": answer, "reference": reference,
            "reference_from": "answer" if reference else None, "supported_share": share,
            "timings_ms": {"total": 1000.0 * len(answer)}}


TYPED_ROWS = [
    typed_row("cell", "The fee is EUR 185 thousand [1].", "185"),
    typed_row("cell", "The fee is EUR 48 thousand [1].", "185"),  # backed by the matcher, and wrong
    typed_row("cell", "The fee is EUR 96 thousand.", "185", share=0.5),  # wrong, half backed
    typed_row("blank-cell", "The table gives no value for fee_eur_k of ENG-2024-027 [1].", None,
              answerable=False, question="What fee is recorded for ENG-2024-027?"),
    typed_row("blank-cell", "The fee of ENG-2024-027 is 96 [1].", None, answerable=False,  # a neighbour's
              question="What fee is recorded for ENG-2024-027?"),
    typed_row("false-premise", "The documents give the lowest utilisation, not the highest.", None,
              answerable=False, question="Why did Hamburg have the highest utilisation in Q3 2024?"),
    typed_row("unanswerable", "I cannot answer this from the documents.", None, answerable=False,
              answered=False, share=None),
]


def test_answer_metrics_per_question_type(base_settings, tmp_path):
    """Right and refused per `type`; a blank cell or a false premise answered "no value" / "not
    the ..." without a figure of its own counts as refused, one answered with a neighbour's value
    does not; supported_but_wrong counts only wrong answers every sentence of which is backed."""
    from evaluation.answers import refusal_metrics
    from evaluation.report import write_report
    from test_formats import errors

    metrics = refusal_metrics(TYPED_ROWS)
    assert (metrics["n_right"], metrics["supported_but_wrong"]) == (1, 1)
    assert metrics["refused_when_unanswerable"] == 0.75 and metrics["p95_total_ms"] == 59000.0
    by_type = metrics["by_type"]
    assert list(by_type) == ["blank-cell", "cell", "false-premise", "unanswerable"]
    cell, blank = by_type["cell"], by_type["blank-cell"]
    assert (cell["n_right"], cell["n_answerable"], cell["supported_but_wrong"]) == (1, 3, 1)
    assert (blank["n_refused"], blank["refused_when_unanswerable"]) == (1, 0.5)
    assert by_type["false-premise"]["n_refused"] == 1 and by_type["unanswerable"]["n_refused"] == 1
    assert not errors("answers_metrics.schema.json", {"answers": metrics})  # docs/FORMATS.md
    untyped = refusal_metrics([{k: v for k, v in r.items() if k != "type"} for r in TYPED_ROWS])
    assert "by_type" not in untyped and untyped["n_refused"] == 3

    run = Run.start(fresh_settings(base_settings, tmp_path), "answers", {"kind": "answers"})
    run.write_json("metrics.json", {"answers": metrics})
    report = write_report(run).read_text()
    assert "## By question type" in report and "| blank-cell | 2 | - | 1/2 | 0 |" in report
    assert "| cell | 3 | 1/3 | - | 1 |" in report and (run.path / "by_type.png").is_file()
