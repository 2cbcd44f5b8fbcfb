"""Conversion of every format with locations, chunking rules, headers, incremental indexing and
bad input, on small real documents written by tests/documents.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import fresh_settings
from documents import (KOREAN, all_formats, audit_scores_pdf, crash_report_pdf, long_csv, results_table_pdf,
                       write_pdf)
from llama_index.core.schema import MetadataMode
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from ingestion.chunking import BlockChunker, LocatedDocument, split_table
from ingestion.convert import convert
from ingestion.document import DocumentLoadError
from ingestion.pipeline import ingest
from rag.facts import facts_of
from rag.settings import IngestSettings
from rag.store import Store, collection

CFG = IngestSettings()


@pytest.fixture(scope="module")
def documents(tmp_path_factory):
    return all_formats(tmp_path_factory.mktemp("formats"))


def chunks_of(settings, doc):
    got = collection(settings).get(where={"doc": doc}, include=["metadatas", "documents"])
    nodes = [metadata_dict_to_node(m, text=d) for m, d in zip(got["metadatas"], got["documents"])]
    return sorted(nodes, key=lambda n: int(n.node_id.rsplit("-", 1)[1]))


def test_pdf_pages_and_outline_sections(documents):
    blocks = convert(documents["pdf"], "handbook.pdf", CFG).blocks
    located = {b.text[:20]: (b.page, b.section) for b in blocks}
    assert located["Seat belts with pret"] == (2, ("Restraint systems",))
    assert located["Curtain airbags prot"] == (3, ("Airbags",))
    assert [b.text for b in blocks if b.kind == "heading"] == ["## Restraint systems", "## Airbags"]


def test_pdf_strategies(documents):
    text = convert(documents["pdf"], "h.pdf", IngestSettings(pdf_strategy="text"))
    assert {b.page for b in text.blocks} == {1, 2, 3} and not any(b.section for b in text.blocks)
    markdown = convert(documents["pdf"], "h.pdf", IngestSettings(pdf_strategy="markdown"))
    assert all(b.page is None for b in markdown.blocks) and any(b.section for b in markdown.blocks)
    layout = convert(documents["pdf"], "h.pdf", IngestSettings(pdf_strategy="layout"))
    assert all(b.page for b in layout.blocks) and not any(b.kind == "heading" for b in layout.blocks)


def test_pdf_table_without_grid_lines_is_a_table_of_cells(tmp_path):
    pdf = convert(results_table_pdf(tmp_path / "sled.pdf"), "sled.pdf", CFG)
    kinds = [(b.kind, b.text.split()[0]) for b in pdf.blocks]
    assert kinds == [("text", "Sled"), ("table", "|"), ("text", "Each")]  # the paragraphs stay text
    table = pdf.blocks[1]
    assert table.page == 1 and table.text.splitlines()[0] == "| Test | Dummy | HIC15 | Chest (mm) |"
    assert "| SL-02 | Hybrid III 50th percentile | 468 | 36 |" in table.text  # the wrapped cell joined
    node = chunker()([LocatedDocument.from_converted(pdf)])[0]
    cells = {(f.row, f.column): f for f in facts_of(node)}
    assert cells["SL-02", "HIC15"].number == 468 and cells["SL-02", "HIC15"].page == 1
    assert cells["SL-03", "HIC15"].blank and cells["SL-03", "Chest (mm)"].value == "29"
    layout = convert(tmp_path / "sled.pdf", "sled.pdf", IngestSettings(pdf_strategy="layout"))
    assert not any(b.kind == "table" for b in layout.blocks)  # the plain strategy reads lines


def test_pdf_table_whose_header_and_cells_run_over_lines(tmp_path):
    """Lines of one row set closer than two rows are (a two-line header around one-line ones, a
    date wrapped under its row) are that row's cells, not rows of their own."""
    pdf = convert(audit_scores_pdf(tmp_path / "audit.pdf"), "audit.pdf", CFG)
    (table,) = [b for b in pdf.blocks if b.kind == "table"]
    header = "| Site | Audit date | Allergen management | Pest control | Overall |"
    assert table.text.splitlines()[0] == header
    assert "| CAM | 20 Aug 2024 | 88 | 90 | 80.8 |" in table.text
    node = chunker()([LocatedDocument.from_converted(pdf)])[0]
    cells = {(f.row, f.column): f for f in facts_of(node)}
    assert cells["OXF", "Allergen management"].number == 94 and cells["BTH", "Pest control"].blank


