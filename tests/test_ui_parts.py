"""The UI's parts without a browser: documents listed and deleted, the evidence view (marked
words, the PDF page rendered with the chunk boxed), feedback kept and exported as QA items,
login hashes, report folders, the matcher re-run at another threshold."""

from __future__ import annotations

import json

import pytest
from conftest import BATTERY_Q, fresh_settings
from documents import crash_report_pdf

from app.auth import check_password, hash_password
from app.evidence import evidence, highlight
from app.feedback import FeedbackLog, export
from app.render import unescape
from evaluation.gold import load_qa
from ingestion.pipeline import indexed_documents, ingest, remove
from rag.retrieval import bm25_retriever
from rag.store import collection


def test_documents_are_listed_and_deleted_from_both_channels(base_settings, tmp_path):
    from llama_index.core.schema import QueryBundle

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nThe wind tunnel WT-7 is booked on Thursdays.", encoding="utf-8")
    (folder / "b.md").write_text(
        "# B\n\nThe crash sled CS-2 is serviced in May.\n\n## More\n\nIt has two rails.", encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path / "storage",
                              chunking={"chunk_size": 64, "chunk_overlap": 0})
    ingest([folder], settings, progress=False)
    listed = {d.doc: d for d in indexed_documents(settings)}
    assert set(listed) == {"a.md", "b.md"} and listed["b.md"].chunks == 2
    assert listed["a.md"].indexed.startswith("20")
    bm25 = bm25_retriever(settings)
    assert [n.node.metadata["doc"] for n in bm25.retrieve(QueryBundle("WT-7"))][:1] == ["a.md"]

    assert remove(["a.md", "nothing.md"], settings) == ["a.md"]
    assert [d.doc for d in indexed_documents(settings)] == ["b.md"]
    assert {m["doc"] for m in collection(settings).get()["metadatas"]} == {"b.md"}
    found = bm25_retriever(settings).retrieve(QueryBundle("WT-7 wind tunnel"))
    assert "a.md" not in {n.node.metadata["doc"] for n in found}
    assert (folder / "a.md").exists()  # a file indexed from elsewhere is not the UI's to delete
    # Ingesting the folder again brings it back: the docstore forgot it too.
    assert ingest([folder], settings, progress=False).indexed == 1


def test_a_deleted_upload_leaves_storage(base_settings, tmp_path):
    from app.documents import index_uploads

    settings = fresh_settings(base_settings, tmp_path / "storage")
    note = tmp_path / "note.md"
    note.write_text("# Note\n\nThe lab opens at eight.", encoding="utf-8")
    index_uploads(settings, [str(note)])
    assert (settings.storage_dir / "uploads" / "note.md").exists()
    remove(["note.md"], settings)
    assert not (settings.storage_dir / "uploads" / "note.md").exists() and indexed_documents(settings) == []


def test_uploads_of_the_wrong_type_or_size_are_not_copied(base_settings, tmp_path):
    from app.documents import index_uploads

    settings = fresh_settings(base_settings, tmp_path / "storage", ingest={"max_file_mb": 0.001})
    big, odd = tmp_path / "big.md", tmp_path / "tool.exe"
    big.write_text("# Big\n\n" + "word " * 400, encoding="utf-8")
    odd.write_bytes(b"MZ\x90")
    message = unescape(index_uploads(settings, [str(big), str(odd)]))  # the text a reader sees
    assert message.startswith("Nothing was indexed.")
    assert "**big.md**: the file is 0.0 MB, over the 0.001 MB limit" in message
    assert "**tool.exe**: unsupported file type '.exe' (supported: .csv, .docx," in message
    assert not any((settings.storage_dir / "uploads").iterdir())


def test_highlight_marks_shared_words_and_escapes_everything():
    shown = highlight("HIC15 was 412 <img src=x onerror=alert(1)> for the driver.",
                      "The driver reached a HIC15 of 412.")
    assert "<mark>HIC15</mark>" in shown and "<mark>412</mark>" in shown and "<mark>driver</mark>" in shown
    assert "<mark>the</mark>" not in shown and "<img" not in shown and "&lt;img" in shown


