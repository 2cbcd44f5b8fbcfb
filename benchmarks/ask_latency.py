"""`ragqa ask` latency with the embedded models, split by stage, on the sample corpus.

    .venv/bin/python benchmarks/ask_latency.py [--out storage/reports/bench-ask.json]

Ingests data/sample/docs into a fresh temporary store, then answers each question once (after one
warm-up) and prints p50/max per stage and of `first_token` (from the question to the first
generated token). Among the questions: a Korean one (translated for retrieval) and a chat
follow-up (rewritten to stand alone). Writes the figures as JSON.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from common import arguments, write_json

import rag  # noqa: F401
from ingestion.pipeline import ingest
from rag.pipeline import RagPipeline
from rag.settings import REPO_ROOT, load_settings

QUESTIONS = [  # (question, earlier turns of the chat)
    ("What HIC15 did the driver dummy reach in FT-2024-07?", []),
    ("What B-pillar intrusion did SI-2024-03 measure?", []),
    ("When was the side impact retest SI-2024-05 run?", []),
    ("Which dummies are used in side impact tests?", []),
    ("How much did the Model K crash programme cost?", []),
    ("Which sled test failed?", []),
    # translated for retrieval
    ("FT-2024-07 시험에서 운전석 에어백은 첫 접촉 후 몇 ms 만에 전개되었나요?", []),
    ("And the passenger dummy?",
     [("What HIC15 did the driver dummy reach in FT-2024-07?", "The driver dummy reached 412 [1].")]),
]


def main() -> None:
    parser = arguments("ask")
    args = parser.parse_args()
    settings = load_settings()
    settings.storage_dir = Path(tempfile.mkdtemp(prefix="ragqa-bench-"))
    started = time.perf_counter()
    report = ingest([REPO_ROOT / "data/sample/docs"], settings, progress=False)
    ingest_s = time.perf_counter() - started
    pipeline = RagPipeline(settings)
    pipeline.answer("What is this collection about?")  # warm-up: load and first allocation, not timed
    runs = []
    for question, history in QUESTIONS:
        started = time.perf_counter()
        answer = pipeline.answer(question, history=history)
        total = (time.perf_counter() - started) * 1000
        runs.append({"question": question, "answerable": answer.answerable, "answer": answer.answer,
                     "answer_chars": len(answer.answer), "total_ms": round(total, 1), **answer.timings_ms})
        print(f"{total:8.0f} ms  {answer.answerable!s:5}  {question}")
    stages = ["condense", "translate", "retrieve", "rerank", "context", "first_token", "generate", "match",
              "total_ms"]
    summary = {  # over the questions that went through the stage (condense: follow-ups only)
        stage: {"n": len(values), "p50_ms": round(statistics.median(values), 1),
                "max_ms": round(max(values), 1)}
        for stage in stages if (values := [r[stage] for r in runs if stage in r])
    }
    result = {"cores": os.cpu_count(), "chunks": report.chunks, "ingest_s": round(ingest_s, 2),
              "stages": summary, "runs": runs}
    for stage, figures in summary.items():
        print(f"{stage:10} p50 {figures['p50_ms']:9.1f} ms   max {figures['max_ms']:9.1f} ms")
    write_json(args.out, result)


if __name__ == "__main__":
    main()
