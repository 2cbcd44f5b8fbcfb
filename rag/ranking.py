"""The rerank stage's model: learning to rank over cheap features of each retrieved chunk.

Dense retrieval wins on paraphrased questions and BM25 on questions that share a document's
wording; reciprocal-rank fusion averages their ranks and so loses to the better channel. A linear
model over the channels' own scores (a convex fusion of scores, which keeps how sure each channel
is) plus the question's wording found in the chunk beats both channels and their fusion, costs
little beside embedding the question, and is fitted in seconds (docs/BENCHMARKS.md, "Learned
ranker and learned support model").

Features of a chunk for a question, all known after retrieval without another model:
- `cosine`: the e5 cosine of question and chunk (the store's vector);
- `cosine_gap`, `cosine_scaled`, `dense_rank`: where that cosine stands among the candidates
  (less the best; min-max scaled; 1 / (1 + rank));
- `bm25`, `bm25_rank`: the chunk's BM25 score over the best candidate's, and 1 / (1 + its rank)
  (both 0 when the chunk holds no query word);
- `trigrams`: the share of the question's character trigrams the chunk contains (Korean
  particles and English inflections change word endings, not most trigrams);
- `numbers`: the share of the question's numbers the chunk contains (0 when it has none);
- `header`: 1 when a header field value of the chunk (its test name, title...) is in the question.

The default weights (rag/ranker.json) were fitted by benchmarks/fit_ranker.py; `ragqa train
reranker` refits them to a fork's corpus from mined or generated questions and reports held-out
figures before and after. `ragqa ingest` refits them on the store's own mined questions
(training/refit.py) and records its choice in the store; `ranker_in_use` reads it back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag.files import write_text_atomically
from rag.logistic import Logistic, fit_standardised
from rag.text import NUMBER, trigrams

FEATURES = (
    "cosine", "cosine_gap", "cosine_scaled", "dense_rank", "bm25", "bm25_rank", "trigrams", "numbers",
    "header",
)
DEFAULT_RANKER = Path(__file__).with_name("ranker.json")
# What an ingest's refit may adopt in place of the configured weights: its own fit, or dense or
# BM25 order alone (a one-feature ranker) where no ranker beats them on the corpus.
CHOICES = ("shipped", "refit", "dense", "bm25")
ORDER_FEATURE = {"dense": "cosine", "bm25": "bm25"}


def _rank_weight(scores: np.ndarray) -> np.ndarray:
    """1 / (1 + rank) of each score among the candidates (best: 1)."""
    ranks = np.argsort(np.argsort(-scores, kind="stable"), kind="stable")
    return 1.0 / (1.0 + ranks)


def features(
    query: str, texts: Sequence[str], cosines: Sequence[float], bm25: Sequence[float],
    headers: Sequence[Sequence[str]],
) -> np.ndarray:
    """One row of FEATURES per candidate chunk (texts as embedded, header prefix included)."""
    cosines, bm25 = np.asarray(cosines, dtype=np.float64), np.asarray(bm25, dtype=np.float64)
    if not len(cosines):
        return np.zeros((0, len(FEATURES)))
    grams, numbers = trigrams(query), set(NUMBER.findall(query))
    lowered = query.lower()
    spread = cosines.max() - cosines.min()
    top_bm25 = bm25.max()
    columns = [
        cosines,
        cosines - cosines.max(),
        (cosines - cosines.min()) / spread if spread > 0 else np.ones_like(cosines),
        _rank_weight(cosines),
        bm25 / top_bm25 if top_bm25 > 0 else np.zeros_like(bm25),
        _rank_weight(bm25) * (bm25 > 0),
        [len(grams & trigrams(t)) / len(grams) if grams else 0.0 for t in texts],
        [len(numbers & set(NUMBER.findall(t))) / len(numbers) if numbers else 0.0 for t in texts],
        [float(any(len(v) >= 4 and v.lower() in lowered for v in values)) for values in headers],
    ]
    return np.column_stack([np.asarray(c, dtype=np.float64) for c in columns])


@dataclass
class LinearRanker(Logistic):
    """P(relevant) of a candidate from its FEATURES row."""

    features: tuple[str, ...] = FEATURES
    source: str = ""  # what it was fitted on

    @classmethod
    def load(cls, path: Path) -> LinearRanker:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise ValueError(f"ranker {path}: cannot read it ({error})") from None
        model = Logistic.from_dict(data, FEATURES, f"ranker {path}")
        return cls(model.weights, model.bias, source=data.get("source", ""))

    def save(self, path: Path, training: dict | None = None) -> None:
        data = self.to_dict() | {"source": self.source} | ({"training": training} if training else {})
        write_text_atomically(path, json.dumps(data, indent=1) + "\n")


def ranker_in_use(ranker_file: Path, refit_file: Path, refit: bool) -> tuple[LinearRanker, dict]:
    """The ranker the rerank stage uses and what it is: the weights an ingest's refit adopted for
    this store (`refit_file`, when `refit` is on and it adopted any), else `ranker_file`'s. The
    record: choice (CHOICES), source, and the held-out figures the choice was made on."""
    record = {"choice": "shipped", "source": str(ranker_file), "heldout": {}}
    if refit and refit_file.is_file():
        try:
            data = json.loads(refit_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise ValueError(f"ranker refit {refit_file}: cannot read it ({error})") from None
        record |= {"choice": data["choice"], "heldout": data["heldout"], "questions": data["questions"]}
        if data["choice"] != "shipped":
            record["source"] = f"{refit_file} ({data['source']})"
            return LinearRanker.load(refit_file), record
    return LinearRanker.load(ranker_file), record


def fit_ranker(
    examples: Sequence[tuple[np.ndarray, np.ndarray]], strength: float = 1.0,
    weights: Sequence[float] | None = None, source: str = "", only: str | None = None,
) -> LinearRanker:
    """Fit on each question's candidates (features, 0/1 labels), question i weighted by
    `weights[i]`, on every feature or `only` that one (its order, calibrated), in two steps:

    1. the ranking: a listwise softmax loss (each question's probability mass should sit on its
       relevant candidates), which ranks better than a pointwise fit because only the order within
       a question matters; L2 on standardised features, `strength` its inverse;
    2. the calibration: a logistic over that score (Platt scaling), so the score shown with each
       source is P(relevant); monotone, so the order of step 1 is kept.
    """
    from sklearn.linear_model import LogisticRegression

    weights = list(weights or [1.0] * len(examples))
    keep = np.array([only in (None, name) for name in FEATURES], float)
    usable = [(x * keep, y, w) for (x, y), w in zip(examples, weights) if len(y) and y.max() > 0]
    if not usable or all(y.min() == y.max() for _, y, _ in usable):
        raise ValueError("no training question has both relevant and irrelevant candidates: nothing to learn")
    labels = np.concatenate([y for _, y, _ in usable])
    sample = np.concatenate([np.full(len(y), wt) for _, y, wt in usable])

    def fit(standardised: np.ndarray) -> tuple[np.ndarray, float]:
        w = _listwise(usable, standardised, strength)
        platt = LogisticRegression(C=100.0).fit((standardised @ w)[:, None], labels, sample_weight=sample)
        return float(platt.coef_[0][0]) * w, float(platt.intercept_[0])

    model = fit_standardised(np.vstack([x for x, _, _ in usable]), fit, FEATURES)
    return LinearRanker(model.weights, model.bias, source=source)


def _listwise(usable: Sequence[tuple[np.ndarray, np.ndarray, float]], standardised: np.ndarray,
              strength: float) -> np.ndarray:
    """The weights minimising the weighted listwise softmax loss plus L2, over the questions'
    standardised candidate rows (stacked in question order)."""
    from scipy.optimize import minimize

    size = max(len(y) for _, y, _ in usable)
    # Pad every question to `size` candidates; padding gets -inf scores through the mask.
    z = np.zeros((len(usable), size, len(FEATURES)))
    target = np.zeros((len(usable), size))
    mask = np.zeros((len(usable), size), dtype=bool)
    starts = np.cumsum([0] + [len(y) for _, y, _ in usable])
    for i, (_, y, _) in enumerate(usable):
        z[i, : len(y)] = standardised[starts[i] : starts[i + 1]]
        target[i, : len(y)], mask[i, : len(y)] = y / y.sum(), True
    weight = np.array([w for _, _, w in usable])

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        s = np.where(mask, z @ w, -np.inf)
        s = s - s.max(axis=1, keepdims=True)
        log_p = s - np.log(np.exp(s).sum(axis=1, keepdims=True))
        p = np.exp(log_p)
        value = -(weight * np.where(mask, target * log_p, 0.0).sum(axis=1)).sum() + (w @ w) / (2 * strength)
        grad = np.einsum("q,qnd,qn->d", weight, z, p - target) + w / strength
        return value, grad

    return minimize(loss, np.zeros(len(FEATURES)), jac=True, method="L-BFGS-B").x