def test_pdf_prose_in_two_columns_is_no_table(tmp_path):
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    left = "Seat belts with pretensioners remove slack within ten milliseconds of a crash pulse " * 3
    right = "Curtain airbags protect the head in a side impact and in a rollover of the car " * 3
    top = pdf.get_y()
    pdf.set_xy(15, top)
    pdf.multi_cell(85, 5, left)
    pdf.set_xy(110, top)
    pdf.multi_cell(85, 5, right)
    pdf.output(str(tmp_path / "columns.pdf"))
    blocks = convert(tmp_path / "columns.pdf", "columns.pdf", CFG).blocks
    assert blocks and not any(b.kind == "table" for b in blocks)


def test_pdf_without_outline_takes_headings_from_font_size(tmp_path):
    pdf = write_pdf(tmp_path / "plain.pdf", [[(18, "Main title"),
                                               (11, "Body text that is the longest line here."),
                                               (14, "Sub heading"), (11, "Body two.")]])
    blocks = convert(pdf, "plain.pdf", CFG).blocks
    assert [(b.kind, b.section) for b in blocks] == [
        ("heading", ("Main title",)), ("text", ("Main title",)),
        ("heading", ("Main title", "Sub heading")), ("text", ("Main title", "Sub heading")),
    ]


def test_pptx_slides_sections_and_table(documents):
    blocks = convert(documents["pptx"], "deck.pptx", CFG).blocks
    assert {b.slide for b in blocks} == {1, 2, 3} and all(b.page is None for b in blocks)
    table = next(b for b in blocks if b.kind == "table")
    assert table.slide == 2 and table.section == ("Results",) and "| HIC15 | 455 | 700 |" in table.text


@pytest.mark.parametrize(
    "fmt, section, needle",
    [
        ("docx", ("Safety board meeting", "Open points"), "Supplier audit"),
        ("html", ("Lab guide", "Calibration"), "calibrated every 10 tests"),
        ("xlsx", ("Sled tests",), "| S-03 | 51 | 26 |"),
        ("json", ("tests",), "| SI-2024-03 | side | 50 |"),
        ("csv", (), "| R-001 | 41 | 307 | pass |"),
    ],
)
def test_other_formats_keep_sections(documents, fmt, section, needle):
    blocks = convert(documents[fmt], documents[fmt].name, CFG).blocks
    block = next(b for b in blocks if needle in b.text)
    assert block.section == section


def test_korean_round_trip(documents):
    converted = convert(documents["txt"], "korean.txt", CFG)
    assert converted.markdown == KOREAN


def chunker(size=900):
    return BlockChunker(chunk_size=size, chunk_overlap=50)


def test_table_over_the_bound_is_cut_between_rows_with_its_header(tmp_path):
    converted = convert(long_csv(tmp_path / "runs.csv", rows=60), "runs.csv", CFG)
    nodes = chunker(400)([LocatedDocument.from_converted(converted)])
    assert len(nodes) > 3
    for node in nodes:
        lines = node.text.splitlines()
        assert lines[0] == "| run | speed_kmh | hic15 | result |" and lines[1].startswith("|---")
        assert all(line.startswith("| ") and line.endswith(" |") for line in lines[2:])
        assert len(node.text) <= 400
    rows = [line for n in nodes for line in n.text.splitlines()[2:]]
    assert len(rows) == 60 and len(set(rows)) == 60  # every row once, none cut
    assert split_table("| a |\n|---|", 10) == ["| a |\n|---|"]


def test_chunk_rules_short_whole_slides_apart_sections_split(documents):
    short = convert(documents["docx"], "board.docx", CFG)
    assert len(chunker()([LocatedDocument.from_converted(short)])) == 1
    deck = convert(documents["pptx"], "deck.pptx", CFG)
    assert [n.metadata["slide"] for n in chunker()([LocatedDocument.from_converted(deck)])] == [1, 2, 3]
    pdf = convert(documents["pdf"], "handbook.pdf", CFG)
    nodes = chunker(120)([LocatedDocument.from_converted(pdf)])
    assert all(len(n.text) <= 120 for n in nodes)
    assert {(n.metadata.get("page"), n.metadata.get("section")) for n in nodes} >= {(2, "Restraint systems"),
                                                                                    (3, "Airbags")}
    ids = [n.node_id for n in nodes]
    assert ids == [n.node_id for n in chunker(120)([LocatedDocument.from_converted(pdf)])]  # stable


