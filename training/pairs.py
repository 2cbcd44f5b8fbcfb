"""Training pairs from generated QA, shared by the reranker and the retriever trainers.

Every generated question and every sentence of its answer (the reference matcher scores answer
segments) is a query whose own chunk is the positive. Negatives are the chunks hybrid retrieval
ranks highest for that query among the others (near misses, the cases an untuned scorer gets
wrong) and one chunk drawn at random (an unrelated sentence must score low, so the matcher can
mark it unsupported). The questions of every `holdout`-th chunk (document order) are kept out of
training and give held-out figures.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llama_index.core.llms import MockLLM
from llama_index.core.schema import MetadataMode
from tqdm import tqdm

from rag.models import build_embedding
from rag.files import replaced_folder
from rag.text import split_sentences
from rag.retrieval import hybrid_retriever
from rag.settings import Settings
from rag.store import all_nodes


@dataclass
class Recipe:
    """The knobs of `ragqa train reranker|retriever`; saved beside the model."""

    epochs: int = 2
    batch_size: int = 16
    learning_rate: float = 5e-5
    hard_negatives: int = 3
    random_negatives: int = 1
    layers: int = 6  # reranker only
    max_length: int = 256  # tokens per pair (reranker) or per text (retriever)
    holdout: int = 10  # every holdout-th chunk's questions are held out; 0: none
    seed: int = 13


def queries(item: dict[str, Any]) -> list[str]:
    """The question, each sentence of the answer, and the whole answer when it has several."""
    sentences = split_sentences(item.get("answer") or "")
    return [item["question"], *sentences, *([" ".join(sentences)] if len(sentences) > 1 else [])]


def source_chunk(item: dict[str, Any]) -> str | None:
    """The chunk a generated or mined question was written from (its first evidence chunk id)."""
    return next((e.get("chunk_id") for e in item.get("evidence", []) if e.get("chunk_id")), None)


def training_pairs(
    settings: Settings, qa: list[dict[str, Any]], recipe: Recipe, progress: bool = True
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(train, held-out) rows of {"query", "passage", "label", "group"}; a group is one query
    with its positive and negatives."""
    nodes = {n.node_id: n for n in all_nodes(settings)}
    text = {i: n.get_content(metadata_mode=MetadataMode.EMBED) for i, n in nodes.items()}
    order = sorted(nodes, key=lambda i: (nodes[i].metadata.get("doc", ""), i))
    held = set(order[recipe.holdout - 1 :: recipe.holdout]) if recipe.holdout else set()
    retriever = hybrid_retriever(
        settings, build_embedding(settings), MockLLM(), similarity_top_k=recipe.hard_negatives + 4
    )
    rng = random.Random(recipe.seed)
    train, heldout, missing = [], [], 0
    for item in tqdm(qa, desc="hard negatives", unit="question", disable=not progress):
        chunk_id = source_chunk(item)
        if chunk_id not in nodes:
            missing += 1
            continue
        for query in queries(item):
            group = f"{item['id']}:{query[:40]}"
            others = [
                n.node.node_id for n in retriever.retrieve(query)
                if n.node.node_id != chunk_id and text.get(n.node.node_id) != text[chunk_id]
            ][: recipe.hard_negatives]
            pool = [i for i in order if i != chunk_id and i not in others and text[i] != text[chunk_id]]
            others += rng.sample(pool, min(recipe.random_negatives, len(pool)))
            rows = [{"query": query, "passage": text[chunk_id], "label": 1.0, "group": group}]
            rows += [{"query": query, "passage": text[i], "label": 0.0, "group": group} for i in others]
            (heldout if chunk_id in held else train).extend(rows)
    if missing == len(qa):
        raise ValueError("no QA item names a chunk of this store: "
                         "generate the QA against it (ragqa qa generate)")
    return train, heldout


def heldout_figures(score: Callable[[list[tuple[str, str]]], Sequence[float]],
                    rows: list[dict[str, Any]]) -> dict[str, float]:
    """Accuracy at 0.5, mean positive/negative score and MRR of the positive within its group."""
    if not rows:
        return {}
    scores = score([(r["query"], r["passage"]) for r in rows])
    groups: dict[str, list[tuple[float, float]]] = {}
    for row, value in zip(rows, scores):
        groups.setdefault(row["group"], []).append((float(value), row["label"]))
    ranks = []
    for group in groups.values():
        positive = next(s for s, label in group if label)
        above = sum(s > positive for s, label in group if not label)
        tied = sum(s == positive for s, label in group if not label)
        ranks.append(1 + above + tied / 2)  # ties share the ranks they span
    positives = [float(s) for s, r in zip(scores, rows) if r["label"]]
    negatives = [float(s) for s, r in zip(scores, rows) if not r["label"]]
    correct = sum((s >= 0.5) == bool(r["label"]) for s, r in zip(scores, rows))
    return {
        "pairs": len(rows),
        "accuracy@0.5": round(correct / len(rows), 4),
        "mean_positive": round(sum(positives) / len(positives), 4),
        "mean_negative": round(sum(negatives) / max(len(negatives), 1), 4),
        "mrr": round(sum(1 / r for r in ranks) / max(len(ranks), 1), 4),
    }


def save_atomically(out: Path, save: Callable[[Path], None], summary: dict[str, Any]) -> None:
    """Write the model beside `out` and swap it in, so a failed run leaves the old one."""
    with replaced_folder(out) as partial:
        save(partial)
        (partial / "ragqa_training.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
