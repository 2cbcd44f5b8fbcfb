"""The lexical index is updated a document at a time and stays equal to one built from scratch:
after adds, changes, deletes and a crash in the middle of an update."""

from __future__ import annotations

import pytest
from conftest import fresh_settings

from ingestion.pipeline import ingest
from rag.lexical import LexicalIndex
from rag.retrieval import lexical_index
from rag.store import Store, collection, stored_nodes

PARTS = ["bumper", "door", "pillar", "roof", "seat", "belt", "airbag", "sill", "hood", "wheel"]
QUERIES = ["steel bumper beam", "door hinge torque", "roof crush test", "seat belt anchor airbag",
           "가로 부재 용접", "wheel nut", "hood latch pillar"]


def write_docs(folder, names, variant="grey"):
    for i, name in enumerate(names):
        others = " ".join(PARTS[(i + k) % len(PARTS)] for k in range(1, 4))
        (folder / f"{name}.md").write_text(
            f"# The {name}\n\nThe {name} is painted {variant} and bolted to the {others}.\n\n"
            f"## Tests\n\nThe {name} passed {i + 3} crush tests; {name} torque is {40 + i} Nm. "
            + " ".join(f"Run {run} of the {name} measured {run * 7 + i} mm "
                       f"of intrusion at the {PARTS[run % 10]}."
                       for run in range(12)) + " "
            f"{'가로 부재 용접 부위는 ' + name + ' 옆에 있다.' if i % 3 == 0 else ''}", encoding="utf-8")


def results(index: LexicalIndex) -> list:
    found = [[(n.node.node_id, round(n.score, 6)) for n in index.search(q, 10)] for q in QUERIES]
    ids = sorted(node_id for hits in found for node_id, _ in hits)
    return found + [[round(s, 6) for s in index.scores(q, ids)] for q in QUERIES]


def rebuilt(settings, path) -> LexicalIndex:
    """An index built from scratch from the store's chunks and the docstore's hashes."""
    hashes = Store(settings).hashes()
    chunks = collection(settings)
    index = LexicalIndex(path)
    index.sync(hashes, lambda doc: stored_nodes(chunks, where={"doc": doc}))
    return index


def test_incremental_updates_equal_a_full_rebuild(base_settings, tmp_path, monkeypatch):
    folder = tmp_path / "docs"
    folder.mkdir()
    write_docs(folder, PARTS[:6])
    settings = fresh_settings(base_settings, tmp_path / "storage")
    ingest([folder], settings, progress=False)
    index = lexical_index(settings)
    assert index.count() == len(stored_nodes(collection(settings))) > 6

    put = []
    monkeypatch.setattr(LexicalIndex, "put",
                        lambda self, doc, *a, _put=LexicalIndex.put: put.append(doc) or _put(self, doc, *a))
    write_docs(folder, PARTS[6:8])  # two added
    (folder / "door.md").write_text("# The door\n\nThe door is made of aluminium; hinge torque 55 Nm.",
                                    encoding="utf-8")
    (folder / "roof.md").unlink()
    ingest([folder], settings, prune=True, progress=False)
    assert sorted(put) == ["airbag.md", "door.md", "sill.md"]  # only what changed was read again
    assert "roof.md" not in index.hashes()
    assert results(index) == results(rebuilt(settings, tmp_path / "rebuilt-1.sqlite"))

    # Killed inside the update of a changed document: its transaction is rolled back whole.
    (folder / "seat.md").write_text("# The seat\n\nThe seat frame is welded to the sill.", encoding="utf-8")
    before = results(index)

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(LexicalIndex, "_add", staticmethod(killed))
    with pytest.raises(KeyboardInterrupt):
        ingest([folder], settings, progress=False)
    assert results(index) == before
    monkeypatch.undo()
    report = ingest([folder], settings, progress=False)
    assert report.indexed == 0  # the store had the change; only the index caught up
    assert any("welded" in n.node.get_content() for n in index.search("welded", 5))
    assert results(index) == results(rebuilt(settings, tmp_path / "rebuilt-2.sqlite"))
    assert results(index) != before


def test_search_filters_and_scores(base_settings, tmp_path):
    """Only chunks holding a query word are found (Korean words too), filters apply in the
    index, and a candidate without the query's words scores 0 for the ranker."""
    from rag.retrieval import metadata_filters

    folder = tmp_path / "docs"
    folder.mkdir()
    write_docs(folder, PARTS)
    settings = fresh_settings(base_settings, tmp_path / "storage")
    ingest([folder], settings, progress=False)
    index = lexical_index(settings)
    hits = index.search("sill", 50)
    assert hits and all("sill" in n.node.get_content(metadata_mode="embed").lower() for n in hits)
    assert {n.node.metadata["doc"]
            for n in index.search("sill", 50, metadata_filters(["sill.md"]))} == {"sill.md"}
    assert {n.node.metadata["doc"] for n in index.search("용접", 50)} == {"bumper.md", "roof.md", "airbag.md",
                                                                          "wheel.md"}
    without = next(n.node.node_id for n in index.search("painted", 50)
                   if "sill" not in n.node.get_content().lower())
    assert index.scores("sill", [without, hits[0].node.node_id]) == [0.0, pytest.approx(hits[0].score)]
    assert index.search("the and of", 5) == []  # stop words alone match nothing
    for query in QUERIES:  # the ranker's scores are FTS5's, computed apart
        found = index.search(query, 50)
        assert index.scores(query, [n.node.node_id for n in found]) == pytest.approx([n.score for n in found],
                                                                                     rel=1e-9)


def test_filters_on_hostile_field_names(base_settings, tmp_path):
    """Header field names are bound, never spliced into SQL: an apostrophe, a quote, a dot or a
    bracket in one filters like any other name."""
    from rag.retrieval import metadata_filters

    names = ["Owner's name", 'Q"uote', "a.b", "x[0]", "a$b"]
    folder = tmp_path / "docs"
    folder.mkdir()
    for doc, value in (("ann", "Ann"), ("bob", "Bob")):
        fields = "\n".join(f"'{name.replace(chr(39), chr(39) * 2)}': {value}-{i}"
                           for i, name in enumerate(names))
        (folder / f"{doc}.md").write_text(f"---\n{fields}\n---\n# {doc}\n\n"
                                          f"The gearbox was serviced by {value}.", encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path / "storage", headers={"fields": names, "patterns": {}})
    ingest([folder], settings, progress=False)
    index = lexical_index(settings)
    for i, name in enumerate(names):
        hits = index.search("gearbox serviced", 10, metadata_filters(where={name: f"Bob-{i}"}))
        assert {n.node.metadata["doc"] for n in hits} == {"bob.md"}, name
        assert index.search("gearbox", 10, metadata_filters(where={name: "nobody"})) == []
    assert index.search("gearbox", 10, metadata_filters(where={"Owner": "Bob-0"})) == []  # no prefix match