def test_evidence_shows_the_cited_pdf_page_with_the_chunk_boxed(base_settings, tmp_path):
    settings = fresh_settings(base_settings, tmp_path / "storage")
    pdf = crash_report_pdf(tmp_path / "handbook.pdf")
    ingest([pdf], settings, progress=False)
    text = next(t for t in collection(settings).get()["documents"] if "Curtain airbags" in t)
    source = {"ref": 1, "doc": "handbook.pdf", "page": 1, "page_end": 3, "slide": None,
              "section": "2.1 Side airbags", "text": text, "score": 0.9}  # the whole handbook is one chunk
    view = evidence(settings, source, "Curtain airbags protect the head in a side impact.")
    assert "handbook.pdf, pp. 1-3" in view.html and "<mark>Curtain</mark>" in view.html
    # The page of the backing sentence.
    assert view.page == 3 and view.image is not None and view.image.width > 500
    assert _pixels(view.image, ORANGE) > 100, "no box around the backing sentence"
    assert _pixels(view.image, GREY) > 100, "no box around the chunk's other lines"
    belts = evidence(settings, source, "Load limiters cap the belt force at about 4 kN.")
    assert belts.page == 2 and _pixels(belts.image, ORANGE) > 100
    # A segment sharing no word with the chunk (another language): the first page, nothing in orange.
    korean = evidence(settings, source, "커튼 에어백은 머리를 보호합니다.")
    assert korean.page == 1 and _pixels(korean.image, ORANGE) == 0
    # A document id that is not indexed shows the text alone: files come only from the registry.
    assert evidence(settings, source | {"doc": "../../etc/passwd"}, "x").image is None


ORANGE, GREY = (220, 120, 0), (150, 150, 150)


def _pixels(image, colour) -> int:
    return sum(1 for pixel in image.getdata() if pixel == colour)


def test_feedback_is_kept_and_exported_as_qa_items(base_settings, tmp_path, pipeline):
    settings = fresh_settings(base_settings, tmp_path / "storage")
    log = FeedbackLog.of(settings)
    good = pipeline.answer(BATTERY_Q).to_dict()
    refused = pipeline.answer("Who won the 1998 football world cup?").to_dict()
    assert good["answerable"] and not refused["answerable"]
    log.add(good, "down", "first impression", settings)
    log.add(good, "up", "right cell, right cite", settings, user="alice")  # the last rating counts
    log.add(refused, "up", "", settings)
    assert len(log.records()) == 3 and log.records()[1]["config"]["support"]["threshold"] == 0.5

    out = tmp_path / "rated.jsonl"
    assert export(log, out) == 2
    items = {item["question"]: item for item in load_qa(out)}
    rated = items[BATTERY_Q]
    assert rated["answer"] == good["answer"] and rated["answerable"] is True
    cited = {r["chunk_id"] for s in good["segments"] if s["supported"] for r in s["references"]}
    assert {e["chunk_id"] for e in rated["evidence"]} == cited
    assert all(e["doc"] == "battery.md" for e in rated["evidence"])
    assert rated["feedback"]["comment"] == "right cell, right cite"
    assert items[refused["question"]]["answerable"] is False
    assert export(log, out, "down") == 0


def test_passwords_are_checked_against_their_hashes():
    users = {"alice": hash_password("correct horse", iterations=1000)}
    assert check_password(users, "alice", "correct horse")
    assert not check_password(users, "alice", "wrong") and not check_password(users, "bob", "correct horse")
    assert not check_password({"alice": "plain-text"}, "alice", "plain-text")


def test_login_entries_must_be_user_and_hash(base_settings, tmp_path):
    settings = fresh_settings(base_settings, tmp_path / "storage", ui={"users": ["alice"]})
    with pytest.raises(ValueError, match="USER:HASH"):
        settings.ui.user_hashes()


def test_report_folders_are_listed_and_only_they_are_read(base_settings, tmp_path):
    from app.reports import run_folders, show_run

    settings = fresh_settings(base_settings, tmp_path / "storage")
    run = settings.reports_dir / "20261130-120000-answers"
    run.mkdir(parents=True)
    (run / "report.md").write_text("# Answers\n\nright 0.8\n\n![plot.png](plot.png)\n", encoding="utf-8")
    from PIL import Image

    Image.new("RGB", (40, 30), "white").save(run / "plot.png")
    (settings.reports_dir / "notes").mkdir()  # no report.md: not a run
    assert run_folders(settings) == ["20261130-120000-answers"]
    text, plots = show_run(settings, "20261130-120000-answers")
    assert text.startswith("# Answers") and "![" not in text
    assert [(im.size, name) for im, name in plots] == [((40, 30), "plot.png")]
    assert show_run(settings, "../../..")[1] == [] and "No run named" in show_run(settings, "../../..")[0]


