"""Retrieval metrics of the two papers, on one question's ranked chunks.

`hits[i][j]` says whether the chunk at rank i+1 satisfies evidence item j (see evaluation.gold).
A chunk is relevant when it satisfies any required item. Definitions:

- MAP@k: mean over questions of AP@k = (1 / min(R, k)) * sum over relevant ranks r <= k of
  precision@r, with R the number of relevant chunks found in the ranking (at least 1);
- Success@k: a relevant chunk is in the top k;
- MRR: 1 / rank of the first relevant chunk (0 if none);
- Evidence Recall@k: share of the required evidence items satisfied within the top k;
- Mean Evidence Rank: the rank at which all required items are first covered (None if never);
- Bundle coverage@k: 1 when every required item is satisfied within the top k, else 0;
- Source traceability: the top chunk satisfies a required item's location (document and the
  page/slide/section given), the text aside.
"""

from __future__ import annotations

from statistics import mean
from typing import Any


def evidence_hits(evidence, ranked: list[tuple[str, str, dict]]) -> tuple[list[list[bool]], list[list[bool]]]:
    """(hits, located) for ranked (chunk_id, text, metadata) triples."""
    from evaluation.gold import satisfies

    where = [{k: v for k, v in item.items() if k != "text"} for item in evidence]
    hits = [[satisfies(item, text, meta, cid) for item in evidence] for cid, text, meta in ranked]
    located = [[satisfies(item, text, meta, cid) for item in where] for cid, text, meta in ranked]
    return hits, located


def required(evidence: list[dict[str, Any]]) -> list[int]:
    return [j for j, item in enumerate(evidence) if item.get("required", True)]


def question_metrics(
    hits: list[list[bool]], located: list[list[bool]], evidence: list[dict[str, Any]], ks=(1, 5, 10)
) -> dict[str, Any]:
    """`located` is `hits` with the text condition dropped (for source traceability)."""
    need = required(evidence)
    relevant = [any(row[j] for j in need) for row in hits]
    found = sum(relevant)
    out: dict[str, Any] = {}
    for k in ks:
        top = relevant[:k]
        precisions = [sum(top[: r + 1]) / (r + 1) for r, rel in enumerate(top) if rel]
        out[f"map@{k}"] = sum(precisions) / min(max(found, 1), k)
        out[f"success@{k}"] = float(any(top))
    first = next((r for r, rel in enumerate(relevant) if rel), None)
    out["mrr"] = 0.0 if first is None else 1.0 / (first + 1)
    covered_at = [next((r + 1 for r, row in enumerate(hits) if row[j]), None) for j in need]
    found_by_5 = sum(1 for r in covered_at if r is not None and r <= 5)
    out["evidence_recall@5"] = (found_by_5 / len(need)) if need else 0.0
    out["mean_evidence_rank"] = None if (not need or None in covered_at) else max(covered_at)
    out["bundle_coverage@5"] = float(bool(need) and all(r is not None and r <= 5 for r in covered_at))
    out["source_traceability"] = float(bool(located) and any(located[0][j] for j in need))
    return out


def aggregate(per_question: list[dict[str, Any]]) -> dict[str, Any]:
    """Means over questions; Mean Evidence Rank over the questions whose bundle was found."""
    if not per_question:
        return {}
    keys = [k for k in per_question[0] if k != "mean_evidence_rank"]
    out = {k: round(mean(q[k] for q in per_question), 4) for k in keys}
    ranks = [q["mean_evidence_rank"] for q in per_question if q.get("mean_evidence_rank") is not None]
    out["mean_evidence_rank"] = round(mean(ranks), 2) if ranks else None
    return out
