"""The command line as a new user meets it: bad questions, filters and files get one line that
says what is wrong (no traceback), before any model is loaded where that is possible."""

from __future__ import annotations

import json

import pytest
from conftest import BATTERY_Q, cli, cli_input, fresh_settings
from typer.testing import CliRunner

from app.cli import app


def one_line_error(result, code: int, *needles: str) -> str:
    assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    for needle in needles:
        assert needle in lines[0]
    return lines[0]


def test_empty_question_is_rejected_at_once(indexed, monkeypatch):
    import rag.pipeline

    def no_pipeline(*args, **kwargs):
        raise AssertionError("the models were loaded for an empty question")

    monkeypatch.setattr(rag.pipeline.RagPipeline, "__init__", no_pipeline)
    for question in ("", "   \n"):
        one_line_error(cli(monkeypatch, indexed, "ask", question), 2, "the question is empty")


def test_too_long_question_is_refused_and_context_shrinks_to_fit(indexed, pipeline, monkeypatch):
    question = "측면 충돌 시험에서 B필러는 얼마나 침입했나요? " * 200  # about 5,000 characters
    one_line_error(cli(monkeypatch, indexed, "ask", question), 2, "the question is too long", "llm.n_ctx")
    # A question that fits but leaves less room than the evidence budget: the context shrinks to fit.
    from llama_index.core.schema import QueryBundle

    cfg = pipeline.settings.llm
    limit = cfg.n_ctx - cfg.max_new_tokens - 16
    top = pipeline.retriever.retrieve(QueryBundle(BATTERY_Q))
    long_question = "Battery pack, " * 600 + BATTERY_Q
    for step, room in ((20, 200), (1, 60)):
        while pipeline.count_tokens(pipeline._prompt(long_question, "")) < limit - room:
            long_question = "Battery pack nail penetration test, " * step + long_question
    budget = pipeline._budget(long_question)
    assert 0 < budget < pipeline.settings.context.budget(cfg.backend)
    context, shown = pipeline.context.build(long_question, top, budget)
    assert shown and pipeline.count_tokens(pipeline._prompt(long_question, context)) <= limit


def test_filters_that_match_nothing_say_so(indexed, monkeypatch, tmp_path):
    from ingestion.pipeline import ingest

    # An id with a folder in it: the user types only the file name.
    nested = fresh_settings(indexed, tmp_path / "storage")
    (tmp_path / "docs" / "reports").mkdir(parents=True)
    (tmp_path / "docs" / "reports" / "battery.md").write_text("# Battery\n\nThe Orion pack reached 61 C.", encoding="utf-8")
    ingest([tmp_path / "docs"], nested, progress=False)
    line = one_line_error(cli(monkeypatch, nested, "ask", BATTERY_Q, "--doc", "battery.md"), 2)
    assert "no indexed document has the id 'battery.md'" in line and "did you mean 'reports/battery.md'" in line
    line = one_line_error(cli(monkeypatch, indexed, "ask", BATTERY_Q, "--where", "Regio=Europe"), 2)
    assert "no document has a header field 'Regio'" in line
    line = one_line_error(cli(monkeypatch, indexed, "ask", BATTERY_Q, "--where", "Title=Atlantis"), 2)
    assert "no indexed document has Title=Atlantis" in line and "its values:" in line


@pytest.mark.parametrize(
    ("content", "needle"),
    [("", "no questions in the file"), ('["q1", "What?"]\n', ":1: a question must be a JSON object, not a list"),
     ('{"id": "q1", "question": "A?"}\n{"id": "q2"}\n', ":2: the question has no question")],
)
def test_bad_qa_files_name_file_and_line(indexed, monkeypatch, tmp_path, content, needle):
    qa = tmp_path / "qa.jsonl"
    qa.write_text(content, encoding="utf-8")
    one_line_error(cli(monkeypatch, indexed, "eval", "retrieval", "--qa", str(qa)), 1, str(qa), needle)


def test_report_on_a_folder_that_is_not_a_run(indexed, monkeypatch, tmp_path):
    one_line_error(cli(monkeypatch, indexed, "report", str(tmp_path)), 1, "is not a run folder")
    one_line_error(cli(monkeypatch, indexed, "report", str(tmp_path), str(tmp_path)), 1, "is not a run folder")