def test_a_new_threshold_rechecks_the_same_answer_without_the_model(pipeline, monkeypatch):
    from rag.answer import Answer

    answer = pipeline.answer(BATTERY_Q)
    assert answer.answerable and any(s.supported for s in answer.segments)
    monkeypatch.setattr(type(pipeline.llm), "stream_complete",
                        lambda *a, **k: pytest.fail("the model ran again"))
    strict = pipeline.rematch(answer, 0.999)
    assert not strict.answerable and strict.refused_by == "references"
    assert not any(s.supported for s in strict.segments) and strict.sources == answer.sources
    again = pipeline.rematch(Answer.from_dict(json.loads(json.dumps(strict.to_dict()))), 0.5)
    assert again.answerable
    assert [s.supported for s in again.segments] == [s.supported for s in answer.segments]


def test_chunks_kept_can_be_set_per_question(pipeline):
    one = pipeline.answer(BATTERY_Q, keep_k=1)
    assert len(one.sources) == 1 and one.sources[0].doc == "battery.md" and one.answerable
    assert pipeline.reranker.top_n == pipeline.settings.retrieval.keep_k  # the shared stage is untouched


def test_a_line_is_boxed_once_whatever_its_letters_and_fonts(tmp_path):
    """Boxes of single characters were cut where a descender (dumm|y) or a hyphen (ES|-2re)
    sits lower or higher than its neighbours, and where a word is set in bold: each line of
    the backing sentence gets one box."""
    from fpdf import FPDF

    from app.evidence import page_image

    sentence = ("The driver dummy reached a HIC15 of 412 in the ES-2re side impact test, which was run twice "
                "at the proving ground near the old hangar by the test team.")
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    bold = sentence.index("412")
    pdf.write(6, sentence[:bold])
    pdf.set_font("Helvetica", "B", 11)
    pdf.write(6, "412")
    pdf.set_font("Helvetica", size=11)
    pdf.write(6, sentence[bold + 3:])
    pdf.output(str(tmp_path / "test.pdf"))
    image, page = page_image(tmp_path / "test.pdf", range(1, 2), sentence, sentence)
    assert page == 1
    # A row through one box meets its two sides; through boxes cut in pieces, more of them.
    runs = [_runs([image.getpixel((x, y)) == ORANGE for x in range(image.width)])
            for y in range(image.height)]
    boxed = [y for y, count in enumerate(runs) if count]
    assert boxed, "the backing sentence is not boxed"
    assert max(runs) == 2, f"a row crosses {max(runs)} box sides"
    assert len(_spans(boxed)) == 2  # two lines of text, two boxes


def _runs(flags: list[bool]) -> int:
    return sum(1 for i, flag in enumerate(flags) if flag and (i == 0 or not flags[i - 1]))


def _spans(rows: list[int]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for row in rows:
        if spans and row == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], row)
        else:
            spans.append((row, row))
    return spans


def test_reports_compare_runs_of_one_kind_once_and_show_no_server_paths(indexed):
    """A retrieval run beside a references run was an empty table; every selection wrote a new
    compare folder; the report showed the runs' absolute paths on the server."""
    import os

    from conftest import FIXTURES

    from app.reports import compare, run_folders
    from evaluation.runner import run_references, run_retrieval

    settings = fresh_settings(indexed, indexed.storage_dir)
    first, second = (
        run_retrieval(settings, FIXTURES / "qa.jsonl", name=f"retrieval-{n}", progress=False).name
        for n in ("a", "b"))
    references = run_references(settings, FIXTURES / "references_gold.jsonl", progress=False).name
    before = set(run_folders(settings))

    text, plots = compare(settings, first, references)
    assert text.startswith("Cannot compare:") and "\n" not in text and plots == []
    assert "a retrieval run" in text and "a references run" in text and "only runs of the same kind" in text
    assert set(run_folders(settings)) == before  # nothing written

    text, _ = compare(settings, first, second)
    assert "| metric | A | B | B - A |" in text and "rerank.map@5" in text
    assert str(settings.storage_dir) not in text and f"A: `{first}`" in text and f"B: `{second}`" in text
    written = set(run_folders(settings)) - before
    assert len(written) == 1 and compare(settings, first, second)[0] == text
    assert set(run_folders(settings)) - before == written  # shown again, not written again
    # A run whose metrics changed since (graded, resumed) is compared again.
    metrics = settings.reports_dir / second / "metrics.json"
    later = metrics.stat().st_mtime + 5
    os.utime(metrics, (later, later))
    compare(settings, first, second)
    assert len(set(run_folders(settings)) - before) == 2
