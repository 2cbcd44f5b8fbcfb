"""The embedding backends side by side (issue 15): agreement with PyTorch, throughput, retrieval.

    .venv/bin/python benchmarks/embedding_backends.py [--batch-sizes 16,32,64] [--out FILE]

- Agreement: cosine between each ONNX backend's and PyTorch's vector of the same text, min and
  mean per language (English: the Debian FAQ HTML store, Korean: its Korean translation's store)
  and kind (questions of devbench's QA files with the query prefix, stored chunks as embedded,
  with the passage prefix).
- Throughput: chunks/s embedding every chunk of the English store, as ingestion does
  (`get_text_embedding_batch`), the best run of two; PyTorch at each batch size, ONNX once (it
  runs one text per pass whatever the batch size, see rag/embeddings.py).
- Retrieval: dense retrieval of the English questions over the English chunks, each backend's
  query vectors against its own chunk matrix (and the int8 queries against the stored PyTorch
  vectors: switching backend without re-ingesting); MAP@1, Success@5, MRR as evaluation.metrics.

ONNX fp32 is exported into a temporary folder (the shipped export is int8 only). Prints a table
and writes JSON.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from common import arguments, write_json
from corpora import STORES, answerable
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.schema import MetadataMode

import rag  # noqa: F401  (offline environment before any model import)
from evaluation.metrics import aggregate, evidence_hits, question_metrics
from rag.embeddings import OnnxEmbedding
from rag.models import build_embedding
from rag.prepare_onnx import export_onnx
from rag.settings import REPO_ROOT, Settings, load_settings
from rag.store import all_nodes, collection

DEVBENCH = REPO_ROOT.parent / "shared/devbench/qa"
LANGUAGES = {"en": "debian_faq_en_html", "ko": "debian_faq_ko_html"}


def store_settings(name: str, backend: str, batch_size: int) -> Settings:
    settings = load_settings()
    settings.storage_dir = STORES / name
    settings.embedding = settings.embedding.model_copy(update={"backend": backend, "batch_size": batch_size})
    return settings


def embed(model: BaseEmbedding, texts: list[str], query: bool) -> np.ndarray:
    if query:
        return np.asarray(model._embed(texts, prompt_name="query"), dtype=np.float32)
    return np.asarray(model.get_text_embedding_batch(texts), dtype=np.float32)


def throughput(model: BaseEmbedding, texts: list[str]) -> float:
    best = float("inf")
    for _ in range(2):
        start = time.perf_counter()
        model.get_text_embedding_batch(texts)
        best = min(best, time.perf_counter() - start)
    return len(texts) / best


def retrieval(queries: np.ndarray, chunks: np.ndarray, qa: list[dict], nodes) -> dict:
    per_question = []
    for item, vector in zip(qa, queries):
        top = np.argsort(-(chunks @ vector))[:10]
        ranked = [(nodes[i].node_id, nodes[i].get_content(metadata_mode=MetadataMode.NONE), nodes[i].metadata)
                  for i in top]
        hits, located = evidence_hits(item["evidence"], ranked)
        per_question.append(question_metrics(hits, located, item["evidence"]))
    metrics = aggregate(per_question)
    return {k: metrics[k] for k in ("map@1", "success@5", "mrr")}


def main() -> None:
    parser = arguments("embedding-backends")
    parser.add_argument("--batch-sizes", default="16,32,64")
    args = parser.parse_args()
    batch_sizes = [int(b) for b in args.batch_sizes.split(",")]

    texts: dict[str, dict[str, list[str]]] = {}
    qa: dict[str, list[dict]] = {}
    for language, name in LANGUAGES.items():
        nodes = all_nodes(store_settings(name, "torch", 16))
        qa[language] = answerable(DEVBENCH / f"{name}.jsonl")
        texts[language] = {
            "passage": [n.get_content(metadata_mode=MetadataMode.EMBED) for n in nodes],
            "query": [q["question"] for q in qa[language]],
        }
    en_nodes = all_nodes(store_settings(LANGUAGES["en"], "torch", 16))

    scratch = Path(tempfile.mkdtemp(prefix="onnx-fp32-"))
    settings = store_settings(LANGUAGES["en"], "torch", 16)
    export_onnx(settings.embedding_path, scratch / "model_fp32.onnx")
    shutil.copy(settings.embedding_path / "tokenizer.json", scratch / "tokenizer.json")
    backends = {  # name: (embedder at a batch size, the batch sizes tried)
        "torch": (lambda b: build_embedding(store_settings(LANGUAGES["en"], "torch", b)), batch_sizes),
        "onnx-fp32": (
            lambda b: OnnxEmbedding(folder=str(scratch), file_name="model_fp32.onnx", embed_batch_size=b),
            [16],
        ),
        "onnx-int8": (lambda b: build_embedding(store_settings(LANGUAGES["en"], "onnx", b)), [16]),
    }

    results: dict = {"chunks": len(texts["en"]["passage"]), "questions": len(qa["en"]), "backends": {}}
    vectors: dict[str, dict] = {}
    for backend, (make, sizes) in backends.items():
        rates = {}
        for batch_size in sizes:
            rates[batch_size] = round(throughput(make(batch_size), texts["en"]["passage"]), 1)
            print(f"{backend:10} batch {batch_size:3}: {rates[batch_size]:7.1f} chunks/s", flush=True)
        model = make(max(rates, key=rates.get))
        vectors[backend] = {
            (language, kind): embed(model, items, kind == "query")
            for language, kinds in texts.items() for kind, items in kinds.items()
        }
        found = retrieval(vectors[backend][("en", "query")], vectors[backend][("en", "passage")], qa["en"],
                          en_nodes)
        results["backends"][backend] = {"chunks_per_s": rates, "retrieval_en": found}
    shutil.rmtree(scratch)

    stored = collection(store_settings(LANGUAGES["en"], "torch", 16)).get(ids=[n.node_id for n in en_nodes],
                                                                         include=["embeddings"])
    stored_matrix = np.asarray(stored["embeddings"], dtype=np.float32)
    results["int8_queries_on_stored_torch_vectors"] = retrieval(
        vectors["onnx-int8"][("en", "query")], stored_matrix, qa["en"], en_nodes)

    reference = vectors["torch"]
    for backend in ("onnx-fp32", "onnx-int8"):
        agreement = {}
        for key, theirs in vectors[backend].items():
            cosine = np.einsum("ij,ij->i", theirs, reference[key])
            agreement["/".join(key)] = {"n": len(cosine), "min": round(float(cosine.min()), 4),
                                        "mean": round(float(cosine.mean()), 4)}
        results["backends"][backend]["cosine_vs_torch"] = agreement

    torch_best = max(results["backends"]["torch"]["chunks_per_s"].values())
    print(f"\n{results['chunks']} chunks, {results['questions']} questions (Debian FAQ EN)")
    for backend, row in results["backends"].items():
        best = max(row["chunks_per_s"].values())
        r = row["retrieval_en"]
        print(f"{backend:10} {best:7.1f} chunks/s ({best / torch_best:.2f}x)  MAP@1 {r['map@1']:.3f}  "
              f"Success@5 {r['success@5']:.3f}  MRR {r['mrr']:.3f}")
        for key, c in row.get("cosine_vs_torch", {}).items():
            print(f"{'':12}cosine vs torch {key:12} n={c['n']:3}  min {c['min']:.4f}  mean {c['mean']:.4f}")
    r = results["int8_queries_on_stored_torch_vectors"]
    print(f"int8 queries on the stored torch vectors: MAP@1 {r['map@1']:.3f}  Success@5 {r['success@5']:.3f}")
    write_json(args.out, results)


if __name__ == "__main__":
    main()