@pytest.mark.parametrize(
    "name, content, reason",
    [
        ("empty.pdf", b"", "the file is empty"),
        ("broken.pdf", b"%PDF-1.4\nthis is not a pdf", "corrupt or unreadable PDF"),
        ("broken.docx", b"PK\x03\x04 not a zip", "corrupt or unreadable DOCX"),
        ("latin1.txt", "Caf\xe9 cr\xe8me br\xfbl\xe9e".encode("latin-1"), "not UTF-8 text"),
        ("bad.json", b'{"a": 1,,}', "invalid JSON at line 1"),
        ("image.png", b"\x89PNG\r\n", "unsupported file type '.png'"),
    ],
)
def test_bad_input_says_why(tmp_path, name, content, reason):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(DocumentLoadError, match=reason.replace("(", r"\(").replace(".", r"\.")):
        convert(path, name, CFG)


def test_encrypted_scanned_and_oversized_pdf(tmp_path):
    locked = crash_report_pdf(tmp_path / "locked.pdf")
    write_pdf(locked, [[(11, "secret")]], password="pw")
    with pytest.raises(DocumentLoadError, match="encrypted PDF"):
        convert(locked, "locked.pdf", CFG)
    scan = write_pdf(tmp_path / "scan.pdf", [[], []])
    with pytest.raises(DocumentLoadError,
                       match="no text on any of its 2 pages: no text layer, and OCR found none"):
        convert(scan, "scan.pdf", CFG)
    with pytest.raises(DocumentLoadError, match="over the 0.001 MB limit"):
        convert(crash_report_pdf(tmp_path / "big.pdf"), "big.pdf", IngestSettings(max_file_mb=0.001))


def test_headers_from_front_matter_filename_and_first_slide(base_settings, documents, tmp_path):
    settings = fresh_settings(base_settings, tmp_path / "storage")
    report = ingest([documents["pptx"].parent], settings, progress=False)
    assert report.indexed == len(documents) and not report.failed
    deck = chunks_of(settings, "FT-2024-09 deck.pptx")
    embedded = deck[1].get_content(metadata_mode=MetadataMode.EMBED)
    assert embedded.startswith(
        "Title: Frontal impact test FT-2024-09\nTest Name: FT-2024-09\nRegion: Europe\n"
        "State: Final\nPurpose: Check the new bumper beam"
    )
    assert "slide" not in embedded and "deck.pptx" not in embedded
    assert chunks_of(settings, "handbook.pdf")[0].metadata["Title"] == "Crash Safety Handbook"

    off = fresh_settings(base_settings, tmp_path / "storage-off", headers={"enabled": False})
    ingest([documents["pptx"]], off, progress=False)
    plain = chunks_of(off, "FT-2024-09 deck.pptx")[1]
    assert plain.metadata["Region"] == "Europe"
    assert "Region" not in plain.get_content(metadata_mode=MetadataMode.EMBED)
    assert "Region: Europe" in plain.get_content(metadata_mode=MetadataMode.LLM)


