"""Reference matching quality: sentence-level precision and coverage against a threshold.

    .venv/bin/python benchmarks/reference_precision.py [--out FILE] [--generated NAME=FILE]

Two annotated sets per corpus (the sample corpus and devbench's Debian FAQ, HTML), both built
from real retrieval results (the top 5 chunks of a question):
- "copied": for each question of the corpus's QA, one sentence verbatim from each of up to two
  of those chunks (gold: every top-5 chunk containing it, and the two that translate one, see
  support_annotations_notes.txt) and one sentence from a document
  outside the top 5 (gold: none), in a fixed shuffled order;
- "generated": the LLM's own answers to the questions `ragqa qa generate` wrote from one chunk
  (paraphrases, not copies), each mixed with a sentence of an answer generated from a document
  outside the top 5. Gold: benchmarks/data/support_annotations.jsonl, every sentence read
  against each of its 5 chunks by an annotator who did not see any scorer's output (every
  chunk that states all the sentence asserts; hard calls in support_annotations_notes.txt).
  Without an annotation (another QA file, another store) a sentence's gold is the chunk its
  answer was written from, which under-counts (other chunks often state it too) and trusts the
  1.5B generator (it also writes sentences its chunk does not support). The generated QA ships
  as data/sample/generated_qa.jsonl and benchmarks/data/generated_qa-debian_faq_en_html.jsonl
  (61 questions from 23 chunks); --generated NAME=FILE adds or replaces one.
- cross-language (devbench's parallel Debian FAQ pages): a question's gold sentence as the
  other language's FAQ states it, against this language's retrieved chunks (gold: the chunks
  holding this language's version), plus the other language's gold sentence of another
  document (gold: none); English answers against Korean chunks and the reverse.
Each set is scored with the configured support scorer and with the calibrated bi-encoder alone. The items
are written as reference gold files (docs/FORMATS.md) beside the JSON, so
`ragqa eval references --gold FILE` reproduces the figures; scoring is evaluation.references'.
Prints the precision/coverage curve over thresholds and writes JSON.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from llama_index.core.schema import MetadataMode

import rag  # noqa: F401
from evaluation.gold import load_jsonl, load_qa, normalise
from common import arguments, write_json
from corpora import corpora, indexed
from evaluation.references import evaluate_references
from rag.models import build_embedding
from rag.text import split_sentences
from rag.retrieval import dense_retriever
from rag.scoring import bi_encoder
from rag.text import hangul_script
from rag.settings import REPO_ROOT
from rag.store import all_nodes, collection
from rag.support import support_scorer

ANNOTATIONS = Path(__file__).with_name("data") / "support_annotations.jsonl"


def pick(items: list, seed: str):
    return items[int(hashlib.sha1(seed.encode()).hexdigest(), 16) % len(items)] if items else None


def usable(text: str) -> list[str]:
    return [s for s in split_sentences(text) if len(s.split()) >= 6 and "|" not in s]


def gold_item(item: dict, sentences: list[str], gold: list[list[int]], top: list) -> dict:
    """A gold item (docs/FORMATS.md): the sentences in a fixed shuffled order, the retrieved
    chunks as the matcher sees them."""
    order = sorted(range(len(sentences)), key=lambda i: hashlib.sha1(f"{item['id']}{i}".encode()).hexdigest())
    return {
        "id": item["id"], "question": item["question"],
        "answer_sentences": [sentences[i] for i in order], "gold": [gold[i] for i in order],
        "chunks": [{"chunk_id": n.node.node_id, "doc": n.node.metadata["doc"],
                    "text": n.node.get_content(metadata_mode=MetadataMode.EMBED)} for n in top],
    }


def build_gold(settings, qa: list[dict]) -> list[dict]:
    """Reference gold items (docs/FORMATS.md) from real retrieval results."""
    embedding = build_embedding(settings)
    retriever = dense_retriever(settings, embedding, similarity_top_k=5)
    everything = collection(settings).get(include=["documents", "metadatas"])
    items = []
    for item in qa:
        top = retriever.retrieve(item["question"])
        chunks = [n.node.get_content(metadata_mode=MetadataMode.EMBED) for n in top]
        raw = [n.node.get_content(metadata_mode=MetadataMode.NONE) for n in top]
        docs = {n.node.metadata["doc"] for n in top}
        sentences, gold = [], []
        for k in range(min(2, len(top))):
            sentence = pick(usable(raw[k]), item["id"] + str(k))
            if sentence and sentence not in sentences:
                sentences.append(sentence)
                gold.append([j for j, c in enumerate(chunks) if normalise(sentence) in normalise(c)])
        pairs = zip(everything["documents"], everything["metadatas"])
        outside = [d for d, m in pairs if m["doc"] not in docs]
        foreign = pick(usable(pick(outside, item["id"]) or ""), item["id"] + "x")
        if foreign:
            sentences.append(foreign)
            gold.append([])
        if sentences:
            items.append(gold_item(item, sentences, gold, top))
    return with_annotations(items)


def with_annotations(items: list[dict]) -> list[dict]:
    """The items, each with its gold from the annotation of the same id and sentences where
    there is one."""
    notes = {a["id"]: a for a in load_jsonl(ANNOTATIONS, ("id", "sentences", "supported_by"), "annotation")}
    done = []
    for item in items:
        note = notes.get(item["id"])
        if note and note["sentences"] == item["answer_sentences"]:
            ids = [c["chunk_id"] for c in item["chunks"]]
            gold = [[ids.index(c) for c in chunks if c in ids] for chunks in note["supported_by"]]
            item = item | {"gold": gold}
        done.append(item)
    print(f"gold: {sum(a is not b for a, b in zip(done, items))} of {len(items)} answers annotated")
    return done


def build_generated_gold(settings, generated: list[dict]) -> list[dict]:
    """Reference gold items whose sentences are the LLM's own answers (`ragqa qa generate`),
    paraphrases of the chunk each answer was written from; one answer sentence generated from a
    document outside the top 5 is mixed in. Gold from the annotations, else the source chunk
    (module docstring). Questions whose chunk is not retrieved in the top 5 are skipped."""
    embedding = build_embedding(settings)
    retriever = dense_retriever(settings, embedding, similarity_top_k=5)
    texts = {n.node_id: n.get_content(metadata_mode=MetadataMode.EMBED) for n in all_nodes(settings)}
    items = []
    for item in generated:
        source = item["evidence"][0]["chunk_id"]
        if source not in texts:
            continue
        top = retriever.retrieve(item["question"])
        chunks = [n.node.get_content(metadata_mode=MetadataMode.EMBED) for n in top]
        gold_chunks = [j for j, c in enumerate(chunks) if c == texts[source]]
        if not gold_chunks:
            continue
        sentences = split_sentences(item["answer"])
        gold = [gold_chunks for _ in sentences]
        docs = {n.node.metadata["doc"] for n in top}
        outside = [g for g in generated if g["evidence"][0]["doc"] not in docs]
        foreign = pick(split_sentences((pick(outside, item["id"]) or {}).get("answer", "")), item["id"] + "x")
        if foreign and foreign not in sentences:
            sentences.append(foreign)
            gold.append([])
        items.append(gold_item(item, sentences, gold, top))
    return with_annotations(items)


def _section_key(item: dict) -> tuple[str, str] | None:
    """(file stem, section number) of a devbench FAQ item: the same in both languages
    ("debian-faq-en/basic-defs.en.html", "1.1. What is this FAQ?") -> ("basic-defs", "1.1")."""
    evidence = item["evidence"][0]
    number = (evidence.get("section") or "").split(" ", 1)[0].rstrip(".")
    return (Path(evidence["doc"]).name.split(".")[0], number) if number[:1].isdigit() else None


def build_crosslingual_gold(settings, qa: list[dict], translated: list[dict]) -> list[dict]:
    """Reference gold items whose sentences are in the other language than the chunks: for each
    question of this corpus's QA, its gold sentence as the parallel FAQ states it in the other
    language (gold: the retrieved chunks holding this language's version), and the other
    language's gold sentence of a section of another document (gold: none). Pairs whose
    translation is missing (untranslated sections keep English) are skipped."""
    embedding = build_embedding(settings)
    retriever = dense_retriever(settings, embedding, similarity_top_k=5)
    other = {_section_key(t): t["evidence"][0].get("text", "") for t in translated if _section_key(t)}
    items = []
    for item in qa:
        key, own = _section_key(item), item["evidence"][0].get("text", "")
        sentence = other.get(key, "")
        if not own or not sentence or hangul_script(sentence) == hangul_script(own):
            continue
        top = retriever.retrieve(item["question"])
        chunks = [n.node.get_content(metadata_mode=MetadataMode.EMBED) for n in top]
        gold_chunks = [j for j, c in enumerate(chunks) if normalise(own) in normalise(c)]
        if not gold_chunks:
            continue
        sentences, gold = [sentence], [gold_chunks]
        elsewhere = [text for (stem, _), text in other.items() if stem != key[0] and text
                     and hangul_script(text) == hangul_script(sentence)]
        foreign = pick(elsewhere, item["id"])
        if foreign:
            sentences.append(foreign)
            gold.append([])
        items.append(gold_item(item, sentences, gold, top))
    return items


def report(name: str, settings, items: list[dict], gold_file: Path) -> dict:
    gold_file.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    results = {}
    encoder = bi_encoder(settings, build_embedding(settings))  # fresh: no embeddings cached
    for variant, scorer in (("bi-encoder alone", encoder), ("configured", support_scorer(settings, encoder))):
        metrics, _rows = evaluate_references(settings, items, scorer, progress=False)
        results[metrics["scorer"]] = metrics | {
            "gold_file": str(gold_file),
            "unsupported_sentences": sum(1 for i in items for g in i["gold"] if not g),
        }
        print(f"\n{name}, {metrics['scorer']} ({variant}): {len(items)} answers, "
              f"{metrics['n_sentences']} sentences")
        for point in metrics["by_threshold"]:
            print(f"  threshold {point['threshold']:.2f}  precision {point['precision']:.3f}  "
                  f"coverage {point['coverage']:.3f}")
    return results


def main() -> None:
    parser = arguments("references")
    parser.add_argument("--generated", action="append", default=[],
                        help="NAME=QA file of `ragqa qa generate`")
    args = parser.parse_args()
    generated = {"sample": REPO_ROOT / "data/sample/generated_qa.jsonl",
                 "debian_faq_en_html": ANNOTATIONS.with_name("generated_qa-debian_faq_en_html.jsonl")}
    generated.update(dict(g.split("=", 1) for g in args.generated))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    found = {c.name: c for c in corpora(["sample", "debian_faq_en_html", "debian_faq_ko_html"])}
    results = {}
    for name in ("sample", "debian_faq_en_html"):
        if name not in found:
            continue
        settings = indexed(found[name])
        copied = build_gold(settings, [q for q in load_qa(found[name].qa) if q.get("answerable", True)])
        results[name] = report(f"{name} copied", settings, copied,
                               args.out.with_name(f"reference-gold-{name}.jsonl"))
        if Path(generated.get(name, "")).is_file():
            items = build_generated_gold(settings, load_qa(Path(generated[name])))
            results[f"{name}_generated"] = report(
                f"{name} generated", settings, items,
                args.out.with_name(f"reference-gold-{name}-generated.jsonl"),
            )
    if {"debian_faq_en_html", "debian_faq_ko_html"} <= set(found):
        en, ko = found["debian_faq_en_html"], found["debian_faq_ko_html"]
        pairs = ((ko, en, "english_answers_korean_chunks"), (en, ko, "korean_answers_english_chunks"))
        for chunks, answers, name in pairs:
            items = build_crosslingual_gold(indexed(chunks), load_qa(chunks.qa), load_qa(answers.qa))
            results[name] = report(name, indexed(chunks), items,
                                   args.out.with_name(f"reference-gold-{name}.jsonl"))
    write_json(args.out, results)


if __name__ == "__main__":
    main()
