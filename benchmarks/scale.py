"""Scale: a store of 10k and 100k chunks built through `ingest`, then what adding one document
costs, retrieval and rerank latency, memory and size on disk, on the store's own folder and
through a Chroma server.

    .venv/bin/python benchmarks/scale.py [--sizes 10000,100000] [--queries 200] [--out FILE]

Corpus: devbench's real text recombined. Every chunk-sized section of a generated Markdown
report is eight sentences drawn (seeded) from the chunks of the five benchmark stores, so
wording, languages and lengths are real while the documents are not.

Vectors: embedding 100k chunks with the real model takes hours on 2 cores, so ingestion here
uses a stand-in: each distinct sentence is embedded once with the configured embedder (cached
under storage/bench-scale), and a chunk's vector is the normalised mean of its sentences'
vectors. Ingest throughput is therefore everything but embedding (conversion, chunking, Chroma,
the lexical index, the docstore), and "add one document" excludes its own embedding, as the
target says. Queries are embedded by the real model and are part of the dense latency.

The latency part runs in a fresh process per store, so its peak memory (RSS) is that of the
retrieval side of `ragqa serve` (embedder, Chroma, lexical index, ranker) without the LLM.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from corpora import STORES, corpora, indexed
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.schema import QueryBundle

import ingestion.pipeline as pipeline_module
from evaluation.gold import load_qa
from ingestion.pipeline import ingest, remove
from rag.models import build_embedding
from rag.postprocessors import build_rerank_stage
from rag.retrieval import bm25_retriever, dense_retriever, hybrid_retriever
from rag.settings import REPO_ROOT, Settings, load_settings
from rag.store import Store, all_nodes

ROOT = REPO_ROOT / "storage" / "bench-scale"
SECTIONS_PER_DOC = 50
SENTENCES_PER_SECTION = 8
_SENTENCE = re.compile(r"(?<=[.!?。])\s+|\n+")


def sentences() -> list[str]:
    """Distinct sentences of the benchmark stores' chunks, in a fixed order."""
    found: dict[str, None] = {}
    for corpus in corpora():
        for node in all_nodes(indexed(corpus)):
            for sentence in _SENTENCE.split(node.get_content()):
                sentence = sentence.strip().lstrip("#").strip()
                if 20 <= len(sentence) <= 300 and "|" not in sentence:
                    found[sentence] = None
    return sorted(found)


def key(sentence: str) -> str:
    return hashlib.sha1(sentence.encode()).hexdigest()


def sentence_vectors(texts: list[str], settings: Settings) -> dict[str, np.ndarray]:
    """Each sentence's passage vector, embedded once and cached."""
    cache = ROOT / "sentence-vectors.npz"
    if cache.is_file():
        stored = np.load(cache)
        if set(stored["keys"]) >= {key(t) for t in texts}:
            return dict(zip(stored["keys"], stored["vectors"]))
    print(f"embedding {len(texts)} sentences once (cached in {cache})", flush=True)
    embedded = build_embedding(settings).get_text_embedding_batch(texts, show_progress=True)
    vectors = np.asarray(embedded, dtype=np.float32)
    ROOT.mkdir(parents=True, exist_ok=True)
    np.savez(cache, keys=np.array([key(t) for t in texts]), vectors=vectors)
    return dict(zip((key(t) for t in texts), vectors))


class SentenceMeanEmbedding(BaseEmbedding):
    """The stand-in for passages: the mean of the text's known sentences' vectors."""

    _vectors: dict[str, np.ndarray] = PrivateAttr()

    def __init__(self, vectors: dict[str, np.ndarray]):
        super().__init__(model_name="sentence-mean", embed_batch_size=256)
        self._vectors = vectors

    def _vector(self, text: str) -> list[float]:
        keys = [key(s.strip().lstrip("#").strip()) for s in _SENTENCE.split(text)]
        found = [self._vectors[k] for k in keys if k in self._vectors]
        mean = np.mean(found, axis=0) if found else np.ones(next(iter(self._vectors.values())).shape)
        return (mean / np.linalg.norm(mean)).tolist()

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)

    def _get_query_embedding(self, query: str) -> list[float]:
        raise NotImplementedError("queries use the real model")

    async def _aget_query_embedding(self, query: str) -> list[float]:
        raise NotImplementedError("queries use the real model")


def write_report(path: Path, number: int, pool: list[str]) -> None:
    pick = random.Random(number)
    parts = [f"# Test report {number}\n"]
    for section in range(SECTIONS_PER_DOC):
        sentences = " ".join(pick.sample(pool, SENTENCES_PER_SECTION))
        parts.append(f"## Finding {number}.{section}\n\n" + sentences + "\n")
    path.write_text("\n".join(parts), encoding="utf-8")