def test_upsert_prune_and_recovery_from_a_crash(base_settings, tmp_path, monkeypatch):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nAlpha text one.", encoding="utf-8")
    (folder / "b.md").write_text("# B\n\nBravo text.", encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path / "storage")
    assert ingest([folder], settings, progress=False).indexed == 2
    ids_b = [n.node_id for n in chunks_of(settings, "b.md")]

    (folder / "a.md").write_text("# A\n\nAlpha text two, changed.", encoding="utf-8")
    report = ingest([folder], settings, progress=False)
    assert (report.indexed, report.unchanged) == (1, 1)
    assert [n.text for n in chunks_of(settings, "a.md")] == ["# A\n\nAlpha text two, changed."]
    assert [n.node_id for n in chunks_of(settings, "b.md")] == ids_b

    (folder / "b.md").unlink()
    assert ingest([folder], settings, progress=False).pruned == 0  # without --prune nothing leaves
    assert chunks_of(settings, "b.md")
    assert ingest([folder], settings, prune=True, progress=False).pruned == 1
    assert chunks_of(settings, "b.md") == []

    # A run that dies after writing c's chunks but before recording c: the next run completes.
    (folder / "c.md").write_text("# C\n\nCharlie text.", encoding="utf-8")
    import ingestion.integrity as integrity

    real_save = integrity.save_docstore
    monkeypatch.setattr(integrity, "save_docstore", lambda *a: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        ingest([folder], settings, progress=False)
    monkeypatch.setattr(integrity, "save_docstore", real_save)
    (folder / "c.md").write_text("# C\n\nCharlie text, edited after the crash.", encoding="utf-8")
    assert ingest([folder], settings, progress=False).indexed == 1
    assert [n.text for n in chunks_of(settings, "c.md")] == ["# C\n\nCharlie text, edited after the crash."]
    assert sorted({n.metadata["doc"] for n in chunks_of(settings, "a.md") + chunks_of(settings, "c.md")}) == [
        "a.md", "c.md"]


def test_failures_leave_the_index_alone(base_settings, documents, tmp_path):
    import shutil

    settings = fresh_settings(base_settings, tmp_path / "storage")
    board = shutil.copy(documents["docx"], tmp_path / "board.docx")
    ingest([board], settings, progress=False)
    before = collection(settings).get()["ids"]
    board.write_bytes(b"garbage")  # the indexed file, now unreadable
    report = ingest([board], settings, progress=False)
    assert report.failed and "corrupt or unreadable DOCX" in report.failed[0]["reason"]
    assert collection(settings).get()["ids"] == before


def test_broken_utf16_is_a_clear_error(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(DocumentLoadError, match="not UTF-8 text"):
        convert(path, "notes.txt", CFG)


def test_killed_run_is_completed_by_the_next(base_settings, tmp_path):
    """SIGKILL `ragqa ingest` once it has recorded its first file, then run it again."""
    import os
    import signal
    import subprocess
    import sys
    import time

    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(40):
        (folder / f"note-{i:02d}.md").write_text(f"# Note {i}\n\nItem {i} is stored on shelf {i * 7}.",
                                                 encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path / "storage")
    env = dict(os.environ, RAGQA_STORAGE_DIR=str(settings.storage_dir),
               RAGQA_MODELS_DIR=str(settings.models_dir))
    command = [sys.executable, "-m", "app.cli", "ingest", str(folder)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    store = Store(settings)
    docstore = store.docstore_file
    deadline = time.monotonic() + 120
    while not docstore.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL, "ingest ended before the kill"
    recorded = len(store.hashes())
    assert 0 < recorded < 40, f"the kill did not land mid-run ({recorded} of 40 files recorded)"
    assert subprocess.run(command, env=env, capture_output=True).returncode == 0
    got = collection(settings).get(include=["metadatas"])
    docs = [m["doc"] for m in got["metadatas"]]
    assert sorted(docs) == sorted(f"note-{i:02d}.md" for i in range(40))  # each file once, none lost
    again = ingest([folder], settings, progress=False)
    assert again.unchanged == 40 and again.indexed == 0


def test_llm_header_extraction_retries_and_caches(tmp_path):
    from ingestion.headers import LLMHeaderExtractor

    replies = iter(["I think the region is Brazil.", 'Here: {"Region": "Brazil", "State": null}'])
    prompts = []

    def complete(prompt):
        prompts.append(prompt)
        return next(replies)

    extract = LLMHeaderExtractor(complete, "Fields {fields}\n{text}\nJSON:", tmp_path / "cache.json")
    assert extract("Test XT-77 was run in Brazil.", ["Region", "State"]) == {"Region": "Brazil"}
    assert len(prompts) == 2 and '"Region", "State"' in prompts[0]
    again = LLMHeaderExtractor(complete, "unused", tmp_path / "cache.json")  # a new run, same cache
    assert again("Test XT-77 was run in Brazil.", ["Region", "State"]) == {"Region": "Brazil"}
    assert len(prompts) == 2


def test_llm_header_with_the_embedded_model(base_settings, tmp_path):
    doc = tmp_path / "xt-77.txt"
    doc.write_text("Report on crash test XT-77.\n\nThe test was carried out in Brazil by the Sao Paulo team "
                   "to check the fuel tank after a rear impact.", encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path / "storage",
                              headers={"fields": ["Title", "Region"], "patterns": {}, "llm": True})
    assert ingest([doc], settings, progress=False).indexed == 1
    node = chunks_of(settings, "xt-77.txt")[0]
    assert "brazil" in node.metadata["Region"].lower()
    assert (settings.storage_dir / "header_cache.json").exists()


def test_document_ids_unique_and_stable_whatever_the_root(base_settings, tmp_path):
    root = tmp_path / "a"
    for sub, text in (("sub1", "Sub one keeps the red folder."), ("sub2", "Sub two keeps the blue folder.")):
        (root / sub).mkdir(parents=True)
        (root / sub / "notes.txt").write_text(text, encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path / "storage")
    report = ingest([root / "sub1", root / "sub2"], settings, progress=False)
    assert report.indexed == 2 and sorted(report.doc_ids.values()) == ["notes.txt", "sub2/notes.txt"]
    texts = {m["doc"]: d for m, d in zip(*(collection(settings).get(include=["metadatas", "documents"])[k]
                                             for k in ("metadatas", "documents")))}
    assert "red folder" in texts["notes.txt"] and "blue folder" in texts["sub2/notes.txt"]
    again = ingest([root / "sub1", root / "sub2"], settings, progress=False)
    assert (again.indexed, again.unchanged) == (0, 2)
    # The parent folder as root: the same files keep their ids, nothing is stored twice.
    parent = ingest([root], settings, progress=False)
    assert (parent.indexed, parent.unchanged) == (0, 2)
    assert sorted(parent.doc_ids.values()) == ["notes.txt", "sub2/notes.txt"]
    assert len(collection(settings).get()["ids"]) == 2

    other = fresh_settings(base_settings, tmp_path / "storage-2")
    ingest([root], other, progress=False)
    ingest([root / "sub1"], other, progress=False)
    assert sorted({m["doc"] for m in collection(other).get(include=["metadatas"])["metadatas"]}) == [
        "sub1/notes.txt", "sub2/notes.txt"]


def test_hidden_folders_are_skipped(base_settings, tmp_path):
    folder = tmp_path / "docs"
    (folder / ".git").mkdir(parents=True)
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (folder / ".hidden").mkdir()
    (folder / ".hidden" / "secret.md").write_text("# Secret\n\nNot for the index.", encoding="utf-8")
    (folder / "guide.md").write_text("# Guide\n\nThe lab opens at eight.", encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path / "storage")
    report = ingest([folder], settings, progress=False)
    assert (report.files, report.indexed, report.failed) == (1, 1, [])
    assert report.summary().startswith("1 file: 1 indexed") and "pruned" not in report.summary()


def test_interrupted_run_leaves_no_stale_keyword_index(base_settings, tmp_path, monkeypatch):
    """Killed after the docstore is written, before the lexical index is updated: the next run, with no file
    changed since, still brings BM25 up to date."""
    import ingestion.pipeline as pipeline_module
    from rag.retrieval import bm25_retriever

    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(3):
        (folder / f"part-{i}.md").write_text(f"# Part {i}\n\nPart {i} is painted grey.", encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path / "storage")
    ingest([folder], settings, progress=False)
    (folder / "part-1.md").write_text("# Part 1\n\nPart 1 is painted vermilion.", encoding="utf-8")

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # stands for SIGKILL at this point

    monkeypatch.setattr(pipeline_module, "sync_lexical", killed)
    with pytest.raises(KeyboardInterrupt):
        ingest([folder], settings, progress=False)
    monkeypatch.undo()
    report = ingest([folder], settings, progress=False)
    assert (report.indexed, report.unchanged) == (0, 3)
    found = [n.node.get_content() for n in bm25_retriever(settings).retrieve("vermilion")]
    assert found and "vermilion" in found[0]
    assert not any("grey" in text and "Part 1 " in text for text in found)


def test_one_writer_at_a_time(base_settings, tmp_path):
    from rag.store import StoreBusyError, writer_lock

    doc = tmp_path / "a.md"
    doc.write_text("# A\n\nAlpha.", encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path / "storage")
    with writer_lock(Store(settings)):
        with pytest.raises(StoreBusyError, match="another ingest .*pid .* is writing to"):
            ingest([doc], settings, progress=False)
        with pytest.raises(StoreBusyError):
            ingest([doc], settings, reset=True, progress=False)
    assert ingest([doc], settings, progress=False).indexed == 1  # free again afterwards


def test_second_ingest_process_is_told_to_wait(base_settings, tmp_path):
    """Two `ragqa ingest` processes on one store: the second exits at once with one line."""
    import os
    import subprocess
    import sys

    from rag.store import writer_lock

    doc = tmp_path / "a.md"
    doc.write_text("# A\n\nAlpha.", encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path / "storage")
    env = dict(os.environ, RAGQA_STORAGE_DIR=str(settings.storage_dir),
               RAGQA_MODELS_DIR=str(settings.models_dir))
    with writer_lock(Store(settings)):  # held by this process, as by a running ingest
        result = subprocess.run([sys.executable, "-m", "app.cli", "ingest", "--reset", str(doc)],
                                env=env, capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.strip().startswith("error: another ingest") and "Traceback" not in result.stderr


def test_big_tables_are_refused_in_one_accurate_line(tmp_path):
    import time

    big = tmp_path / "big.csv"
    with big.open("w", encoding="utf-8") as out:
        out.write("run,speed,hic15,result\n")
        for i in range(300_000):
            out.write(f"R-{i},{40 + i % 30},{300 + i % 500},pass\n")
    started = time.monotonic()
    with pytest.raises(DocumentLoadError, match=r"^1,200,004 table cells, over the limit of 1,000,000"):
        convert(big, "big.csv", CFG)
    assert time.monotonic() - started < 10
    small_limit = IngestSettings(max_table_cells=100)
    with pytest.raises(DocumentLoadError, match="ingest.max_table_cells"):
        convert(long_csv(tmp_path / "runs.csv"), "runs.csv", small_limit)
    assert convert(tmp_path / "runs.csv", "runs.csv", CFG).blocks  # under the limit: ingested


def test_html_title_is_the_pages_title(tmp_path):
    page = tmp_path / "design.html"
    page.write_text(
        "<html><head><title>Design and History FAQ &#8212; Python 3.11 documentation</title></head><body>"
        "<div class='sphinxsidebar'><h3><a href='contents.html'>Table of Contents</a></h3>"
        "<ul><li><a href='#why'>Why indentation?</a></li></ul></div>"
        "<div class='body'><h1>Design and History FAQ</h1>"
        "<h2>Why indentation?<a class='headerlink' href='#why' title='Permalink'>\u00b6</a></h2>"
        "<p>Python uses indentation for grouping statements.</p></div></body></html>",
        encoding="utf-8",
    )
    converted = convert(page, "design.html", CFG)
    assert converted.fields == {"Title": "Design and History FAQ \u2014 Python 3.11 documentation"}
    # Sphinx's permalink sign is not part of the section name (citations and gold match by it)
    assert [b.section[-1] for b in converted.blocks if b.kind == "text"] == ["Why indentation?"]
    from ingestion.headers import extract_header
    from rag.settings import HeaderSettings

    header = extract_header("design.html", converted.fields, converted.first_page_text, "Table of Contents",
                            HeaderSettings(fields=["Title"]))
    assert header == {"Title": "Design and History FAQ \u2014 Python 3.11 documentation"}


def test_markdown_keeps_inline_html_as_text(tmp_path):
    note = tmp_path / "known.md"
    note.write_text("# Known issues\n\nKnown issue: <img src=x onerror=alert(1)> and "
                    "<script>alert(1)</script> appear in `<code>` too.\n", encoding="utf-8")
    text = convert(note, "known.md", CFG).markdown
    assert "<img src=x onerror=alert(1)>" in text and "<script>alert(1)</script>" in text


def test_parallel_conversion_gives_the_serial_store(base_settings, documents, tmp_path):
    """Conversion in two worker processes: the same chunks, vectors, lexical index and bad-file
    report as converting in this process, in the same order."""
    import numpy as np

    from ingestion.parallel import worker_count
    from rag.retrieval import lexical_index

    folder = tmp_path / "docs"
    folder.mkdir()
    for fmt, path in documents.items():
        (folder / f"{fmt}{path.suffix}").write_bytes(path.read_bytes())
    (folder / "empty.md").write_bytes(b"")
    (folder / "broken.docx").write_bytes(b"garbage")
    stores = {}
    for workers in (0, 2):
        settings = fresh_settings(base_settings, tmp_path / f"storage-{workers}", ingest={"workers": workers})
        assert worker_count(settings.ingest, len(documents) + 2) == workers
        report = ingest([folder], settings, progress=False)
        got = collection(settings).get(include=["documents", "metadatas", "embeddings"])
        order = np.argsort(got["ids"])
        stores[workers] = (
            report.failed, report.indexed, [got["ids"][i] for i in order],
            [got["documents"][i] for i in order], [got["metadatas"][i] for i in order],
            np.asarray(got["embeddings"])[order],
            [[n.node.node_id for n in lexical_index(settings).search(q, 10)]
             for q in ("airbag", "seat belt", "침입했다")],
        )
    serial, parallel = stores[0], stores[2]
    assert [f["file"].rsplit("/", 1)[1] for f in serial[0]] == ["broken.docx", "empty.md"]
    assert serial[0] == parallel[0] and serial[1] == parallel[1] == len(documents)
    assert serial[2:5] == parallel[2:5] and serial[6] == parallel[6]
    assert np.allclose(serial[5], parallel[5], atol=1e-6)


def test_a_script_without_a_main_guard_runs_once(base_settings, tmp_path):
    """Spawned workers would run the caller's script again; an unguarded one must not ingest
    inside every worker."""
    import os
    import subprocess
    import sys

    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(5):
        (folder / f"n{i}.md").write_text(f"# Note {i}\n\nShelf {i}.", encoding="utf-8")
    runs = tmp_path / "runs.txt"
    script = tmp_path / "script.py"
    script.write_text(
        "from pathlib import Path\nfrom ingestion.pipeline import ingest\n"
        "from rag.settings import load_settings\n"
        f"with open({str(runs)!r}, 'a') as f: f.write('ran\\n')\n"
        f"settings = load_settings()\nsettings.storage_dir = Path({str(tmp_path / 'storage')!r})\n"
        "settings.ingest.workers = 1\n"
        f"print(ingest([Path({str(folder)!r})], settings, progress=False).indexed)\n", encoding="utf-8")
    env = dict(os.environ, RAGQA_MODELS_DIR=str(base_settings.models_dir),
               PYTHONPATH=str(Path(__file__).parent.parent))
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == "5"
    assert runs.read_text() == "ran\n"


def test_a_file_replaced_while_it_is_read_is_read_again(base_settings, tmp_path, monkeypatch):
    """A writer replacing the file during its conversion (here: as the converter returns): the
    file is read again, so its chunks are one version; one that keeps changing is reported."""
    import os

    import ingestion.parallel as parallel
    from ingestion.parallel import CHANGED

    folder = tmp_path / "docs"
    folder.mkdir()
    note, busy = folder / "note.md", folder / "busy.md"
    note.write_text("# Old title\n\nThe old text of the note.", encoding="utf-8")
    busy.write_text("# Busy\n\nVersion 0.", encoding="utf-8")
    real_convert, versions = parallel.convert, {"note.md": 0, "busy.md": 0}

    def convert_then_replace(path, doc_id, cfg):
        converted = real_convert(path, doc_id, cfg)
        if doc_id == "busy.md" or versions["note.md"] == 0:  # note.md is replaced once, busy.md always
            versions[doc_id] += 1
            partial = path.with_name(f".{path.name}.new")
            title = "New title" if doc_id == "note.md" else "Busy"
            partial.write_text(f"# {title}\n\nThe new text, version {versions[doc_id]}.", encoding="utf-8")
            os.replace(partial, path)
        return converted

    monkeypatch.setattr(parallel, "convert", convert_then_replace)
    settings = fresh_settings(base_settings, tmp_path / "storage", ingest={"workers": 0})
    report = ingest([folder], settings, progress=False)
    assert [n.text for n in chunks_of(settings, "note.md")] == ["# New title\n\nThe new text, version 1."]
    assert chunks_of(settings, "note.md")[0].metadata["Title"] == "New title"
    assert report.failed == [{"file": str(busy), "reason": CHANGED}] and chunks_of(settings, "busy.md") == []


def test_the_same_file_under_two_names_is_indexed_once(base_settings, tmp_path):
    folder = tmp_path / "docs"
    (folder / "copies").mkdir(parents=True)
    text = "# Torque table\n\nThe wheel nuts are tightened to 120 Nm."
    (folder / "torque.md").write_text(text, encoding="utf-8")
    (folder / "copies" / "torque (1).md").write_text(text, encoding="utf-8")
    (folder / "other.md").write_text("# Other\n\nSomething else.", encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path / "storage")
    report = ingest([folder], settings, progress=False)
    assert (report.indexed, report.failed) == (2, [])
    assert report.duplicates == [{"file": str(folder / "torque.md"), "doc": "torque.md",
                                  "same_as": "copies/torque (1).md"}]
    assert "1 duplicate" in report.summary() and "same content as copies/torque (1).md" in report.summary()
    held = {m["doc"] for m in collection(settings).get(include=["metadatas"])["metadatas"]}
    assert held == {"copies/torque (1).md", "other.md"}
    again = ingest([folder], settings, progress=False)
    assert (again.indexed, again.unchanged, len(again.duplicates)) == (0, 2, 1)
    # A document that comes to hold another's content leaves; the kept copy gone, the other is indexed.
    (folder / "other.md").write_text(text, encoding="utf-8")
    (folder / "copies" / "torque (1).md").unlink()
    pruned = ingest([folder], settings, prune=True, progress=False)
    assert pruned.pruned == 1 and pruned.indexed == 1 and len(pruned.duplicates) == 1
    assert {m["doc"] for m in collection(settings).get(include=["metadatas"])["metadatas"]} == {"other.md"}


def test_symbolic_links_keep_their_own_names(base_settings, tmp_path):
    """A link is indexed under its own name (not its target's id), a link to a file beside it
    is a duplicate, and a broken one is reported in one line."""
    outside, folder = tmp_path / "outside", tmp_path / "docs"
    outside.mkdir()
    folder.mkdir()
    (outside / "manual.md").write_text("# Manual\n\nPress the red button twice.", encoding="utf-8")
    (folder / "guide.md").write_text("# Guide\n\nThe lab opens at eight.", encoding="utf-8")
    (folder / "linked-manual.md").symlink_to(outside / "manual.md")
    (folder / "guide-link.md").symlink_to(folder / "guide.md")
    (folder / "gone.md").symlink_to(tmp_path / "nowhere.md")
    settings = fresh_settings(base_settings, tmp_path / "storage")
    report = ingest([folder], settings, progress=False)
    assert sorted(report.doc_ids.values()) == ["guide-link.md", "guide.md", "linked-manual.md"]
    assert report.indexed == 2 and report.unchanged == 0
    assert [d["same_as"] for d in report.duplicates] == ["guide-link.md"]
    assert report.failed == [{"file": str(folder / "gone.md"),
                              "reason": f"a broken symbolic link: its target {tmp_path / 'nowhere.md'} "
                                        "does not exist"}]
    assert report.summary().count("\n") == 2  # the duplicate and the broken link: one line each
    assert {m["doc"] for m in collection(settings).get(include=["metadatas"])["metadatas"]} == {
        "guide-link.md", "linked-manual.md"}


def test_a_prune_of_most_of_the_store_needs_yes(base_settings, tmp_path, monkeypatch):
    from conftest import cli

    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(6):
        (folder / f"part-{i}.md").write_text(f"# Part {i}\n\nPart {i} is blue.", encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path / "storage")
    ingest([folder], settings, progress=False)
    refused = cli(monkeypatch, settings, "ingest", "--prune", str(folder / "part-0.md"))
    assert refused.exit_code == 1 and "Traceback" not in refused.output
    assert refused.output.strip().splitlines()[-1] == (
        "error: --prune would remove 5 of the 6 indexed documents (those not found under the paths given): "
        "add --yes to go ahead")
    assert len({m["doc"] for m in collection(settings).get(include=["metadatas"])["metadatas"]}) == 6
    (folder / "part-5.md").unlink()
    assert ingest([folder], settings, prune=True, progress=False).pruned == 1  # a few: no question
    done = cli(monkeypatch, settings, "ingest", "--prune", "--yes", str(folder / "part-0.md"))
    assert done.exit_code == 0 and "4 pruned" in done.output
