"""Reference matching quality: sentence-level precision and coverage against a threshold.

    .venv/bin/python benchmarks/reference_precision.py [--out FILE]

The annotated set is built from real retrieval results: for each question of the sample QA and
of devbench's Debian FAQ (HTML) QA, the top 5 chunks are retrieved; the "answer" takes one
sentence verbatim from each of up to two of those chunks (gold: every top-5 chunk containing
it) and one sentence from a document outside the top 5 (gold: none), in a fixed shuffled order.
Precision: share of sentences marked supported whose best reference is a gold chunk (a gold-less
sentence marked supported counts against it). Coverage: share of gold-supported sentences marked
supported. Prints the curve over thresholds and writes JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
from pathlib import Path

import rag  # noqa: F401
from evaluation.gold import load_qa, normalise
from ingestion.pipeline import ingest
from llama_index.core.schema import MetadataMode
from rag.models import build_embedding
from rag.references import match_references, split_sentences
from rag.retrieval import dense_retriever
from rag.scoring import build_scorer
from rag.settings import REPO_ROOT, load_settings
from rag.store import collection

DEVBENCH = REPO_ROOT.parent / "shared" / "devbench"
THRESHOLDS = [round(0.1 * i, 1) for i in range(1, 10)]


def pick(items: list, seed: str):
    return items[int(hashlib.sha1(seed.encode()).hexdigest(), 16) % len(items)] if items else None


def usable(text: str) -> list[str]:
    return [s for s in split_sentences(text) if len(s.split()) >= 6 and "|" not in s]


def build_cases(settings, qa: list[dict]) -> list[dict]:
    embedding = build_embedding(settings)
    retriever = dense_retriever(settings, embedding, top_n=5)
    everything = collection(settings).get(include=["documents", "metadatas"])
    cases = []
    for item in qa:
        top = retriever.retrieve(item["question"])
        chunks = [n.node.get_content(metadata_mode=MetadataMode.EMBED) for n in top]
        raw = [n.node.get_content(metadata_mode=MetadataMode.NONE) for n in top]
        docs = {n.node.metadata["doc"] for n in top}
        sentences, gold = [], []
        for k in range(min(2, len(top))):
            sentence = pick(usable(raw[k]), item["id"] + str(k))
            if sentence and sentence not in sentences:
                sentences.append(sentence)
                gold.append([j for j, c in enumerate(chunks) if normalise(sentence) in normalise(c)])
        outside = [d for d, m in zip(everything["documents"], everything["metadatas"]) if m["doc"] not in docs]
        foreign = pick(usable(pick(outside, item["id"]) or ""), item["id"] + "x")
        if foreign:
            sentences.append(foreign)
            gold.append([])
        order = sorted(range(len(sentences)), key=lambda i: hashlib.sha1(f"{item['id']}{i}".encode()).hexdigest())
        if sentences:
            cases.append({"id": item["id"], "chunks": chunks,
                          "sentences": [sentences[i] for i in order], "gold": [gold[i] for i in order]})
    return cases


def score_cases(cases: list[dict], settings) -> list[dict]:
    embedding = build_embedding(settings)
    cfg = settings.references
    curve = []
    scorers = [build_scorer(settings, embedding) for _ in cases]  # embeddings cached per case
    for threshold in THRESHOLDS:
        marked = correct = gold_supported = covered = 0
        for case, scorer in zip(cases, scorers):
            segments = match_references(case["sentences"], case["chunks"], scorer, threshold,
                                        cfg.max_span, cfg.margin, cfg.context_bonus)
            for segment in segments:
                for index in range(segment.start, segment.end + 1):
                    gold = case["gold"][index]
                    gold_supported += bool(gold)
                    if segment.supported:
                        marked += 1
                        correct += segment.references[0].chunk in gold
                        covered += bool(gold)
        curve.append({"threshold": threshold, "precision": round(correct / max(marked, 1), 4),
                      "coverage": round(covered / max(gold_supported, 1), 4), "marked": marked})
    return curve


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "storage/reports/bench-references.json")
    args = parser.parse_args()
    results = {}
    for name, docs, qa in [
        ("sample", REPO_ROOT / "data/sample/docs", REPO_ROOT / "data/sample/qa.jsonl"),
        ("debian_faq_en_html", DEVBENCH / "docs/debian-faq-en", DEVBENCH / "qa/debian_faq_en_html.jsonl"),
    ]:
        settings = load_settings()
        settings.storage_dir = Path(tempfile.mkdtemp(prefix="ragqa-bench-refs-"))
        ingest([docs], settings, progress=False)
        cases = build_cases(settings, [q for q in load_qa(qa) if q.get("answerable", True)])
        curve = score_cases(cases, settings)
        n = sum(len(c["sentences"]) for c in cases)
        results[name] = {"answers": len(cases), "n_sentences": n,
                         "unsupported_sentences": sum(1 for c in cases for g in c["gold"] if not g), "by_threshold": curve}
        print(f"\n{name}: {len(cases)} answers, {n} sentences")
        for point in curve:
            print(f"  threshold {point['threshold']:.1f}  precision {point['precision']:.3f}  coverage {point['coverage']:.3f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1))
    print(args.out)


if __name__ == "__main__":
    main()
