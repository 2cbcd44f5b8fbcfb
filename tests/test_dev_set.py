"""The typed dev set (data/dev): every document converts, every evidence span lies in an indexed
chunk of its document, and each question type the issue names has at least three questions."""

from __future__ import annotations

from collections import Counter

from conftest import fresh_settings

from evaluation.gold import load_qa, satisfies
from rag.settings import REPO_ROOT
from rag.store import collection

DEV = REPO_ROOT / "data" / "dev"
TYPES = {"lookup", "paraphrase", "cell", "blank-cell", "comparison", "count", "json-field", "false-premise",
         "cross-language", "unanswerable", "current-version", "erratum", "postponed", "conflict",
         "two-document"}
REFUSED = {"blank-cell", "false-premise", "unanswerable"}


def test_the_dev_set_converts_and_its_evidence_is_indexed(base_settings, tmp_path):
    from ingestion.pipeline import ingest

    qa = load_qa(DEV / "qa.jsonl")
    kinds = Counter(item["type"] for item in qa)
    assert set(kinds) == TYPES and min(kinds.values()) >= 3 and len(qa) >= 48
    assert all(item["answerable"] is (item["type"] not in REFUSED) for item in qa)
    assert all(item["answer"] for item in qa if item["answerable"])

    settings = fresh_settings(base_settings, tmp_path)
    report = ingest([DEV / "docs"], settings, progress=False)
    assert report.failed == [] and report.indexed == report.files >= 20
    store = collection(settings).get(include=["documents", "metadatas"])
    chunks = list(zip(store["ids"], store["documents"], store["metadatas"]))
    missing = [(item["id"], e["text"]) for item in qa for e in item["evidence"]
               if not any(satisfies(e, text, meta, cid) for cid, text, meta in chunks)]
    assert not missing
