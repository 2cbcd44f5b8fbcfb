"""Fine-tune the retriever (`ragqa train retriever`): the embedding model itself, trained with
MultipleNegativesRankingLoss on (query, its chunk, its hardest negative) triplets from
training/pairs.py, the other chunks of the batch serving as further negatives.

Why both trainers: a cross-encoder's head starts from nothing and needs many thousands of pairs,
while the embedding model already ranks well and adapts to a corpus from a few hundred generated
questions in minutes on CPU. The tuned model is also the bi-encoder scorer of reranking and
reference matching, whose stored chunk vectors are reused at no cost.

Its cosines move, so the map from cosine to a calibrated score (`center`, `scale` of the
logistic in rag/scoring.py) is refitted by logistic regression on the training pairs and saved
as `ragqa_calibration.json` in the model folder, where the scorer finds it.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from rag.logistic import logistic
from rag.scoring import CALIBRATION_FILE
from rag.settings import Settings
from training.pairs import Recipe, heldout_figures, save_atomically, training_pairs


def fit_calibration(cosines: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """Platt scaling: sigmoid((cosine - center) / scale) fitted to the labels."""
    from sklearn.linear_model import LogisticRegression

    fit = LogisticRegression(C=1e4).fit(cosines.reshape(-1, 1), labels)
    weight, bias = float(fit.coef_[0][0]), float(fit.intercept_[0])
    return {"center": round(-bias / weight, 5), "scale": round(1 / weight, 5)}


def train_retriever(
    settings: Settings, qa: list[dict[str, Any]], out: Path, recipe: Recipe, progress: bool = True
) -> dict[str, Any]:
    """Train, save the embedding model with its calibration to `out` (replaced only once
    training finished) and return what was trained on and the held-out figures before and after."""
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.losses import MultipleNegativesRankingLoss
    from sentence_transformers.training_args import BatchSamplers

    train, heldout = training_pairs(settings, qa, recipe, progress)
    model = SentenceTransformer(str(settings.embedding_path), device="cpu")
    model.max_seq_length = recipe.max_length
    query, passage = settings.embedding.query_prefix, settings.embedding.passage_prefix

    def cosines(pairs) -> np.ndarray:
        encode = {"batch_size": 32, "normalize_embeddings": True, "show_progress_bar": False}
        queries = model.encode([query + q for q, _ in pairs], **encode)
        passages = model.encode([passage + p for _, p in pairs], **encode)
        return np.einsum("ij,ij->i", queries, passages)

    def scorer(calibration: dict[str, float]):
        return lambda pairs: logistic((cosines(pairs) - calibration["center"]) / calibration["scale"])

    untuned = {"center": settings.rerank.cosine_center, "scale": settings.rerank.cosine_scale}
    before = heldout_figures(scorer(untuned), heldout)
    groups: dict[str, dict[str, Any]] = {}
    for row in train:  # rows come positive first, then negatives hardest first
        group = groups.setdefault(row["group"], {"anchor": query + row["query"]})
        key = "positive" if row["label"] else "negative"
        group.setdefault(key, passage + row["passage"])
    triplets = [g for g in groups.values() if "positive" in g and "negative" in g]
    dataset = Dataset.from_dict({k: [t[k] for t in triplets] for k in ("anchor", "positive", "negative")})
    with tempfile.TemporaryDirectory() as scratch:
        args = SentenceTransformerTrainingArguments(
            output_dir=scratch, num_train_epochs=recipe.epochs, per_device_train_batch_size=recipe.batch_size,
            learning_rate=recipe.learning_rate, warmup_steps=0.1, seed=recipe.seed, use_cpu=True,
            batch_sampler=BatchSamplers.NO_DUPLICATES, save_strategy="no", report_to="none",
            logging_steps=10, disable_tqdm=not progress,
        )
        SentenceTransformerTrainer(model=model, args=args, train_dataset=dataset,
                                   loss=MultipleNegativesRankingLoss(model)).train()
    calibration = fit_calibration(
        cosines([(r["query"], r["passage"]) for r in train]), np.array([r["label"] for r in train])
    )
    summary = {
        "model": "bi-encoder", "recipe": recipe.__dict__, "questions": len(qa),
        "train_triplets": len(triplets), "calibration": calibration, "heldout_before": before,
        "heldout_after": heldout_figures(scorer(calibration), heldout),
    }

    def save(path: Path) -> None:
        model.save(str(path))
        (path / CALIBRATION_FILE).write_text(json.dumps(calibration), encoding="utf-8")

    save_atomically(out, save, summary)
    return summary
