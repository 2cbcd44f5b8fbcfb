"""The plain whole-document baseline of issue 31, rebuilt: whole short documents (or, for a long
one, its heading sections) as units, dense retrieval with the packaged e5 plus a capped keyword
boost, the top 5 units in about 3,500 prompt tokens, the same 1.5B LLM (rag.models.build_llm)
and one plain prompt. No store, no chunking, no rerank, no reference matcher.

    .venv/bin/python benchmarks/plain_pipeline.py data/dev/docs data/dev/qa.jsonl [--n 10] [--per-type 1]
        [--out FILE]

Its rows have the shape of `ragqa eval answers` rows (evaluation/answers.py), so the same
metrics apply (`refusal_metrics`: right and refused per QA `type`); it prints them per type, with
the answers that were wrong (and those cited), and p50/p95 seconds a question; writes JSON
(metrics and rows) to --out, and each row as it is answered to --out's .rows.jsonl.
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from common import arguments, write_json

from evaluation.answers import reference_answer, refusal_metrics, right
from evaluation.gold import load_qa
from ingestion.convert import convert
from ingestion.sources import discover
from rag.models import build_embedding, build_llm, token_counter
from rag.answer import is_refusal
from rag.settings import Settings, load_settings

UNIT_TOKENS = 800  # a document up to this is one unit; a longer one is cut at its headings
TOP_K = 5
PROMPT_TOKENS = 3500
KEYWORD_CAP = 0.1  # the keyword boost adds at most this to a cosine similarity
PROMPT = """Answer the question from the documents below in one to five short, complete sentences.
After each sentence, write the number of the document it comes from in brackets, e.g. [2]. If the
documents do not answer the question, reply with exactly this sentence and nothing else: {refusal}

Question: {question}

Documents:
{documents}

