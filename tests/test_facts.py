"""Table cells as facts (rag/facts.py): what a chunk's tables give, and facts kept level with
their document by the lexical index (put, change, delete, clear, sync) and by ingest and remove."""

from __future__ import annotations

import shutil
import sqlite3

from conftest import FIXTURES, cli, fresh_settings
from llama_index.core.schema import TextNode

from ingestion.pipeline import ingest
from rag.facts import facts_of, number_of
from rag.lexical import LexicalIndex
from rag.store import Store

DECK = """# Results

| Measurement | Driver | Passenger | Limit |
|---|---|---|---|
| HIC15 | 412 | 388 | 700 |
| Chest deflection (mm) | 31 |  | 42 |"""


def node(text: str, node_id: str = "c1", doc: str = "FT-2024-07.pptx", **place) -> TextNode:
    return TextNode(id_=node_id, text=text, metadata={"doc": doc, **place})


def test_cells_of_a_table_with_their_row_column_unit_and_place():
    facts = {(f.row, f.column): f for f in facts_of(node(DECK, slide=3, section="Results"))}
    assert len(facts) == 6
    hic = facts[("HIC15", "Driver")]
    assert (hic.value, hic.number, hic.unit, hic.slide, hic.section, hic.chunk_id) == ("412", 412.0, "", 3,
                                                                                     "Results", "c1")
    chest = facts[("Chest deflection (mm)", "Limit")]
    assert (chest.number, chest.unit) == (42.0, "mm")  # the unit the row label names
    blank = facts[("Chest deflection (mm)", "Passenger")]
    assert blank.blank and blank.value == "" and blank.number is None


def test_label_column_units_key_values_and_korean():
    register = "| run | speed_kmh | result |\n|---|---|---|\n| SL-01 | 42 | pass |\n| SL-02 | 44 | fail |"
    facts = {(f.row, f.column): f for f in facts_of(node(register, doc="sled-tests.csv"))}
    assert facts[("SL-02", "speed_kmh")].unit == "km/h" and facts[("SL-02", "result")].value == "fail"
    triangle = "| accident_year | 12 | 24 |\n|---|---|---|\n| 2019 | 410 | 655 |\n| 2020 | 455 |  |"
    facts = {(f.row, f.column): f for f in facts_of(node(triangle))}
    assert facts[("2019", "24")].number == 655 and facts[("2020", "24")].blank  # years label the rows
    korean = "| 지점 | 매출 (%) |\n|---|---|\n| 서울 | 12 |\n| 부산 | 8 |"
    assert {(f.row, f.column, f.unit) for f in facts_of(node(korean))} == {("서울", "매출 (%)", "%"),
                                                                           ("부산", "매출 (%)", "%")}
    pairs = "| Terms |\n|---|\n| Retention: EUR 30m |\n| Limit: EUR 200m |"
    assert {(f.row, f.value) for f in facts_of(node(pairs))} == {("Retention", "EUR 30m"),
                                                                 ("Limit", "EUR 200m")}
    json_lines = "programme.name: Model K crash programme\nprogramme.lead: Mina Park"
    assert {(f.row, f.column, f.value) for f in facts_of(node(json_lines))} == {
        ("programme", "name", "Model K crash programme"), ("programme", "lead", "Mina Park")}
    assert facts_of(node("Plain prose: nothing tabular here.")) == []
    assert [number_of(t) for t in ("1,500 kg", "2024-07-12", "SL-05", "12.5 %")] == [1500, None, None, 12.5]


def test_the_lexical_index_writes_and_drops_facts_with_its_rows(tmp_path):
    index = LexicalIndex(tmp_path / "lexical.sqlite")
    index.put("FT-2024-07.pptx", "h1", [node(DECK, slide=3)])
    index.put("other.md", "h2", [node("| a | b |\n|---|---|\n| x | 1 |", "c2", doc="other.md")])
    assert {f.value for f in index.facts(["FT-2024-07.pptx"])} == {"412", "388", "700", "31", "", "42"}
    index.put("FT-2024-07.pptx", "h3", [node(DECK.replace("412", "415"), slide=3)])  # a changed version
    values = [f.value for f in index.facts(["FT-2024-07.pptx"])]
    assert "415" in values and "412" not in values and len(values) == 6
    index.delete("FT-2024-07.pptx")
    assert index.facts(["FT-2024-07.pptx"]) == [] and len(index.facts(["other.md"])) == 1
    index.clear()
    assert index.facts(["other.md"]) == []


def test_sync_gives_an_index_written_without_facts_its_facts(tmp_path):
    """An index of an earlier version (rows, no facts) gets them from its stored chunks at its
    next sync."""
    index = LexicalIndex(tmp_path / "lexical.sqlite")
    index.put("FT-2024-07.pptx", "h1", [node(DECK, slide=3)])
    with sqlite3.connect(index.path) as db:
        db.execute("DELETE FROM facts")
        db.execute("DELETE FROM state WHERE key = 'facts'")
    assert index.facts(["FT-2024-07.pptx"]) == []
    index.sync({"FT-2024-07.pptx": "h1"}, lambda doc: [])
    assert {f.slide for f in index.facts(["FT-2024-07.pptx"])} == {3}
    assert len(index.facts(["FT-2024-07.pptx"])) == 6


def test_ingest_change_and_remove_keep_facts_level(base_settings, tmp_path, monkeypatch):
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(FIXTURES / "tables" / "loss-triangle.csv", folder)
    settings = fresh_settings(base_settings, tmp_path / "storage")
    ingest([folder], settings, progress=False)
    store = Store(settings)
    cells = {(f.row, f.column): f.value for f in store.lexical.facts(["loss-triangle.csv"])}
    assert cells[("2020", "36")] == "801" and cells[("2021", "36")] == ""
    triangle = folder / "loss-triangle.csv"
    triangle.write_text(triangle.read_text().replace("801", "805"))
    ingest([folder], settings, progress=False)
    cells = {(f.row, f.column): f.value for f in store.lexical.facts(["loss-triangle.csv"])}
    assert cells[("2020", "36")] == "805" and len(cells) == 16
    assert cli(monkeypatch, settings, "remove", "loss-triangle.csv").exit_code == 0
    assert store.lexical.facts(["loss-triangle.csv"]) == []
