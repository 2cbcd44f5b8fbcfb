"""Fine-tune the reranker (`ragqa train reranker`), the paper's way: a sentence-transformers
CrossEncoder initialised from the embedding model's encoder and trained with binary
cross-entropy on the pairs of training/pairs.py. Its sigmoid output is the calibrated score.

`layers` keeps only the encoder's first layers: the matcher scores about 100 pairs per answer
on CPU, and half of multilingual-e5-small's 12 layers halves that time.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import torch

from rag.settings import Settings
from training.pairs import Recipe, heldout_figures, save_atomically, training_pairs


def initial_model(settings: Settings, recipe: Recipe):
    """A CrossEncoder over the embedding model's first `recipe.layers` layers, fresh head."""
    from sentence_transformers.cross_encoder import CrossEncoder

    model = CrossEncoder(str(settings.embedding_path), num_labels=1, max_length=recipe.max_length,
                         device="cpu")
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
    settings: Settings, qa: list[dict[str, Any]], out: Path, recipe: Recipe, progress: bool = True
) -> dict[str, Any]:
    """Train, save the CrossEncoder to `out` (replaced only once training finished) and return
    what was trained on and the held-out figures before and after."""
    from datasets import Dataset
    from sentence_transformers.cross_encoder import CrossEncoderTrainer, CrossEncoderTrainingArguments
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

    train, heldout = training_pairs(settings, qa, recipe, progress)
    model = initial_model(settings, recipe)

    def score(pairs):
        return model.predict(pairs, batch_size=32, show_progress_bar=False)

    before = heldout_figures(score, heldout)
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
        "model": "cross-encoder", "recipe": recipe.__dict__, "questions": len(qa), "train_pairs": len(train),
        "heldout_before": before, "heldout_after": heldout_figures(score, heldout),
    }
    save_atomically(out, lambda path: model.save_pretrained(str(path)), summary)
    return summary
