"""`ragqa init`: the survey proposes header fields, a PDF strategy and a chunk size from two kinds
of document sets, and the fork it writes loads, ingests with those fields, and evaluates."""

from __future__ import annotations

import json

import pytest
from documents import KOREAN, write_pdf

from ingestion.survey import survey
from rag.settings import load_settings
from rag.store import collection

def ragqa(monkeypatch, models_dir, *args: str):
    """`ragqa ARGS` with the prepared models and no storage override: a fork keeps its own."""
    from typer.testing import CliRunner

    from app.cli import app

    monkeypatch.delenv("RAGQA_STORAGE_DIR", raising=False)
    monkeypatch.setenv("RAGQA_MODELS_DIR", str(models_dir))
    return CliRunner().invoke(app, list(args))


REPORTS = [("SI-2025-01", "Europe", "Mina Park"), ("SI-2025-02", "Korea", "Jonas Weber"),
           ("FT-2025-03", "Europe", "Aiko Tanaka")]


def report_decks(folder):
    """Test-report decks named by their test code, with `Key: value` lines on the title slide,
    and Markdown notes whose front matter carries an owner."""
    from pptx import Presentation

    folder.mkdir(parents=True)
    for code, region, owner in REPORTS:
        deck = Presentation()
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Side impact test {code}"
        slide.placeholders[1].text = f"Test Name: {code}\nRegion: {region}\nOwner: {owner}"
        body = deck.slides.add_slide(deck.slide_layouts[1])
        body.shapes.title.text = "Results"
        body.placeholders[1].text = (
            f"The B-pillar intrusion in {code} was {100 + len(owner)} mm, against a limit of 150 mm. "
            f"The door opened normally after the impact and the fuel system did not leak. "
            f"The dummy's rib deflection was {20 + len(region)} mm.")
        deck.save(folder / f"{code} report.pptx")
    for name, owner in (("barrier", "Luis Ortega"), ("dummies", "Mina Park")):
        (folder / f"{name}.md").write_text(
            f"---\ntitle: Notes on the {name}\nowner: {owner}\n---\n# {name.title()}\n\n"
            f"The {name} were checked before every test in 2025.\n", encoding="utf-8")
    return folder


def manuals(folder):
    """Korean notes and English PDFs without an outline, one of them corrupt, and a stray file
    of an unsupported type."""
    folder.mkdir(parents=True)
    for i in range(3):
        (folder / f"notes-{i}.txt").write_text(KOREAN + f"\n\n시험 {i}번의 결과는 보고서에 있다.",
                                               encoding="utf-8")
    for i in range(2):
        write_pdf(folder / f"manual-{i}.pdf", [[(11, f"Manual {i}: the rig is cleaned every week.")],
                                               [(11, "Calibration follows the cleaning.")]])
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    (folder / "setup.exe").write_bytes(b"MZ")
    return folder


def test_survey_of_test_reports_proposes_their_fields(tmp_path):
    found = survey([report_decks(tmp_path / "docs")])
    assert found.header_fields[0] == "Title"
    assert {"Test Name", "Region", "owner"} <= set(found.header_fields)
    # The code in the file names is the first slide's "Test Name": one field, named after it.
    assert found.filename_pattern == r"(?P<Test_Name>[A-Z]{2}\-\d{4}\-\d{2})"
    sources = {(f.name, f.source) for f in found.fields}
    assert {("owner", "metadata"), ("owner", "first page"), ("Test Name", "file name")} <= sources
    assert found.pdf_strategy == "anchored" and "no PDF" in found.pdf_reason


def test_survey_of_manuals_proposes_text_pdfs_and_smaller_korean_chunks(tmp_path):
    from app.init_cli import _tokens_per_char

    from rag.settings import load_settings as load

    tokens = _tokens_per_char(load().embedding_path)
    found = survey([manuals(tmp_path / "docs")], tokens_per_char=tokens)
    assert found.pdf_strategy == "text" and "no outline" in found.pdf_reason
    assert set(found.failed) == {"broken.pdf"} and "corrupt" in found.failed["broken.pdf"]
    assert found.unsupported == ["setup.exe"]
    assert found.hangul_files == 3
    assert 300 <= found.chunk_size < 900, found.chunk_reason  # Korean packs more tokens per character
    assert found.header_fields == ["Title"]  # nothing common to propose
    english = survey([tmp_path / "docs" / "manual-0.pdf"], tokens_per_char=tokens)
    assert english.chunk_size == 900


