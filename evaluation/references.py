"""Reference-matching evaluation on a gold file (docs/FORMATS.md, "Reference gold item"): the given
answer sentences are matched against the given chunks with a support scorer (the configured one:
rag/support.support_scorer), no retrieval and no generation, so the matcher is measured alone.

Precision: share of sentences marked supported whose best reference is a gold chunk (gold-less
sentences marked supported count against it). Coverage: share of gold-supported sentences marked
supported. Both at the configured threshold and along a threshold curve; the scorer's outputs
are cached per item, so the curve costs one scoring pass.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from statistics import median, quantiles
from typing import Any

from tqdm import tqdm

from evaluation.gold import load_jsonl
from rag.references import ReferenceMatcher, Segment
from rag.scoring import Scorer
from rag.support import LearnedSupport
from rag.settings import Settings

THRESHOLDS = [round(0.05 * i, 2) for i in range(1, 20)]


def load_gold(path: Path) -> list[dict[str, Any]]:
    """Read a reference gold file; a malformed line is reported with its number."""
    items = load_jsonl(path, ("id", "answer_sentences", "chunks", "gold"), "gold item")
    for item in items:
        if len(item["gold"]) != len(item["answer_sentences"]):
            raise ValueError(f"{path}: item {item['id']}: gold needs one list per answer sentence")
    return items


class CachedScorer:
    """The scorer with its outputs remembered and the pairs it was asked for counted."""

    def __init__(self, scorer: Scorer):
        self.scorer = scorer
        self.kind = scorer.kind  # it scores as the scorer it wraps
        self.cache: dict[tuple[str, str], float] = {}

    def __call__(self, pairs: Sequence[tuple[str, str]], asked: str = "") -> list[float]:
        """Scores of the pairs; the reference gold's sentences come without a question (`asked`
        is always empty here), so any scorer, the bare bi-encoder included, can be wrapped."""
        missing = list(dict.fromkeys(p for p in pairs if p not in self.cache))
        self.cache.update(zip(missing, self.scorer(missing)))
        return [self.cache[p] for p in pairs]


def tally(segments: list[Segment], gold: list[list[int]]) -> dict[str, int]:
    counts = {"marked": 0, "correct": 0, "gold_supported": 0, "covered": 0}
    for segment in segments:
        for index in range(segment.start, segment.end + 1):
            counts["gold_supported"] += bool(gold[index])
            if segment.supported:
                counts["marked"] += 1
                counts["correct"] += segment.references[0].chunk in gold[index]
                counts["covered"] += bool(gold[index])
    return counts


def rates(counts: dict[str, int]) -> dict[str, float]:
    return {
        "precision": round(counts["correct"] / max(counts["marked"], 1), 4),
        "coverage": round(counts["covered"] / max(counts["gold_supported"], 1), 4),
    }


def evaluate_references(
    settings: Settings, items: list[dict[str, Any]], scorer: Scorer, progress: bool = True
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rows, times, pairs_scored = [], [], 0
    total = {k: 0 for k in ("marked", "correct", "gold_supported", "covered")}
    curve = {t: dict(total) for t in THRESHOLDS}
    for item in tqdm(items, desc="references", unit="answer", disable=not progress):
        sentences, chunks = item["answer_sentences"], [c["text"] for c in item["chunks"]]
        cached = CachedScorer(scorer)  # per answer: its pairs are counted and its curve rescores none
        matcher = ReferenceMatcher.from_settings(settings, cached)
        if isinstance(scorer, LearnedSupport):  # the pipeline reuses the store's chunk vectors: not timed
            scorer.encoder.embed(chunks, query=False)
        started = time.perf_counter()
        segments = matcher.match(sentences, chunks)  # as the pipeline runs it
        times.append((time.perf_counter() - started) * 1000)
        pairs_scored += len(cached.cache)
        counts = tally(segments, item["gold"])
        for key in total:
            total[key] += counts[key]
        for threshold in THRESHOLDS:
            for key, value in tally(matcher.match(sentences, chunks, threshold), item["gold"]).items():
                curve[threshold][key] += value
        rows.append({
            "id": item["id"],
            "segments": [
                {"sentences": s.sentences, "supported": s.supported, "score": round(s.score, 4),
                 "chunks": [r.chunk for r in s.references]}
                for s in segments
            ],
            "gold": item["gold"],
            "ms": round(times[-1], 1),
        } | rates(counts))
    metrics = {
        "n_answers": len(items),
        "n_sentences": sum(len(i["answer_sentences"]) for i in items),
        "threshold": settings.support.threshold,
        **rates(total),
        "by_threshold": [{"threshold": t} | rates(c) for t, c in curve.items()],
        "segments_per_answer": round(sum(len(r["segments"]) for r in rows) / max(len(rows), 1), 3),
        "p50_ms": round(median(times), 1) if times else None,
        "p95_ms": (round(quantiles(times, n=20)[-1], 1) if len(times) > 1
                   else round(times[0], 1) if times else None),
        "pairs_scored": pairs_scored,
        "scorer": scorer.kind,
    }
    return metrics, rows
