"""Fit the reference matcher's learned support model (rag/support.json); report every set.

    .venv/bin/python benchmarks/fit_support.py [--same-weight 2] [--cross-weight 3] [--write]

Annotated answers (reference gold, built as benchmarks/reference_precision.py builds them):
- tuning: the sample corpus's copied and generated sets (data/sample/reference_gold*.jsonl) and
  English answers against Korean chunks of devbench's Debian FAQ;
- held out (never fitted on): the Debian FAQ (English HTML) copied and generated sets, and
  Korean answers against English chunks.
The generated sets' gold is annotated (benchmarks/data/support_annotations.jsonl).
Each single sentence and each of its chunks is a pair, labelled by the gold. The same-script
model is fitted on the same-script pairs, the cross-script model on the others; the positive
weights set the operating point at the matcher's threshold 0.5. Prints precision / coverage at
0.5 per set (the matcher as `ragqa eval references` runs it) and with --write saves the model.
"""

from __future__ import annotations

import re

import numpy as np
from llama_index.core.schema import MetadataMode

from common import arguments, write_json
from corpora import corpora, indexed
from evaluation.gold import load_qa
from evaluation.references import evaluate_references, load_gold
from rag.models import build_embedding
from rag.scoring import bi_encoder
from rag.settings import REPO_ROOT, load_settings
from rag.text import split_sentences
from rag.store import all_nodes
from rag.support import CROSS, DEFAULT_SUPPORT, SAME, LearnedSupport, SupportModel, fit_centres, fit_logistic
from reference_precision import ANNOTATIONS, build_crosslingual_gold, build_generated_gold, build_gold

TUNE = ("sample_copied", "sample_generated", "english_answers_korean_chunks")
CENTRED = ("sample", "debian_faq_en_html", "debian_faq_ko_html")


def gold_sets() -> dict[str, list[dict]]:
    sets = {
        "sample_copied": load_gold(REPO_ROOT / "data/sample/reference_gold.jsonl"),
        "sample_generated": load_gold(REPO_ROOT / "data/sample/reference_gold_generated.jsonl"),
    }
    found = {c.name: c for c in corpora(["debian_faq_en_html", "debian_faq_ko_html"])}
    if len(found) == 2:
        en, ko = found["debian_faq_en_html"], found["debian_faq_ko_html"]
        sets["english_answers_korean_chunks"] = build_crosslingual_gold(
            indexed(ko), load_qa(ko.qa), load_qa(en.qa))
        sets["debian_copied"] = build_gold(
            indexed(en), [q for q in load_qa(en.qa) if q.get("answerable", True)])
        sets["debian_generated"] = build_generated_gold(indexed(en), load_qa(ANNOTATIONS.with_name(
            "generated_qa-debian_faq_en_html.jsonl")))
        sets["korean_answers_english_chunks"] = build_crosslingual_gold(
            indexed(en), load_qa(en.qa), load_qa(ko.qa))
    return sets


def corpus_sentences() -> list[str]:
    """Unlabelled sentences of the corpora the language centres are taken from."""
    return [s for corpus in corpora(list(CENTRED)) for node in all_nodes(indexed(corpus))
            for s in split_sentences(node.get_content(metadata_mode=MetadataMode.NONE)) if len(s) >= 20]


def changed_numbers(sentence: str) -> str:
    """The sentence with each number changed (7 -> 8, 142 -> 153): a wrong figure."""
    return re.sub(r"\d+", lambda m: str(int(m.group()) + 1 + int(m.group()) // 13), sentence)


def labelled(support: LearnedSupport, items: list[dict]):
    """Features and labels of each sentence with each chunk; a supported sentence that has
    numbers also comes with its figures changed, unsupported (annotated answers rarely get a
    figure wrong, and the model must learn that it decides)."""
    pairs, labels = [], []
    for item in items:
        for sentence, gold in zip(item["answer_sentences"], item["gold"]):
            for k, chunk in enumerate(item["chunks"]):
                pairs.append((sentence, chunk["text"]))
                labels.append(float(k in gold))
                if k in gold and re.search(r"\d", sentence):
                    pairs.append((changed_numbers(sentence), chunk["text"]))
                    labels.append(0.0)
    same, cross, across = support.features(pairs)
    return same, cross, across, np.array(labels)


def main() -> None:
    parser = arguments("fit-support")
    parser.add_argument("--same-weight", type=float, default=1.0, help="Positive class weight, same script.")
    parser.add_argument("--cross-weight", type=float, default=5.0,
                        help="Positive class weight, across scripts.")
    parser.add_argument("--write", action="store_true", help=f"Save the fit as {DEFAULT_SUPPORT}.")
    args = parser.parse_args()
    settings = load_settings()
    encoder = bi_encoder(settings, build_embedding(settings))
    encoder._cache_size = 200_000  # every pair of every set is embedded once
    sets = gold_sets()
    model = SupportModel(None, None, fit_centres(encoder, corpus_sentences()))
    data = [labelled(LearnedSupport(encoder, model), sets[name]) for name in TUNE if name in sets]
    same = np.vstack([d[0][~d[2]] for d in data]), np.concatenate([d[3][~d[2]] for d in data])
    cross = np.vstack([d[1][d[2]] for d in data]), np.concatenate([d[3][d[2]] for d in data])
    model.same = fit_logistic(*same, SAME, args.same_weight)
    model.cross = fit_logistic(*cross, CROSS, args.cross_weight)
    model.source = (f"benchmarks/fit_support.py on {' + '.join(TUNE)} (positive weights {args.same_weight}, "
                    f"{args.cross_weight}); centres from the sentences of {', '.join(CENTRED)}")
    print("same ", dict(zip(SAME, model.same.weights)), "bias", model.same.bias)
    print("cross", dict(zip(CROSS, model.cross.weights)), "bias", model.cross.bias)
    support = LearnedSupport(encoder, model)
    results = {}
    for name, items in sets.items():
        metrics, _rows = evaluate_references(settings, items, support, progress=False)
        results[name] = {"role": "tune" if name in TUNE else "held out", "answers": len(items),
                         "precision": metrics["precision"], "coverage": metrics["coverage"],
                         "by_threshold": metrics["by_threshold"]}
        print(f"{name:32}{results[name]['role']:>9}  precision {metrics['precision']:.3f}  "
              f"coverage {metrics['coverage']:.3f}")
    if args.write:
        model.save(DEFAULT_SUPPORT)
        print("wrote", DEFAULT_SUPPORT)
    write_json(args.out, results)


if __name__ == "__main__":
    main()
