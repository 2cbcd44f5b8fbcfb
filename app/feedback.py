"""Staff feedback on answers: a thumbs up or down and an optional comment per answer, kept in
storage/feedback.jsonl with everything needed to reproduce and learn from it (question, the
Answer object with its references, scorer and the settings in force less their secrets:
rag/redact.py), and exported as QA items (docs/FORMATS.md) so `ragqa eval` and the trainers can
use the rated questions.

Export rules: an answer rated up becomes gold (its text the answer, its supported references the
evidence; a refusal rated up an unanswerable item); an answer rated down becomes a question
without a gold answer, the rejected answer and the comment kept under `feedback`. The last
rating of an answer counts.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rag.redact import public_settings
from rag.settings import Settings

FEEDBACK_FILE = "feedback.jsonl"


@dataclass
class FeedbackLog:
    path: Path

    @classmethod
    def of(cls, settings: Settings) -> FeedbackLog:
        return cls(settings.storage_dir / FEEDBACK_FILE)

    def add(self, answer: dict[str, Any], rating: str, comment: str = "", settings: Settings | None = None,
            user: str | None = None) -> dict[str, Any]:
        """Append one rating ("up" or "down") of `answer` (an Answer's dict)."""
        if rating not in ("up", "down"):
            raise ValueError(f"a rating is 'up' or 'down', not {rating!r}")
        record = {
            "time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "answer_id": answer_id(answer),
            "rating": rating,
            "comment": comment.strip(),
            "user": user,
            "question": answer["question"],
            "answer": answer,
            "config": public_settings(settings) if settings is not None else None,  # never its secrets
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)  # several UI sessions append at once
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        return record

    def records(self) -> list[dict[str, Any]]:
        """Every rating, oldest first; a line cut short by a crash is skipped."""
        if not self.path.is_file():
            return []
        records = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return records

    def latest(self) -> list[dict[str, Any]]:
        """The last rating of each answer."""
        last: dict[str, dict[str, Any]] = {}
        for record in self.records():
            last[record["answer_id"]] = record
        return list(last.values())


def answer_id(answer: dict[str, Any]) -> str:
    """Which answer a rating is about: its question, text and the time it took (the same
    question asked twice is two answers)."""
    key = json.dumps([answer["question"], answer["answer"], answer.get("timings_ms", {}).get("total")],
                     ensure_ascii=False)
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def qa_item(record: dict[str, Any]) -> dict[str, Any]:
    """One rating as a QA item (module docstring)."""
    answer = record["answer"]
    item: dict[str, Any] = {"id": f"feedback-{record['answer_id']}",
                            "question": answer.get("standalone_question") or record["question"]}
    if record["rating"] == "up" and answer["answerable"]:
        refs = {(r["ref"], r["chunk_id"]): r
                for s in answer["segments"] if s["supported"] for r in s["references"]}
        item |= {"answer": answer["answer"], "answerable": True, "evidence": [
            {key: ref[key] for key in ("doc", "chunk_id", "page", "slide", "section")
             if ref.get(key) is not None}
            | {"required": True}
            for ref in refs.values()]}
    elif record["rating"] == "up":
        item |= {"answer": None, "answerable": False, "evidence": []}
    else:
        item |= {"answer": None, "answerable": True, "evidence": []}
    item["feedback"] = {"rating": record["rating"], "comment": record["comment"], "time": record["time"],
                        "answer_given": answer["answer"]}
    return item


def export(log: FeedbackLog, out: Path, rating: str = "all") -> int:
    """Write the rated questions (`rating`: up, down or all) as QA JSON Lines; returns how many."""
    items = [qa_item(r) for r in log.latest() if rating in ("all", r["rating"])]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items), encoding="utf-8")
    return len(items)
