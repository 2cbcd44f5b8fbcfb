"""Answer runs: ask every question of a QA file through the pipeline (or the bare LLM with
`no_rag`, the paper's baseline), record what came back, and measure refusal accuracy.

One results.jsonl line per question, written as soon as it is answered, so a long run resumes
where it stopped. Judge grades and RAGAS scores are added to these rows by evaluation.judge and
evaluation.ragas_eval; the rows carry everything they need (question, reference, answer,
contexts, retrieved and gold chunk ids).
"""

from __future__ import annotations

import math
import re
import time
from statistics import median
from typing import Any

from tqdm import tqdm

from evaluation.correctness import figures, states_answer
from evaluation.gold import satisfies
from evaluation.metrics import required
from evaluation.runs import Run
from rag.answer import is_refusal
from rag.pipeline import RagPipeline
from rag.store import collection
from rag.text import MARKER


def gold_chunk_ids(settings, qa: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Per question, the ids of every indexed chunk that satisfies one of its required items."""
    store = collection(settings).get(include=["documents", "metadatas"])
    chunks = list(zip(store["ids"], store["documents"], store["metadatas"]))
    out = {}
    for item in qa:
        need = [item["evidence"][j] for j in required(item.get("evidence", []))]
        out[item["id"]] = [cid for cid, text, meta in chunks
                           if any(satisfies(e, text, meta, cid) for e in need)]
    return out


def reference_answer(item: dict[str, Any]) -> tuple[str | None, str | None]:
    """(reference, where it came from): the QA item's answer, else its required evidence texts
    (what a correct answer must state), else None."""
    if item.get("answer"):
        return item["answer"], "answer"
    evidence = item.get("evidence", [])
    texts = [evidence[j]["text"] for j in required(evidence) if evidence[j].get("text")]
    return (" ".join(texts), "evidence") if texts else (None, None)


def earlier_turns(pipeline: RagPipeline, item: dict[str, Any]) -> list[tuple[str, str]]:
    """A follow-up item's chat so far: its `history` questions asked in turn, each with the
    turns before it, as (question, answer) pairs (the answers are the pipeline's own)."""
    turns: list[tuple[str, str]] = []
    for question in item.get("history", []):
        turns.append((question, pipeline.answer(question, history=turns).answer))
    return turns


def answer_questions(
    pipeline: RagPipeline, qa: list[dict[str, Any]], run: Run, no_rag: bool = False, progress: bool = True
) -> list[dict[str, Any]]:
    """Answer the questions `run` has not answered yet; returns all its rows."""
    settings = pipeline.settings
    done = run.done()
    todo = [item for item in qa if item["id"] not in done]
    gold = gold_chunk_ids(settings, todo)
    no_rag_prompt = settings.evaluation.no_rag_prompt_file.read_text(encoding="utf-8")
    for item in tqdm(todo, desc="answering", unit="q", disable=not progress):
        started = time.perf_counter()
        if no_rag:
            prompt = no_rag_prompt.format(question=item["question"], refusal=settings.answer.refusal)
            text = pipeline.llm.complete(prompt).text.strip()
            answer = {"answer": text, "answerable": not is_refusal(text, settings.answer.refusal),
                      "segments": [], "sources": [], "timings_ms": {}}
        else:
            answer = pipeline.answer(item["question"], history=earlier_turns(pipeline, item)).to_dict()
        reference, reference_from = reference_answer(item)
        run.append({
            "id": item["id"],
            "type": item.get("type"),
            "question": item["question"],
            "reference": reference,
            "reference_from": reference_from,
            "gold_answerable": item.get("answerable", True),
            "answer": answer["answer"],
            "answered": answer["answerable"],
            "contexts": [s["text"] for s in answer["sources"]],
            "retrieved_ids": [s["chunk_id"] for s in answer["sources"]],
            "gold_ids": gold[item["id"]],
            "segments": answer["segments"],
            "history": item.get("history", []),
            "standalone_question": answer.get("standalone_question"),
            "translated_question": answer.get("translated_question"),
            "refused_by": answer.get("refused_by"),
            "mode": answer.get("mode"),
            "supported_share": supported_share(answer["segments"]),
            "timings_ms": answer["timings_ms"] | {"total": round((time.perf_counter() - started) * 1000, 1)},
        })
    return run.results()


def supported_share(segments: list[dict[str, Any]]) -> float | None:
    """Share of the answer's sentences that the reference matcher found support for."""
    def size(segment: dict[str, Any]) -> int:
        first, last = segment["sentences"]
        return last - first + 1

    total = sum(size(s) for s in segments)
    backed = sum(size(s) for s in segments if s["supported"])
    return round(backed / total, 4) if total else None


def right(row: dict[str, Any]) -> bool | None:
    """The deterministic check (evaluation.correctness) of an answered row against its gold
    answer; None where the QA item gives no answer to check against."""
    if row["reference_from"] != "answer":
        return None
    return row["answered"] and states_answer(row["answer"], row["reference"])


# Words by which an answer says the documents hold no value for what was asked ("the table gives
# no value for ...", "the documents do not state ...", "값이 없습니다") or corrects its premise
# ("the documents give the oldest rock, not the youngest").
_ABSENCE = re.compile(
    r"\bno (?:value|figure|information|mention|record)\b|\bsay nothing\b|, not\b|아니라"
    r"|\bnot (?:given|stated|mentioned|specified|recorded)\b"
    r"|\bdo(?:es)? not (?:say|state|give|mention|specify|record)\b"
    r"|없습니다|없다|나와 있지 않|언급(?:이|되어 있지) 않", re.I)


def declined(row: dict[str, Any]) -> bool:
    """Refused, or answered that the documents give no value (or not the premise asked about),
    adding no figure the question does not hold: for an unanswerable question (a blank cell, a
    false premise, a topic near but absent) each is right."""
    if not row["answered"]:
        return True
    text = MARKER.sub("", row["answer"])
    asked = {value for value, _ in figures(row["question"])}
    return bool(_ABSENCE.search(text)) and all(value in asked for value, _ in figures(text))


def refusal_metrics(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary below over all rows, and, when the QA items have a `type`, over each type's
    rows (`by_type`; items without one under "untyped")."""
    metrics = summary(rows)
    if any(r.get("type") for r in rows):
        groups: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            groups.setdefault(row.get("type") or "untyped", []).append(row)
        metrics["by_type"] = {kind: {key: value for key, value in summary(group).items() if key in TYPE_KEYS}
                              for kind, group in sorted(groups.items())}
    return metrics


TYPE_KEYS = ("n_questions", "n_answerable", "n_unanswerable", "n_right", "n_refused", "right_when_answerable",
             "refused_when_unanswerable", "supported_but_wrong")


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Refused when it should (unanswerable items: `declined`) and answered when it should (the
    others); answered and right by the correctness check, and answered, every sentence backed by
    the matcher, yet wrong (`supported_but_wrong`)."""
    unanswerable = [r for r in rows if not r["gold_answerable"]]
    answerable = [r for r in rows if r["gold_answerable"]]
    checked = [(r, ok) for r in answerable if (ok := right(r)) is not None]
    refused = sum(declined(r) for r in unanswerable)
    n_right = sum(ok for _, ok in checked)
    correct = refused + sum(r["answered"] for r in answerable)

    def rate(part: int, whole: int) -> float | None:
        return round(part / whole, 4) if whole else None

    shares = [r["supported_share"] for r in rows if r["answered"] and r["supported_share"] is not None]
    totals = [r["timings_ms"]["total"] for r in rows]
    return {
        "n_questions": len(rows),
        "n_answerable": len(answerable),
        "n_unanswerable": len(unanswerable),
        "refusal_accuracy": rate(correct, len(rows)),
        "refused_when_unanswerable": rate(refused, len(unanswerable)),
        "answered_when_answerable": rate(sum(r["answered"] for r in answerable), len(answerable)),
        "right_when_answerable": rate(n_right, len(checked)),
        "n_checked": len(checked),
        "n_right": n_right,
        "n_refused": refused,
        "supported_but_wrong": sum(1 for r, ok in checked
                                   if r["answered"] and not ok and r["supported_share"] == 1.0),
        "mean_supported_share": round(sum(shares) / len(shares), 4) if shares else None,
        "p50_total_ms": round(median(totals), 1) if totals else None,
        "p95_total_ms": sorted(totals)[math.ceil(0.95 * len(totals)) - 1] if totals else None,  # nearest rank
    }
