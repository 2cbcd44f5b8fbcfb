"""Reference-matcher latency: an 8-sentence answer against 5 chunks, embedded scorer, 2 cores.

    .venv/bin/python benchmarks/matcher_latency.py [--runs 20] [--out FILE]

Each run uses a fresh scorer (no embedding cache), so every segment, chunk and chunk sentence
is embedded, as for a new answer (the pipeline reuses the store's chunk vectors, so it embeds
less). Prints p50/p95 and the number of scorer pairs; writes JSON.
"""

from __future__ import annotations

import statistics
import time

from common import arguments, write_json

import rag  # noqa: F401
from evaluation.references import CachedScorer
from rag.models import build_embedding
from rag.references import ReferenceMatcher
from rag.text import split_sentences
from rag.scoring import bi_encoder
from rag.settings import load_settings
from rag.support import support_scorer

ANSWER = (
    "The frontal test FT-2024-07 was run at 56 km/h against a rigid barrier. The driver dummy "
    "reached a HIC15 of 412. The passenger chest deflection was 28 mm. The steering column moved "
    "38 mm rearward. The driver airbag deployed 14 ms after first contact. The side test SI-2024-03 "
    "measured a B-pillar intrusion of 142 mm. The retest SI-2024-05 measured 98 mm. The programme "
    "also bought a new wind tunnel."
)
CHUNKS = [
    "Frontal impact test FT-2024-07. Full-width rigid barrier at 56 km/h. Two Hybrid III dummies, belted.",
    "| Measurement | Driver | Passenger | Limit |\n| HIC15 | 412 | 388 | 700 |\n"
    "| Chest deflection (mm) | 31 | 28 | 42 |",
    "All values stayed below their limits. The steering column moved 38 mm rearward. "
    "The driver airbag deployed 14 ms after first contact.",
    "Side impact test SI-2024-03. | B-pillar intrusion (mm) | 142 | 120 | "
    "The reinforcement needs a thicker patch.",
    "Side impact retest SI-2024-05. | B-pillar intrusion (mm) | 98 | 120 | "
    "This result supersedes SI-2024-03.",
]


def main() -> None:
    parser = arguments("matcher")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    settings = load_settings()
    embedding = build_embedding(settings)
    sentences = split_sentences(ANSWER)
    cfg = settings.references
    bi_encoder(settings, embedding)([("warm", "up")])  # model load, not timed
    times, pairs = [], 0
    for _ in range(args.runs):
        # The matcher asks for each distinct pair once, so the cache counts the pairs scored.
        scorer = CachedScorer(support_scorer(settings, bi_encoder(settings, embedding)))
        matcher = ReferenceMatcher.from_settings(settings, scorer)
        started = time.perf_counter()
        segments = matcher.match(sentences, CHUNKS)
        times.append((time.perf_counter() - started) * 1000)
        pairs = len(scorer.cache)
    times.sort()
    result = {
        "sentences": len(sentences), "chunks": len(CHUNKS), "max_span": cfg.max_span, "pairs_scored": pairs,
        "p50_ms": round(statistics.median(times), 1), "p95_ms": round(times[int(0.95 * (len(times) - 1))], 1),
        "segments": [
            {"sentences": s.sentences, "supported": s.supported, "chunks": [r.chunk for r in s.references],
             "score": round(s.score, 3)}
            for s in segments
        ],
    }
    print(f"{len(sentences)} sentences x {len(CHUNKS)} chunks, max_span {cfg.max_span}: {pairs} pairs, "
          f"p50 {result['p50_ms']} ms, p95 {result['p95_ms']} ms over {args.runs} runs")
    for segment in result["segments"]:
        print(" ", segment)
    write_json(args.out, result)


if __name__ == "__main__":
    main()