def test_missing_models_are_found_and_named(base_settings, monkeypatch, tmp_path):
    import shutil

    empty = fresh_settings(base_settings, tmp_path / "storage")
    empty.models_dir = tmp_path / "no-models"
    doc = tmp_path / "a.md"
    doc.write_text("# A\n\nAlpha.", encoding="utf-8")
    one_line_error(cli(monkeypatch, empty, "ingest", str(doc)), 1, "not found", "run `ragqa models` first")

    # A prepared model folder that lost a file is prepared again, not reported as fine.
    models = tmp_path / "models"
    shutil.copytree(base_settings.embedding_path, models / base_settings.embedding_path.name)
    for stamp in base_settings.models_dir.glob("*.stamp.json"):
        shutil.copy(stamp, models / stamp.name)
    (models / base_settings.gguf_path.name).symlink_to(base_settings.gguf_path)
    copy = fresh_settings(base_settings, tmp_path / "storage")
    copy.models_dir = models
    from rag.prepare import _stamp_ok, prepare_models

    stamp = json.loads((models / f"{base_settings.embedding_path.name}.stamp.json").read_text())
    expected = {k: v for k, v in stamp.items() if k != "files"}
    assert _stamp_ok(models / base_settings.embedding_path.name, expected)
    (models / base_settings.embedding_path.name / "model.safetensors").unlink()
    assert not _stamp_ok(models / base_settings.embedding_path.name, expected)
    prepare_models(copy)
    assert (models / base_settings.embedding_path.name / "model.safetensors").is_file()


def test_config_errors_are_one_line(monkeypatch, tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text("[chunking]\nchunk_size = 100\nchunk_overlap = 200\n")
    result = CliRunner().invoke(app, ["ask", "Anything?", "--config", str(config)])
    one_line_error(result, 2, "bad.toml", "chunk_overlap (200) must be smaller than chunk_size (100)")


def test_chat_rewrites_a_follow_up_from_the_earlier_turn(sample_indexed, monkeypatch):
    """`ragqa chat`: "And the passenger dummy?" names no test; rewritten with the first turn it
    does, and that question finds the test's deck first among the sample corpus's six tests."""
    from llama_index.core.schema import QueryBundle

    from rag.pipeline import RagPipeline

    turns = "What HIC15 did the driver dummy reach in FT-2024-07?\nAnd the passenger dummy?\n\n"
    result = cli_input(monkeypatch, sample_indexed, turns, "chat")
    assert result.exit_code == 0, result.output
    assert result.output.count("(understood as: ") == 1, result.output  # the first turn stands alone
    rewritten = result.output.split("(understood as: ", 1)[1].split(")\n", 1)[0]
    assert "FT-2024-07" in rewritten and "passenger" in rewritten.lower(), result.output
    pipeline = RagPipeline(sample_indexed)
    query = QueryBundle(rewritten)
    top = pipeline.reranker.postprocess_nodes(pipeline.current_retriever().retrieve(query), query_bundle=query)
    assert top[0].node.metadata["doc"] == "FT-2024-07.pptx"
    assert pipeline.rewriter.standalone(rewritten, []) == rewritten  # no history: no rewriting


def test_documents_are_listed_and_removed(base_settings, monkeypatch, tmp_path):
    from conftest import FIXTURES

    settings = fresh_settings(base_settings, tmp_path / "storage")
    assert cli(monkeypatch, settings, "ingest", str(FIXTURES / "battery.md"), str(FIXTURES / "cafeteria.md")).exit_code == 0
    listed = cli(monkeypatch, settings, "documents").output.splitlines()
    assert [line.split("\t")[0] for line in listed] == ["battery.md", "cafeteria.md"]
    assert listed[0].split("\t")[3] == str(FIXTURES / "battery.md")
    removed = cli(monkeypatch, settings, "remove", "battery.md", "nothing.md")
    assert removed.exit_code == 1 and "removed battery.md" in removed.output
    assert "error: not indexed: nothing.md" in removed.output
    assert [line.split("\t")[0] for line in cli(monkeypatch, settings, "documents").output.splitlines()] == ["cafeteria.md"]
