"""Fine-tune the reranker (`ragqa train reranker`), the paper's way: a sentence-transformers
CrossEncoder initialised from the embedding model's encoder, trained on QA generated from the
corpus (training/qa_generation.py) with hard negatives.

The one model both reranks chunks for a question and decides which chunk supports each segment
of an answer, so it learns both: every generated question and every sentence of its answer (the
matcher scores answer segments) is a query whose own chunk is the positive. Negatives are the
chunks hybrid retrieval ranks highest for that query among the others (near misses, the cases
the bi-encoder gets wrong) and one chunk drawn at random (an unrelated sentence must score low,
so the matcher can mark it unsupported). The chunks of every `holdout`-th document-ordered chunk
are kept out of training and give held-out figures.

`layers` keeps only the encoder's first layers: the matcher scores about 100 pairs per answer
on CPU, and half of multilingual-e5-small's 12 layers halves that time.
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from llama_index.core.llms import MockLLM
from llama_index.core.schema import MetadataMode
from tqdm import tqdm

from rag.models import build_embedding
from rag.references import split_sentences
from rag.retrieval import hybrid_retriever
from rag.settings import Settings
from rag.store import all_nodes


@dataclass
class RerankerRecipe:
    """The knobs of `ragqa train reranker`; saved beside the model."""

    epochs: int = 2
    batch_size: int = 16
    learning_rate: float = 5e-5
    hard_negatives: int = 3
    random_negatives: int = 1
    layers: int = 6
    max_length: int = 256
    holdout: int = 10  # every holdout-th chunk's questions are held out; 0: none
    seed: int = 13


def queries(item: dict[str, Any]) -> list[str]:
    """The question, each sentence of the answer, and the whole answer when it has several."""
    sentences = split_sentences(item.get("answer") or "")
    return [item["question"], *sentences, *([" ".join(sentences)] if len(sentences) > 1 else [])]


def training_pairs(
    settings: Settings, qa: list[dict[str, Any]], recipe: RerankerRecipe, progress: bool = True
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(train, held-out) rows of {"query", "passage", "label", "group"}; a group is one query
    with its positive and negatives."""
    nodes = {n.node_id: n for n in all_nodes(settings)}
    text = {i: n.get_content(metadata_mode=MetadataMode.EMBED) for i, n in nodes.items()}
    order = sorted(nodes, key=lambda i: (nodes[i].metadata.get("doc", ""), i))
    held = set(order[recipe.holdout - 1 :: recipe.holdout]) if recipe.holdout else set()
    retriever = hybrid_retriever(
        settings, build_embedding(settings), MockLLM(), top_n=recipe.hard_negatives + 4
    )
    rng = random.Random(recipe.seed)
    train, heldout, missing = [], [], 0
    for item in tqdm(qa, desc="hard negatives", unit="question", disable=not progress):
        chunk_id = next((e.get("chunk_id") for e in item.get("evidence", []) if e.get("chunk_id")), None)
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
        raise ValueError("no QA item names a chunk of this store: generate the QA against it (ragqa qa generate)")
    return train, heldout


def heldout_figures(model, rows: list[dict[str, Any]]) -> dict[str, float]:
    """Accuracy at 0.5, mean positive/negative score and MRR of the positive within its group."""
    if not rows:
        return {}
    scores = model.predict([(r["query"], r["passage"]) for r in rows], batch_size=32, show_progress_bar=False)
    groups: dict[str, list[tuple[float, float]]] = {}
    for row, score in zip(rows, scores):
        groups.setdefault(row["group"], []).append((float(score), row["label"]))
    ranks = []
    for group in groups.values():
        positive = next(s for s, label in group if label)
        above = sum(s > positive for s, label in group if not label)
        tied = sum(s == positive for s, label in group if not label)
        ranks.append(1 + above + tied / 2)  # ties share the ranks they span
    positives = [float(s) for s, r in zip(scores, rows) if r["label"]]
    negatives = [float(s) for s, r in zip(scores, rows) if not r["label"]]
    return {
        "pairs": len(rows),
        "accuracy@0.5": round(sum((s >= 0.5) == bool(r["label"]) for s, r in zip(scores, rows)) / len(rows), 4),
        "mean_positive": round(sum(positives) / len(positives), 4),
        "mean_negative": round(sum(negatives) / max(len(negatives), 1), 4),
        "mrr": round(sum(1 / r for r in ranks) / max(len(ranks), 1), 4),
    }


def initial_model(settings: Settings, recipe: RerankerRecipe):
    """A CrossEncoder over the embedding model's first `recipe.layers` layers, fresh head."""
    from sentence_transformers.cross_encoder import CrossEncoder

    model = CrossEncoder(str(settings.embedding_path), num_labels=1, max_length=recipe.max_length, device="cpu")
    base = model[0].model.base_model
    if 0 < recipe.layers < len(base.encoder.layer):
        base.encoder.layer = base.encoder.layer[: recipe.layers]
        model[0].model.config.num_hidden_layers = recipe.layers
    pooler = getattr(base, "pooler", None)
    if pooler is not None and not pooler.dense.weight.any():
        # e5 pools by mean and ships no pooler, so it loads as zeros: a zero pooler passes no
        # gradient and training stalls at the label prior. Identity starts from tanh(CLS).
        with torch.no_grad():
            pooler.dense.weight.copy_(torch.eye(pooler.dense.weight.shape[0]))
            pooler.dense.bias.zero_()
    return model


def train_reranker(
    settings: Settings, qa: list[dict[str, Any]], out: Path, recipe: RerankerRecipe, progress: bool = True
) -> dict[str, Any]:
    """Train, save the CrossEncoder to `out` (replaced only once training finished) and return
    what was trained on and the held-out figures before and after."""
    from datasets import Dataset
    from sentence_transformers.cross_encoder import CrossEncoderTrainer, CrossEncoderTrainingArguments
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

    train, heldout = training_pairs(settings, qa, recipe, progress)
    model = initial_model(settings, recipe)
    before = heldout_figures(model, heldout)
    dataset = Dataset.from_dict({k: [r[k] for r in train] for k in ("query", "passage", "label")})
    with tempfile.TemporaryDirectory() as scratch:
        args = CrossEncoderTrainingArguments(
            output_dir=scratch, num_train_epochs=recipe.epochs, per_device_train_batch_size=recipe.batch_size,
            learning_rate=recipe.learning_rate, warmup_steps=0.1, seed=recipe.seed, use_cpu=True,
            save_strategy="no", report_to="none", logging_steps=20, disable_tqdm=not progress,
        )
        CrossEncoderTrainer(model=model, args=args, train_dataset=dataset,
                            loss=BinaryCrossEntropyLoss(model)).train()
    summary = {
        "recipe": recipe.__dict__, "questions": len(qa), "train_pairs": len(train),
        "heldout_before": before, "heldout_after": heldout_figures(model, heldout),
    }
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    model.save_pretrained(str(partial))
    (partial / "ragqa_training.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    shutil.rmtree(out, ignore_errors=True)
    partial.replace(out)
    return summary


def reranker_dir(settings: Settings) -> Path:
    return settings.models_dir / "reranker"