def build(size: int, pool: list[str], stand_in: BaseEmbedding) -> tuple[Settings, dict]:
    """A store of about `size` chunks, ingested file by file as `ragqa ingest` does (cached)."""
    settings = load_settings()
    settings.storage_dir = ROOT / f"store-{size}"
    docs = ROOT / f"docs-{size}"
    done = settings.storage_dir / "build.json"
    if done.is_file():
        return settings, json.loads(done.read_text())
    shutil.rmtree(settings.storage_dir, ignore_errors=True)
    shutil.rmtree(docs, ignore_errors=True)
    docs.mkdir(parents=True)
    for number in range(size // SECTIONS_PER_DOC):
        write_report(docs / f"report-{number:05d}.md", number, pool)
    pipeline_module.build_embedding = lambda _settings: stand_in
    report = ingest([docs], settings)
    figures = {"files": report.files, "chunks": report.chunks, "seconds": report.seconds,
               "chunks_per_s": round(report.chunks / report.seconds, 1), "convert_s": report.convert_seconds,
               "index_s": report.index_seconds}
    done.write_text(json.dumps(figures))
    return settings, figures


def add_one(settings: Settings, pool: list[str], stand_in: BaseEmbedding) -> dict:
    """Adding one 50-section report to the store, then removing it (seconds, each 3 times)."""
    pipeline_module.build_embedding = lambda _settings: stand_in
    folder = ROOT / "one"
    folder.mkdir(parents=True, exist_ok=True)
    adds, removes = [], []
    for attempt in range(3):
        path = folder / f"added-{attempt}.md"
        write_report(path, 10_000_000 + attempt, pool)
        clock = time.perf_counter()
        report = ingest([path], settings, progress=False)
        adds.append(time.perf_counter() - clock)
        assert report.indexed == 1, report.summary()
        clock = time.perf_counter()
        assert remove([report.doc_ids[str(path)]], settings)
        removes.append(time.perf_counter() - clock)
    return {"add_s": round(statistics.median(adds), 2), "remove_s": round(statistics.median(removes), 2),
            "chunks_added": report.chunks}


def percentiles(ms: list[float]) -> dict:
    return {f"p{q}_ms": round(float(np.percentile(ms, q)), 1) for q in (50, 95)}


def latency(storage: str, chroma_url: str, queries: int) -> dict:
    """Runs in its own process: per-stage latency over the devbench questions, and peak RSS."""
    settings = load_settings()
    settings.storage_dir = Path(storage)
    settings.store.chroma_url = chroma_url
    questions = [q["question"] for c in corpora() if c.name != "sample" for q in load_qa(c.qa)][:queries]
    embedding = build_embedding(settings)
    rerank = build_rerank_stage(settings, Store(settings), embedding)
    stages = {"dense": dense_retriever(settings, embedding), "bm25": bm25_retriever(settings),
              "hybrid": hybrid_retriever(settings, embedding, MockLLM())}
    for warm in questions[:5]:
        stages["hybrid"].retrieve(warm)
    times: dict[str, list[float]] = {name: [] for name in [*stages, "rerank", "retrieve+rerank"]}
    for question in questions:
        for name, retriever in stages.items():
            query = QueryBundle(question)  # a fresh one: each stage embeds the question itself
            clock = time.perf_counter()
            found = retriever.retrieve(query)
            times[name].append((time.perf_counter() - clock) * 1000)
        clock = time.perf_counter()
        rerank.postprocess_nodes(found, query_bundle=query)
        times["rerank"].append((time.perf_counter() - clock) * 1000)
        times["retrieve+rerank"].append(times["hybrid"][-1] + times["rerank"][-1])
    return {name: percentiles(ms) for name, ms in times.items()} | {
        "queries": len(questions),
        "peak_rss_gib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)}


def measured_in_a_fresh_process(settings: Settings, queries: int, chroma_url: str = "") -> dict:
    command = [sys.executable, __file__, "--latency-of", str(settings.storage_dir),
               "--chroma-url", chroma_url, "--queries", str(queries)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def chroma_server(path: Path):
    """`chroma run` on the store's folder, on a free loopback port; returns (process, url)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    chroma = Path(sys.executable).with_name("chroma")
    arguments = [str(chroma), "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(arguments,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=dict(os.environ, ANONYMIZED_TELEMETRY="False"))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.5)
    process.kill()
    raise RuntimeError("the Chroma server did not start")


def size_on_disk(settings: Settings) -> dict:
    def megabytes(path: Path) -> float:
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        return round(sum(p.stat().st_size for p in files) / 2**20, 1)

    store = Store(settings)
    return {"chroma_mb": megabytes(store.chroma_dir), "lexical_mb": megabytes(store.lexical_file),
            "docstore_mb": megabytes(store.docstore_dir)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000", help="Chunks per store (comma-separated).")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "storage/reports/bench-scale.json")
    parser.add_argument("--latency-of", default="", help=argparse.SUPPRESS)
    parser.add_argument("--chroma-url", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.latency_of:
        print(json.dumps(latency(args.latency_of, args.chroma_url, args.queries)))
        return
    pool = sentences()
    stand_in = SentenceMeanEmbedding(sentence_vectors(pool, load_settings()))
    results = {"sentences": len(pool), "stores": str(STORES)}
    for size in map(int, args.sizes.split(",")):
        settings, built = build(size, pool, stand_in)
        figures = {"build": built, "add_one": add_one(settings, pool, stand_in),
                   "disk": size_on_disk(settings),
                   "on_disk": measured_in_a_fresh_process(settings, args.queries)}
        server, url = chroma_server(Store(settings).chroma_dir)
        try:
            figures["chroma_server"] = measured_in_a_fresh_process(settings, args.queries, url)
        finally:
            server.terminate()
            server.wait()
        results[f"{size}"] = figures
        print(f"\n{size} chunks wanted: {json.dumps(figures, indent=1)}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
