"""Conversion of every format with locations, chunking rules, headers, incremental indexing and
bad input, on small real documents written by tests/documents.py."""

from __future__ import annotations

import pytest
from conftest import fresh_settings
from documents import KOREAN, all_formats, crash_report_pdf, long_csv, write_pdf
from llama_index.core.schema import MetadataMode
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from ingestion.chunking import BlockChunker, LocatedDocument, split_table
from ingestion.convert import DocumentLoadError, convert
from ingestion.pipeline import ingest
from rag.settings import IngestSettings
from rag.store import collection

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


def test_pdf_without_outline_takes_headings_from_font_size(tmp_path):
    pdf = write_pdf(tmp_path / "plain.pdf", [[(18, "Main title"), (11, "Body text that is the longest line here."),
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
    assert {(n.metadata.get("page"), n.metadata.get("section")) for n in nodes} >= {(2, "Restraint systems"), (3, "Airbags")}
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
    with pytest.raises(DocumentLoadError, match="no text layer on any of its 2 pages"):
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
    import ingestion.pipeline as pipeline_module

    real_save = pipeline_module._save_docstore
    monkeypatch.setattr(pipeline_module, "_save_docstore", lambda *a: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        ingest([folder], settings, progress=False)
    monkeypatch.setattr(pipeline_module, "_save_docstore", real_save)
    (folder / "c.md").write_text("# C\n\nCharlie text, edited after the crash.", encoding="utf-8")
    assert ingest([folder], settings, progress=False).indexed == 1
    assert [n.text for n in chunks_of(settings, "c.md")] == ["# C\n\nCharlie text, edited after the crash."]
    assert sorted({n.metadata["doc"] for n in chunks_of(settings, "a.md") + chunks_of(settings, "c.md")}) == ["a.md", "c.md"]


def test_failures_leave_the_index_alone(base_settings, documents, tmp_path):
    settings = fresh_settings(base_settings, tmp_path / "storage")
    ingest([documents["docx"]], settings, progress=False)
    before = collection(settings).get()["ids"]
    broken = tmp_path / "board.docx"
    broken.write_bytes(b"garbage")  # same doc id as the indexed file, now unreadable
    report = ingest([broken], settings, progress=False)
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
        (folder / f"note-{i:02d}.md").write_text(f"# Note {i}\n\nItem {i} is stored on shelf {i * 7}.", encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path / "storage")
    env = dict(os.environ, RAGQA_STORAGE_DIR=str(settings.storage_dir), RAGQA_MODELS_DIR=str(settings.models_dir))
    command = [sys.executable, "-m", "app.cli", "ingest", str(folder)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    docstore = settings.docstore_dir / "docstore.json"
    deadline = time.monotonic() + 120
    while not docstore.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
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
