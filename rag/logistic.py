"""Logistic models over rows of features: the learned ranker's (rag/ranking.py) and the support
model's (rag/support.py), and their fit on standardised features."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


def logistic(x):
    """1 / (1 + e^-x): the calibrated scores, the ranker's and the support model's output."""
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=float)))


@dataclass
class Logistic:
    """sigmoid(weights . features + bias), weights in `features` order."""

    weights: list[float]
    bias: float
    features: tuple[str, ...] = ()

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        return logistic(rows @ np.asarray(self.weights) + self.bias)

    def to_dict(self) -> dict:
        return {"features": list(self.features), "weights": self.weights, "bias": self.bias}

    @classmethod
    def from_dict(cls, data: dict, expected: tuple[str, ...], what: str) -> Logistic:
        """The model `data` holds, when it was fitted on the `expected` features."""
        if tuple(data.get("features") or ()) != expected:
            found = data.get("features")
            raise ValueError(f"{what}: its features {found} are not {list(expected)}: retrain it")
        return cls([float(w) for w in data["weights"]], float(data["bias"]), expected)


def fit_standardised(
    rows: np.ndarray, fit: Callable[[np.ndarray], tuple[np.ndarray, float]], features: tuple[str, ...] = ()
) -> Logistic:
    """`fit` (standardised rows -> weights and intercept in their units) run on `rows`
    standardised, the model given back in raw feature units (rounded), so its JSON needs no scaler."""
    mean, scale = rows.mean(axis=0), rows.std(axis=0) + 1e-9
    weights, intercept = fit((rows - mean) / scale)
    raw = weights / scale
    bias = intercept - float((weights * mean / scale).sum())
    return Logistic([round(float(w), 6) for w in raw], round(float(bias), 6), features)
