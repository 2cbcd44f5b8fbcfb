"""The UI with the embedded models: one person in a real browser, then N simulated staff
asking at once through Gradio's own client, against `ragqa serve` on 127.0.0.1.

    .venv/bin/python benchmarks/ui_load.py [--users 4] [--rounds 2] [--store DIR] [--out FILE]

Serves the store (default: a fresh one of data/sample/docs). In Debian's headless Chromium,
three questions one after another, each in a fresh chat: time from pressing Enter to the first
text of the answer on screen and to the finished answer (its reference marks drawn). Then each
simulated user asks `rounds` questions one after another (each a fresh chat), all users at
once; per answer: queue wait (submitted -> the job starts processing), time to the first
streamed text and to the finished answer.
Prints p50/p95 and writes JSON. Bounded: 3 + users x rounds answers, nothing more.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from common import arguments, write_json

from rag.settings import load_settings

QUESTIONS = [
    "What HIC15 did the driver dummy reach in FT-2024-07?",
    "What B-pillar intrusion did SI-2024-03 measure?",
    "Which sled test failed?",
    "When was the side impact retest SI-2024-05 run?",
    "Which dummies are used in side impact tests?",
    "Who shares the RO-2024-02 report with the Korean certification office?",
    "What was decided about the B-pillar patch in October 2024?",
    "How many tests has the WorldSID dummy done since its last calibration?",
]
REPO = Path(__file__).resolve().parents[1]
CFG = load_settings()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def serve(storage: Path, port: int) -> subprocess.Popen:
    env = dict(os.environ, RAGQA_STORAGE_DIR=str(storage))
    process = subprocess.Popen([str(Path(sys.executable).parent / "ragqa"), "serve", "--port", str(port)],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2):
                return process
        except OSError:
            time.sleep(1)
    process.terminate()
    raise SystemExit("ragqa serve did not start within 300 s")


def user(url: str, questions: list[str], rows: list[dict]) -> None:
    from gradio_client import Client

    for question in questions:
        client = Client(url, verbose=False)  # a fresh chat: no history, so no follow-up rewriting
        submitted = time.perf_counter()
        # message, documents, header filters, threshold, top-n, top-k
        job = client.submit(question, [], "", CFG.support.threshold, CFG.retrieval.retrieve_k,
                            CFG.retrieval.keep_k, api_name="/chat")
        started = first = None
        while not job.done():
            status = job.status()
            now = time.perf_counter()
            if started is None and status.code.name in ("PROCESSING", "ITERATING"):
                started = now
            if first is None and status.code.name == "ITERATING":
                first = now
            time.sleep(0.05)
        job.result()
        done = time.perf_counter()
        rows.append({"question": question, "queue_wait_s": round((started or submitted) - submitted, 2),
                     "first_text_s": round((first or done) - submitted, 2),
                     "answer_s": round(done - submitted, 2)})


def browser(url: str, questions: list[str]) -> list[dict]:
    """Each question typed into the page: seconds to the answer's first text and to its end."""
    import shutil

    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                              headless=True, args=["--no-sandbox", "--disable-gpu"])
        page = chromium.new_page()
        for question in questions:
            page.goto(url)  # a fresh chat: no history, so no follow-up rewriting
            page.locator("#question textarea").wait_for()
            page.locator("#question textarea").fill(question)
            bot = page.locator('[data-testid="bot"]').first
            clock = time.perf_counter()
            page.locator("#question textarea").press("Enter")
            page.wait_for_function("el => el.innerText.trim().length > 0",
                                   arg=bot.element_handle(timeout=300_000), timeout=300_000)
            first = time.perf_counter() - clock
            page.wait_for_function("el => /refs:|unsupported|Refused|Cannot answer/.test(el.innerText)",
                                   arg=bot.element_handle(), timeout=300_000)
            rows.append({"question": question, "first_text_s": round(first, 2),
                         "answer_s": round(time.perf_counter() - clock, 2)})
        chromium.close()
    return rows


def main() -> None:
    parser = arguments("ui-load")
    parser.add_argument("--users", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--store", type=Path,
                        help="An ingested storage folder (default: a fresh sample store).")
    parser.add_argument("--port", type=int, default=7871)
    args = parser.parse_args()

    storage = args.store
    if storage is None:
        storage = Path(tempfile.mkdtemp(prefix="ragqa-ui-load-")) / "storage"
        env = dict(os.environ, RAGQA_STORAGE_DIR=str(storage))
        ragqa = str(Path(sys.executable).parent / "ragqa")
        subprocess.run([ragqa, "ingest", str(REPO / "data/sample/docs")], env=env, check=True)
    process = serve(storage, args.port)
    url = f"http://127.0.0.1:{args.port}/"
    try:
        rows: list[dict] = []
        user(url, QUESTIONS[:1], [])  # warm-up: models loaded, prompt prefix cached
        seen = browser(url, QUESTIONS[1:4])
        threads = [threading.Thread(target=user, args=(url, [QUESTIONS[(u * args.rounds + r) % len(QUESTIONS)]
                                                              for r in range(args.rounds)], rows))
                   for u in range(args.users)]
        clock = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - clock
    finally:
        process.terminate()
        process.wait(30)
    summary = {"browser": {key: round(statistics.median(r[key] for r in seen), 2)
                           for key in ("first_text_s", "answer_s")},
               "users": args.users, "rounds": args.rounds, "answers": len(rows), "wall_s": round(wall, 1)}
    for key in ("queue_wait_s", "first_text_s", "answer_s"):
        values = [row[key] for row in rows]
        summary[key] = {"p50": round(statistics.median(values), 2), "p95": round(percentile(values, 0.95), 2),
                        "max": round(max(values), 2)}
    print(json.dumps(summary, indent=1))
    write_json(args.out, {"summary": summary, "browser": seen, "answers": rows})


if __name__ == "__main__":
    main()
