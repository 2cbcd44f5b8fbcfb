"""The formats of docs/FORMATS.md hold: every QA and gold file the repo ships, and what the
real pipeline, the evaluators and the UI's feedback write, validate against docs/schemas/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import BATTERY_Q, FIXTURES, UNRELATED_Q, cli, fresh_settings
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from rag.settings import REPO_ROOT

SCHEMAS = REPO_ROOT / "docs" / "schemas"
_LOADED = {p.name: json.loads(p.read_text(encoding="utf-8")) for p in SCHEMAS.glob("*.schema.json")}
_REGISTRY = Registry().with_resources((name, Resource.from_contents(schema))
                                      for name, schema in _LOADED.items())


def errors(schema: str, value) -> list[str]:
    validator = Draft202012Validator(_LOADED[schema], registry=_REGISTRY)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(value)]


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_schemas_are_valid_json_schema():
    assert set(_LOADED) >= {"answer.schema.json", "qa_item.schema.json", "reference_gold_item.schema.json",
                            "feedback_record.schema.json", "run_config.schema.json",
                            "retrieval_metrics.schema.json", "references_metrics.schema.json",
                            "answers_metrics.schema.json"}
    for schema in _LOADED.values():
        Draft202012Validator.check_schema(schema)


QA_FILES = [FIXTURES / "qa.jsonl", REPO_ROOT / "data/sample/qa.jsonl", REPO_ROOT / "data/dev/qa.jsonl",
            REPO_ROOT / "data/sample/followups.jsonl", REPO_ROOT / "data/sample/generated_qa.jsonl",
            *sorted((REPO_ROOT / "benchmarks/data").glob("*qa*.jsonl")),
            *sorted((REPO_ROOT / "benchmarks/data").glob("crosslang_*.jsonl"))]
GOLD_FILES = [FIXTURES / "references_gold.jsonl", REPO_ROOT / "data/sample/reference_gold.jsonl",
              REPO_ROOT / "data/sample/reference_gold_generated.jsonl"]


@pytest.mark.parametrize("path", QA_FILES, ids=lambda p: p.name)
def test_shipped_qa_files_follow_the_format(path):
    items = lines(path)
    assert items and not [(item.get("id"), e) for item in items for e in errors("qa_item.schema.json", item)]


@pytest.mark.parametrize("path", GOLD_FILES, ids=lambda p: p.name)
def test_shipped_reference_gold_follows_the_format(path):
    items = lines(path)
    assert items and not [(item["id"], e) for item in items
                          for e in errors("reference_gold_item.schema.json", item)]
    for item in items:  # what a schema cannot say: gold indices point into chunks, one list per sentence
        assert len(item["gold"]) == len(item["answer_sentences"]), item["id"]
        assert all(0 <= i < len(item["chunks"]) for support in item["gold"] for i in support), item["id"]


def test_the_schemas_reject_what_breaks_the_format():
    assert errors("qa_item.schema.json", {"id": "q1"})  # no question
    # evidence of nothing
    assert errors("qa_item.schema.json", {"id": "q1", "question": "?", "evidence": [{"page": 3}]})
    assert errors("answer.schema.json", {"question": "q", "answer": "a", "answerable": True})
    assert errors("reference_gold_item.schema.json", {"id": "r", "answer_sentences": ["s"],
                                                      "chunks": [{"text": "t"}], "gold": [["0"]]})


def test_answers_and_feedback_follow_the_format(pipeline, base_settings, tmp_path, monkeypatch):
    """The formats, then FORKING step 9's export rules through `ragqa feedback export`."""
    from app.feedback import FeedbackLog, export

    answered, refused = pipeline.answer(BATTERY_Q).to_dict(), pipeline.answer(UNRELATED_Q).to_dict()
    assert answered["answerable"] and not refused["answerable"]
    for answer in (answered, refused):
        assert not errors("answer.schema.json", answer)
    settings = fresh_settings(base_settings, tmp_path / "storage")
    log = FeedbackLog.of(settings)
    log.add(answered, "up", "ok", pipeline.settings)
    log.add(refused, "down", "it is in the cafeteria notes")
    assert not [e for record in log.records() for e in errors("feedback_record.schema.json", record)]
    export(log, tmp_path / "rated.jsonl")
    assert not [e for item in lines(tmp_path / "rated.jsonl") for e in errors("qa_item.schema.json", item)]

    def exported(rating: str) -> list[dict]:
        out = tmp_path / f"{rating}.jsonl"
        result = cli(monkeypatch, settings, "feedback", "export", str(out), "--rating", rating)
        assert result.exit_code == 0 and f"written to {out}" in result.stdout, result.output
        return lines(out)

    [gold] = exported("up")  # rated up: a gold item, its supported references as evidence
    cited = {r["chunk_id"] for s in answered["segments"] if s["supported"] for r in s["references"]}
    assert gold["answer"] == answered["answer"] and {e["chunk_id"] for e in gold["evidence"]} == cited
    [open_item] = exported("down")  # rated down: no gold; the rejected answer and the comment kept
    assert open_item["answerable"] and open_item["answer"] is None and open_item["evidence"] == []
    assert open_item["feedback"] == open_item["feedback"] | {"answer_given": refused["answer"],
                                                             "comment": "it is in the cafeteria notes"}
    log.add(answered, "down", "the figure is wrong after all")  # the last rating counts
    assert exported("up") == [] and len(exported("down")) == 2


def test_run_folders_follow_the_format(indexed, tmp_path):
    from evaluation.runner import run_references, run_retrieval

    settings = fresh_settings(indexed, indexed.storage_dir)
    retrieval = run_retrieval(settings, FIXTURES / "qa.jsonl", progress=False)
    references = run_references(settings, FIXTURES / "references_gold.jsonl", progress=False)
    for run, kind in ((retrieval, "retrieval"), (references, "references")):
        config = json.loads((run / "config.json").read_text(encoding="utf-8"))
        assert config["kind"] == kind and not errors("run_config.schema.json", config)
        assert (run / "report.md").is_file() and (run / "results.jsonl").is_file()
        assert not errors(f"{kind}_metrics.schema.json",
                          json.loads((run / "metrics.json").read_text(encoding="utf-8")))
