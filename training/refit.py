"""The ranker refit after an ingest (`ragqa ingest`): the learned ranker fitted to the store's own
corpus, adopted only where it ranks better there.

When the ingest changed at least `[rerank] refit_min_change` of the documents since the last
refit (every one, for a new store), questions are mined from the corpus (training/mining.py, no
LLM) and each one's hybrid candidates labelled (training/ranker.py). Four rankings of them are
compared by S@1 (the question's chunk first), then MRR: the configured weights (`ranker_file`,
"shipped"), the refit (each question scored by a fit without its chunk's questions: k-fold by
chunk, so every question counts as held out), and dense or BM25 order alone. The configured
weights stay unless another beats them by `refit_margin`; the best of those that do is adopted
(a refit is fitted on all the questions; dense or BM25 order is a one-feature ranker), so the
rerank stage ranks no worse than either channel on the corpus's own questions. The choice and
every figure go to the store's `refit_file`, which the rerank stage reads (rag/ranking.py,
`ranker_in_use`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from rag.files import write_text_atomically
from rag.ranking import CHOICES, FEATURES, ORDER_FEATURE, LinearRanker, fit_ranker
from rag.settings import Settings
from rag.store import Store
from training.mining import mine_questions
from training.ranker import RankerRecipe, labelled, ranking_figures

FOLDS = 5  # the refit's held-out figures: each fifth of the chunks scored by a fit on the rest


@dataclass
class RankerRefit:
    enabled: bool
    min_change: float  # share of documents added, changed or removed since the last refit
    margin: float  # S@1 a ranking must beat the configured weights by, on the held-out questions
    questions: int  # mined questions at most: each costs a retrieval and its features

    @classmethod
    def from_settings(cls, settings: Settings) -> RankerRefit:
        r = settings.rerank
        return cls(r.refit and r.method == "ltr", r.refit_min_change, r.refit_margin, r.refit_questions)

    def change(self, store: Store) -> float:
        """The share of documents added, changed or removed since the last refit (1 without one)."""
        now = store.hashes()
        try:
            then = json.loads(store.refit_file.read_text(encoding="utf-8"))["documents"]
        except (OSError, ValueError, KeyError):
            return 1.0
        ids = now.keys() | then.keys()
        return sum(now.get(i) != then.get(i) for i in ids) / len(ids) if ids else 0.0

    def after_ingest(self, settings: Settings, progress: bool = True) -> str | None:
        """Refit when due; one line saying what the rerank stage now uses, or None when not due."""
        store = Store(settings)
        if not self.enabled or not store.hashes():
            return None
        change = self.change(store)
        if change < self.min_change:
            return None
        try:
            record = self.refit(settings, store, progress)
        except ValueError as error:  # too few questions or chunks to learn from
            return f"ranker refit skipped: {error}"
        return describe(record)

    def refit(self, settings: Settings, store: Store, progress: bool = True) -> dict[str, Any]:
        """Mine, fit, compare, and write the choice with its figures to the store."""
        start, documents = time.monotonic(), store.hashes()
        recipe = RankerRecipe(holdout=0, max_questions=self.questions)
        examples = [(chunk, rows, labels) for _, chunk, rows, labels
                    in labelled(settings, mine_questions(settings), recipe, progress, desc="ranker refit")]
        pairs = [(rows, labels) for _, rows, labels in examples]
        shipped = LinearRanker.load(settings.rerank.ranker_file)
        heldout = {
            "shipped": ranking_figures(pairs, shipped),
            "refit": ranking_figures(*cross_validated(examples, recipe.strength)),
            "dense": ranking_figures(pairs, order(ORDER_FEATURE["dense"])),
            "bm25": ranking_figures(pairs, order(ORDER_FEATURE["bm25"])),
            "hybrid": ranking_figures(pairs, None),
        }
        choice = choose(heldout, self.margin)
        source = f"{len(pairs)} mined questions of this corpus"
        ranker = None
        if choice == "refit":
            ranker = fit_ranker(pairs, recipe.strength, source=f"refit on {source}")
        elif choice != "shipped":
            ranker = fit_ranker(pairs, only=ORDER_FEATURE[choice],
                                source=f"{choice} order, calibrated on {source}")
        record = {
            "choice": choice, "questions": len(pairs), "margin": self.margin, "heldout": heldout,
            "seconds": round(time.monotonic() - start, 1), "documents": documents,
        }
        weights = ranker.to_dict() | {"source": ranker.source} if ranker else {"source": ""}
        write_text_atomically(store.refit_file, json.dumps(weights | record, indent=1) + "\n")
        return record


def order(feature: str):
    """Scores that rank candidates by one feature alone (ties keep retrieval's order)."""
    column = FEATURES.index(feature)
    return lambda rows: rows[:, column]


def cross_validated(examples: list[tuple[str, np.ndarray, np.ndarray]], strength: float):
    """(pairs, score) for ranking_figures: each question's candidates scored by a ranker fitted
    without its chunk's fold, so the refit is judged only on questions it did not see."""
    chunks = sorted({chunk for chunk, _, _ in examples})
    fold = {chunk: i % FOLDS for i, chunk in enumerate(chunks)}
    rankers = [fit_ranker([(r, y) for c, r, y in examples if fold[c] != k], strength) for k in range(FOLDS)]
    return [(rankers[fold[c]](rows)[:, None], y) for c, rows, y in examples], lambda scores: scores[:, 0]


def choose(heldout: dict[str, dict], margin: float) -> str:
    """The configured weights unless a ranking beats their S@1 by `margin`; then the best of
    those (S@1, then MRR; the refit first on a tie, as it holds either channel's order)."""
    def key(name: str) -> tuple[float, float]:
        return heldout[name]["map@1"] or 0.0, heldout[name]["mrr"] or 0.0

    bar = key("shipped")[0] + margin
    better = [name for name in CHOICES[1:] if key(name)[0] >= bar and key(name)[0] > key("shipped")[0]]
    return max(better, key=key) if better else "shipped"


def describe(record: dict[str, Any]) -> str:
    """One line: the choice and the held-out S@1 it was made on."""
    figures = ", ".join(f"{name} {record['heldout'][name]['map@1']:.3f}" for name in (*CHOICES, "hybrid"))
    return (f"ranker: {record['choice']} (held-out S@1 of {record['questions']} mined questions: "
            f"{figures})")
