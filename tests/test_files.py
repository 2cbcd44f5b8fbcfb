"""Files and folders replaced whole or not at all (rag/files.py): the BM25 index, the prepared
e5 folder and fine-tuned models are built this way."""

from __future__ import annotations

import pytest

from rag.files import replaced_file, replaced_folder, write_text_atomically


def test_a_failed_build_leaves_the_old_folder_and_a_good_one_replaces_it(tmp_path):
    target = tmp_path / "index"
    write_text_atomically(target / "data.txt", "old")
    with pytest.raises(RuntimeError), replaced_folder(target) as partial:
        (partial / "data.txt").write_text("half", encoding="utf-8")
        raise RuntimeError("killed mid-build")
    assert (target / "data.txt").read_text(encoding="utf-8") == "old"
    with replaced_folder(target) as partial:  # the leftover is cleared first
        assert list(partial.iterdir()) == []
        (partial / "data.txt").write_text("new", encoding="utf-8")
    assert (target / "data.txt").read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]


def test_a_failed_write_leaves_the_old_file_and_a_good_one_replaces_it(tmp_path):
    target = tmp_path / "docstore" / "docstore.json"
    write_text_atomically(target, "old")
    with pytest.raises(RuntimeError), replaced_file(target) as partial:
        partial.write_text("half", encoding="utf-8")
        raise RuntimeError("killed mid-write")
    assert target.read_text(encoding="utf-8") == "old"
    write_text_atomically(target, "new")
    assert target.read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in target.parent.iterdir()) == ["docstore.json"]