Question: {question}
Answer in complete sentences:"""


@dataclass
class Unit:
    id: str
    doc: str
    text: str


def units_of(folder: Path, settings: Settings, count) -> list[Unit]:
    """Every document under `folder` as one unit, or, above UNIT_TOKENS, as its top-level
    heading sections (consecutive blocks of one section, merged while they fit)."""
    units = []
    for path, doc_id in discover([folder]):
        document = convert(path, doc_id, settings.ingest)
        if count(document.markdown) <= UNIT_TOKENS:
            units.append(Unit(doc_id, doc_id, document.markdown))
            continue
        parts: list[tuple[tuple[str, ...], str]] = []
        for block in document.blocks:
            head = block.section[:1]
            if parts and parts[-1][0] == head and count(parts[-1][1] + block.text) <= UNIT_TOKENS:
                parts[-1] = (head, parts[-1][1] + "\n\n" + block.text)
            else:
                parts.append((head, block.text))
        units += [Unit(f"{doc_id}#{i}", doc_id, text) for i, (_, text) in enumerate(parts)]
    return units


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[^\W_]{3,}|[가-힣]{2,}", text.lower())}


@dataclass
class PlainRetriever:
    """Cosine similarity of e5 vectors, plus up to KEYWORD_CAP for the question's words a unit
    holds, weighted by their rarity among the units."""

    units: list[Unit]
    vectors: np.ndarray
    unit_words: list[set[str]]
    idf: dict[str, float]
    embedding: object

    @classmethod
    def build(cls, units: list[Unit], embedding) -> PlainRetriever:
        vectors = np.array(embedding.get_text_embedding_batch([u.text for u in units]))
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        seen = [words(u.text) for u in units]
        idf = {w: math.log(len(units) / sum(w in s for s in seen)) for w in set().union(*seen)}
        return cls(units, vectors, seen, idf, embedding)

    def top(self, question: str, k: int = TOP_K) -> list[Unit]:
        query = np.array(self.embedding.get_query_embedding(question))
        cosine = self.vectors @ (query / np.linalg.norm(query))
        asked = {w: self.idf[w] for w in words(question) if w in self.idf}
        total = sum(asked.values()) or 1.0
        boost = [KEYWORD_CAP * sum(v for w, v in asked.items() if w in held) / total
                 for held in self.unit_words]
        order = np.argsort(-(cosine + np.array(boost)))
        return [self.units[i] for i in order[:k]]


def prompt_for(question: str, units: list[Unit], refusal: str, count) -> str:
    """The plain prompt with as many of the units, in rank order, as fit PROMPT_TOKENS; the last
    one that does not fit whole is cut at a line."""
    shown: list[str] = []
    for unit in units:
        lines = unit.text.splitlines()
        while lines:
            candidate = shown + [f"[{len(shown) + 1}] {unit.doc}\n" + "\n".join(lines)]
            text = PROMPT.format(refusal=refusal, documents="\n\n".join(candidate), question=question)
            if count(text) <= PROMPT_TOKENS:
                shown = candidate
                break
            lines = lines[:-1]
        if not lines:
            break
    return PROMPT.format(refusal=refusal, documents="\n\n".join(shown), question=question)


def main() -> None:
    parser = arguments("plain-pipeline", description=__doc__.split("\n\n")[0])
    parser.add_argument("docs", type=Path, help="The corpus folder.")
    parser.add_argument("qa", type=Path, help="Its QA file.")
    parser.add_argument("--n", type=int, default=None, help="Answer only the first N questions.")
    parser.add_argument("--per-type", type=int, default=None,
                        help="Answer only the first K questions of each QA type (with --n: of those).")
    args = parser.parse_args()
    settings = load_settings()
    llm = build_llm(settings)
    count = token_counter(llm)
    started = time.perf_counter()
    retriever = PlainRetriever.build(units_of(args.docs, settings, count), build_embedding(settings))
    print(f"{len(retriever.units)} units indexed in {time.perf_counter() - started:.1f} s")
    refusal = settings.answer.refusal
    rows: list[dict] = []
    rows_file = args.out.with_suffix(".rows.jsonl")
    rows_file.parent.mkdir(parents=True, exist_ok=True)
    rows_file.write_text("", encoding="utf-8")
    qa = load_qa(args.qa)
    if args.per_type:
        qa = [item for i, item in enumerate(qa)
              if sum(other.get("type") == item.get("type") for other in qa[:i]) < args.per_type]
    for item in qa[: args.n]:
        started = time.perf_counter()
        units = retriever.top(item["question"])
        retrieved = time.perf_counter()
        text = llm.complete(prompt_for(item["question"], units, refusal, count)).text.strip()
        total = time.perf_counter() - started
        reference, reference_from = reference_answer(item)
        answered = not is_refusal(text, refusal)
        rows.append({
            "id": item["id"], "type": item.get("type"), "question": item["question"], "reference": reference,
            "reference_from": reference_from, "gold_answerable": item.get("answerable", True),
            "answer": text, "answered": answered, "contexts": [u.text for u in units],
            "retrieved_ids": [u.id for u in units], "gold_ids": [], "segments": [], "history": [],
            "standalone_question": None, "translated_question": None,
            "refused_by": None if answered else "model", "supported_share": None,
            "timings_ms": {"retrieve": round((retrieved - started) * 1000, 1),
                           "total": round(total * 1000, 1)},
        })
        with rows_file.open("a", encoding="utf-8") as out:  # a run cut short keeps its rows
            out.write(json.dumps(rows[-1], ensure_ascii=False) + "\n")
        print(f"{item['id']} [{item.get('type')}] {total:.1f} s: {text[:100]!r}", flush=True)
    metrics = refusal_metrics(rows)
    wrong = [r for r in rows if r["gold_answerable"] and r["answered"] and right(r) is False]
    metrics["answered_wrong"] = len(wrong)
    metrics["answered_wrong_cited"] = sum(bool(re.search(r"\[\d+\]", r["answer"])) for r in wrong)
    print(f"\n{'type':<16} {'right':>7} {'refused':>8}")
    for kind, m in (metrics.get("by_type", {}) | {"all": metrics}).items():
        print(f"{kind:<16} {m['n_right']:>3}/{m['n_answerable']:<3} "
              f"{m['n_refused']:>4}/{m['n_unanswerable']:<3}")
    print(f"answered wrong: {metrics['answered_wrong']} ({metrics['answered_wrong_cited']} cited); p50 "
          f"{metrics['p50_total_ms'] / 1000:.1f} s, p95 {metrics['p95_total_ms'] / 1000:.1f} s a question")
    write_json(args.out, {"docs": str(args.docs), "qa": str(args.qa), "n": len(rows), "top_k": TOP_K,
                          "unit_tokens": UNIT_TOKENS, "prompt_tokens": PROMPT_TOKENS,
                          "keyword_cap": KEYWORD_CAP, "metrics": metrics, "rows": rows}, ensure_ascii=False)


if __name__ == "__main__":
    main()
