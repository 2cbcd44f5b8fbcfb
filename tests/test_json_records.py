"""JSON records with nested objects (ingestion/plain.py): each leaf a cell named by its key path,
read by the cell lookup over a real store, and a figure in a key's unit ("setpoint_c": °C)
backing the model's sentence. Two files hold the same keys for other consignments and both
weights sit in every row, so the right cell is never the only candidate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import fresh_settings, ranking

from ingestion.pipeline import ingest
from ingestion.plain import read_json
from rag.cells import CellLookup
from rag.claims import claims_backed
from rag.store import Store


def consignment(cid: str, gross: int, net: int, setpoint: float, via: str | None) -> dict:
    return {"consignment_id": cid,
            "customer": {"name": f"Customer of {cid}", "account_no": f"AC-{gross % 1000:03d}"},
            "route": {"origin": "LDS", "via": via, "destination": "SOU",
                      "transit_time_h": {"min": gross % 7 + 20, "max": gross % 7 + 36}},
            "cargo": {"pallets": 20, "weights": {"gross_kg": gross, "net_kg": net},
                      "temperature_control": {"setpoint_c": setpoint, "tolerance_c": 1.5,
                                              "range_c": {"min": setpoint - 2, "max": setpoint + 2}}},
            "tags": ["chilled", "priority"]}


def write(path: Path, records: list[dict]) -> Path:
    path.write_text(json.dumps({"extract": {"system": "TMS", "record_count": len(records)},
                                "consignments": records}, indent=2), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def records(base_settings, tmp_path_factory):
    folder = tmp_path_factory.mktemp("records-docs")
    write(folder / "consignments-april.json", [consignment("CN-0417-32", 17840, 16120, 3.5, "COV"),
                                               consignment("CN-0417-33", 19210, 17380, -20.0, None)])
    write(folder / "consignments-may.json", [consignment("CN-0502-07", 9460, 8710, 4.0, "BRS"),
                                             consignment("CN-0502-08", 12050, 11300, -18.0, "COV")])
    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("records"))
    report = ingest([folder], settings, progress=False)
    assert report.indexed == 2 and not report.failed
    rank = ranking(settings)

    def ask(question: str):
        found = rank(question)[1]
        return CellLookup.from_settings(settings, Store(settings)).answer(question, found), found

    return folder, ask


def test_nested_keys_become_columns_named_by_their_paths(records):
    folder, _ = records
    blocks = read_json(folder / "consignments-april.json", "a.json", "json", None).blocks
    table = next(b.text for b in blocks if b.kind == "table")
    header = table.splitlines()[0]
    assert "| cargo.weights.gross_kg |" in header and "| cargo.temperature_control.setpoint_c |" in header
    assert "{" not in table  # no object left as JSON text in a cell
    assert "| chilled, priority |" in table  # a list of plain values is one cell
    assert "None" not in table  # a null is a blank cell
    assert "extract.record_count: 2" in next(b.text for b in blocks if b.kind != "table")


def test_a_nested_field_is_the_cell_its_last_keys_name(records):
    _, ask = records
    gross, _ = ask("What is the gross weight of consignment CN-0502-07?")
    assert gross.kind == "cell" and "9460" in gross.text and "8710" not in gross.text
    (fact,) = gross.facts
    assert (fact.doc, fact.row) == ("consignments-may.json", "CN-0502-07")
    assert fact.column == "cargo.weights.gross_kg"
    net, _ = ask("net weight of CN-0417-32?")
    assert net.kind == "cell" and "16120" in net.text and net.facts[0].doc == "consignments-april.json"
    blank, _ = ask("What is the via point on the route of CN-0417-33?")
    assert blank.kind == "blank" and not any(code in blank.text for code in ("COV", "BRS"))


def test_a_min_or_max_key_is_no_unit_and_upper_names_max(records):
    _, ask = records
    upper, _ = ask("What is the upper limit of the temperature range for CN-0417-32?")
    assert upper.kind == "cell" and upper.facts[0].column == "cargo.temperature_control.range_c.max"
    assert "5.5" in upper.text and "1.5" not in upper.text
    # "transit_time_h.min" is the key min, not minutes: the question names the max
    transit, _ = ask("What is the upper limit on transit time for CN-0502-07?")
    assert transit.kind == "cell" and transit.facts[0].column == "route.transit_time_h.max"


def test_a_keys_celsius_backs_a_sentence_in_degrees(records):
    _, ask = records
    _, found = ask("What temperature is consignment CN-0417-32 set to?")
    chunk = next(c.node.get_content() for c in found if "CN-0417-32" in c.node.get_content())
    assert claims_backed("Consignment CN-0417-32 is set to 3.5°C.", chunk)
    assert not claims_backed("The setpoint of consignment CN-0417-32 is 1.5°C.", chunk)  # its tolerance
    assert not claims_backed("Consignment CN-0417-32 is set to 3.5 kg.", chunk)
    # a nested key's "_c" ("range_c.max")
    assert claims_backed("The temperature range of CN-0417-32 goes up to 5.5°C.", chunk)