def test_init_writes_a_fork_that_ingests_with_the_proposed_fields(base_settings, monkeypatch, tmp_path):
    docs = report_decks(tmp_path / "docs")
    fork = tmp_path / "fork"
    shared = tmp_path / "shared-models"  # the prepared models every fork points at
    shared.mkdir()
    for model in (base_settings.gguf_path, base_settings.embedding_path, base_settings.embedding_onnx_path):
        (shared / model.name).symlink_to(model)
    result = ragqa(monkeypatch, shared, "init", str(fork), "--docs", str(docs))
    assert result.exit_code == 0, result.output
    assert "field 'Test Name' from the file name in 3 file(s)" in result.output
    settings = load_settings(fork / "ragqa.toml")
    assert settings.storage_dir == fork / "storage" and settings.models_dir == shared
    assert (settings.answer.prompt_file == fork / "prompts" / "answer.txt"
            and settings.answer.prompt_file.is_file())
    assert (fork / "qa").is_dir()

    assert ragqa(monkeypatch, shared, "ingest", "--config", str(fork / "ragqa.toml"),
                 str(docs)).exit_code == 0
    metadata = {m["doc"]: m for m in collection(settings).get(include=["metadatas"])["metadatas"]}
    deck = metadata["SI-2025-02 report.pptx"]
    assert (deck["Test Name"], deck["Region"], deck["owner"]) == ("SI-2025-02", "Korea", "Jonas Weber")
    assert (metadata["barrier.md"]["owner"] == "Luis Ortega"
            and metadata["barrier.md"]["Title"] == "Notes on the barrier")

    # The ranker the fork trains is its own (README: storage/models), not written among the shared models.
    assert ragqa(monkeypatch, shared, "qa", "mine", "--config", str(fork / "ragqa.toml")).exit_code == 0
    trained = ragqa(monkeypatch, shared, "train", "reranker", "--config", str(fork / "ragqa.toml"),
                    "--qa", str(fork / "storage" / "qa" / "mined.jsonl"))
    assert trained.exit_code == 0, trained.output
    assert trained.stdout.strip().splitlines()[-1] == str(fork / "storage" / "models" / "ranker.json")
    assert (fork / "storage" / "models" / "ranker.json").is_file() and not (shared / "ranker.json").exists()

    # A second init keeps the fork: refused without --force, and --force keeps edited prompts.
    (fork / "prompts" / "answer.txt").write_text("edited {context} {question} {refusal} {language}",
                                                 encoding="utf-8")
    again = ragqa(monkeypatch, shared, "init", str(fork), "--docs", str(docs))
    assert again.exit_code == 1 and "--force" in again.output
    forced = ragqa(monkeypatch, shared, "init", str(fork), "--docs", str(docs), "--force")
    assert forced.exit_code == 0 and (fork / "prompts" / "answer.txt").read_text().startswith("edited")


def test_init_refuses_a_folder_without_documents(base_settings, monkeypatch, tmp_path):
    (tmp_path / "empty").mkdir()
    result = ragqa(monkeypatch, base_settings.models_dir, "init", str(tmp_path / "fork"),
                   "--docs", str(tmp_path / "empty"))
    assert result.exit_code == 1 and "no supported document" in result.output
    assert not (tmp_path / "fork" / "ragqa.toml").exists()


@pytest.mark.slow
def test_init_evaluate_ingests_generates_and_prints_a_baseline(base_settings, monkeypatch, tmp_path):
    docs = report_decks(tmp_path / "docs")
    fork = tmp_path / "fork"
    result = ragqa(monkeypatch, base_settings.models_dir, "init", str(fork), "--docs", str(docs),
                   "--evaluate", "--questions", "1", "--answers", "1")
    assert result.exit_code == 0, result.output
    settings = load_settings(fork / "ragqa.toml")
    stored = set(collection(settings).get()["ids"])
    generated = [json.loads(line) for line in (fork / "qa" / "generated.jsonl").read_text().splitlines()]
    assert generated and all(item["evidence"][0]["chunk_id"] in stored for item in generated)
    runs = {r.name.split("-baseline-")[1]: r for r in (fork / "storage" / "reports").glob("*-baseline-*")}
    assert set(runs) == {"retrieval", "answers"}
    metrics = json.loads((runs["retrieval"] / "metrics.json").read_text())
    assert metrics["n_questions"] == len(generated) and "rerank" in metrics["stages"]
    assert "rerank " in result.output and str(runs["answers"]) in result.output
    answers = json.loads((runs["answers"] / "metrics.json").read_text())["answers"]
    assert answers["n_questions"] == 1
