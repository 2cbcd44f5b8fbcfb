"""Fit the default learned ranker (rag/ranker.json) on tuning corpora; report every corpus.

    .venv/bin/python benchmarks/fit_ranker.py [--tune sample,debian_faq_en_html] [--write]
        [--out FILE]

Each corpus's questions are retrieved as the pipeline does (hybrid, top 20) and their candidates'
features labelled by the QA file's gold evidence (evaluation.metrics, as `ragqa eval retrieval`
scores). The ranker is fitted on the tuning corpora's questions only; the others are held out,
never looked at while choosing features or settings. Prints MAP@1/MRR within the candidates for
hybrid order, the ranker in use (rag/ranker.json or rerank.ranker_file) and the new fit, and
with --write saves the new fit as the default.
"""

from __future__ import annotations


import numpy as np

from common import arguments, write_json
from corpora import corpora, indexed
from evaluation.gold import load_qa
from evaluation.metrics import evidence_hits, required
from evaluation.retrieval import ranked
from rag.ranking import DEFAULT_RANKER, FEATURES, LinearRanker, fit_ranker
from training.ranker import candidate_features, ranking_figures


def examples(corpus) -> list[tuple[np.ndarray, np.ndarray]]:
    settings = indexed(corpus)
    qa = [q for q in load_qa(corpus.qa) if q.get("answerable", True) and q.get("evidence")]
    found = candidate_features(settings, [q["question"] for q in qa], 20, progress=False)
    out = []
    for item, (nodes, rows) in zip(qa, found):
        hits, _ = evidence_hits(item["evidence"], ranked(nodes))
        need = required(item["evidence"])  # relevant as the metrics count it
        out.append((rows, np.array([any(h[j] for j in need) for h in hits], dtype=float)))
    return out


def main() -> None:
    parser = arguments("fit-ranker")
    parser.add_argument("--tune", default="sample,debian_faq_en_html", help="Corpora to fit on.")
    parser.add_argument("--strength", type=float, default=1.0)
    parser.add_argument("--write", action="store_true", help=f"Save the fit as {DEFAULT_RANKER}.")
    args = parser.parse_args()
    tune = args.tune.split(",")
    data = {c.name: examples(c) for c in corpora()}
    ranker = fit_ranker(
        [e for name in tune for e in data[name]], args.strength,
        source=f"benchmarks/fit_ranker.py on {' + '.join(tune)} (gold QA)",
    )
    try:
        current = LinearRanker.load(DEFAULT_RANKER)
    except ValueError as error:  # features changed since it was written
        print(error)
        current = None
    results = {}
    print(f"{'corpus':22}{'role':>8}{'hybrid':>16}{'in use':>16}{'new fit':>16}   (MAP@1 / MRR)")
    for name, rows in data.items():
        figures = {"hybrid": ranking_figures(rows, None), "new": ranking_figures(rows, ranker)}
        unknown = {"map@1": float("nan"), "mrr": float("nan")}
        figures["in_use"] = ranking_figures(rows, current) if current else unknown
        results[name] = figures | {"role": "tune" if name in tune else "held out"}
        print(f"{name:22}{results[name]['role']:>8}" + "".join(
            f"{figures[k]['map@1']:>9.3f} / {figures[k]['mrr']:.3f}" for k in ("hybrid", "in_use", "new")))
    print("weights", dict(zip(FEATURES, ranker.weights)), "bias", ranker.bias)
    if args.write:
        ranker.save(DEFAULT_RANKER)
        print("wrote", DEFAULT_RANKER)
    write_json(args.out, {"tune": tune, "weights": ranker.weights, "bias": ranker.bias, "corpora": results})


if __name__ == "__main__":
    main()
