"""Time a newcomer's fork: `ragqa init --evaluate` on a document set, then the set's own QA file
through `ragqa eval retrieval` and `ragqa eval answers`, each as the command a user types.

    .venv/bin/python benchmarks/fork_time.py [--corpus python_faq_html] [--answers 10] [--out FILE]

The models must be prepared (`make models`): a fork shares them. The corpus is copied into a
fresh folder so its document ids are the ones its QA file names (benchmarks/corpora.py). Prints
each step's wall time and figures; writes JSON.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import arguments, write_json
from corpora import CORPORA

RAGQA = Path(sys.executable).with_name("ragqa")


def step(name: str, args: list[str], log: dict) -> str:
    """Run `ragqa ARGS`, echo its output, record its wall time; stop on failure."""
    started = time.perf_counter()
    done = subprocess.run([str(RAGQA), *args], capture_output=True, text=True)
    seconds = round(time.perf_counter() - started, 1)
    print(f"\n$ ragqa {' '.join(args)}\n{done.stdout.strip()}\n[{name}: {seconds} s, exit {done.returncode}]")
    log["steps"].append({"step": name, "command": "ragqa " + " ".join(args), "seconds": seconds,
                         "exit": done.returncode})
    if done.returncode != 0:
        sys.exit(f"{name} failed:\n{done.stderr[-2000:]}")
    return done.stdout


def metrics(output: str) -> dict:
    """The metrics.json of the run folder a command printed last."""
    return json.loads((Path(output.strip().splitlines()[-1]) / "metrics.json").read_text(encoding="utf-8"))


def main() -> None:
    parser = arguments("fork", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="python_faq_html", choices=[c.name for c in CORPORA])
    parser.add_argument("--answers", type=int, default=10, help="QA-file questions answered end to end.")
    args = parser.parse_args()
    corpus = next(c for c in CORPORA if c.name == args.corpus)
    if not corpus.available:
        sys.exit(f"{corpus.name}: not on this machine")
    work = Path(tempfile.mkdtemp(prefix="ragqa-fork-"))
    docs = work / "docs"
    for part in corpus.parts or [p.name for p in corpus.root.iterdir()]:
        source = corpus.root / part
        (shutil.copytree if source.is_dir() else shutil.copy)(source, docs / part)
    fork, log = work / "fork", {"corpus": corpus.name, "steps": []}
    config = ["--config", str(fork / "ragqa.toml")]
    started = time.perf_counter()
    out = step("init --evaluate", ["init", str(fork), "--docs", str(docs), "--evaluate"], log)
    log["proposals"] = [line.strip() for line in out.splitlines() if line.startswith("  ")]
    stage_line = re.compile(r"\s+(dense|bm25|hybrid|rerank|answers)\s")
    log["baseline"] = [line.strip() for line in out.splitlines() if stage_line.match(line)]
    qa = ["--qa", str(corpus.qa)]
    log["retrieval"] = metrics(step("eval retrieval", ["eval", "retrieval", *config, *qa], log))["stages"]
    limit = ["--limit", str(args.answers)]
    answers = metrics(step("eval answers", ["eval", "answers", *config, *qa, *limit], log))
    log["answers"] = answers["answers"]
    log["total_seconds"] = round(time.perf_counter() - started, 1)
    print(f"\nfork of {corpus.name} in {log['total_seconds']} s: "
          + ", ".join(f"{s['step']} {s['seconds']} s" for s in log["steps"]))
    print("retrieval on its QA file: " + "; ".join(
        f"{k} MAP@1 {v['map@1']:.3f} Success@5 {v['success@5']:.3f}" for k, v in log["retrieval"].items()))
    shown = ("n_questions", "answered_when_answerable", "right_when_answerable", "p50_total_ms")
    print("answers: " + ", ".join(f"{k} {log['answers'][k]}" for k in shown))
    write_json(args.out, log, ensure_ascii=False)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
