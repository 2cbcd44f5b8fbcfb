"""Retrieval figures of issue 3: the PDF-extraction study rerun, and header prefixing (Ver.0/1).

    .venv/bin/python benchmarks/retrieval_study.py [--out FILE]

1. For each PDF strategy (text, layout, markdown, anchored): ingest
   ../shared/devbench/docs/debian-faq.en.pdf into a fresh store and score dense top-10
   retrieval on ../shared/devbench/qa/debian_faq_en_pdf.jsonl (gold: document + page).
2. The sample corpus with the header prefix off (Ver.0) and on (Ver.1), scored on
   data/sample/qa.jsonl (answerable questions).
Prints the tables and writes JSON.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from common import arguments, write_json

import rag  # noqa: F401
from evaluation.gold import load_qa
from evaluation.metrics import aggregate, evidence_hits, question_metrics
from ingestion.pipeline import ingest
from llama_index.core import VectorStoreIndex
from llama_index.core.schema import MetadataMode
from rag.models import build_embedding
from rag.settings import REPO_ROOT, Settings, load_settings
from rag.store import vector_store

DEVBENCH = REPO_ROOT.parent / "shared" / "devbench"
COLUMNS = ["map@1", "map@5", "success@1", "success@5", "evidence_recall@5", "mean_evidence_rank",
           "source_traceability"]


def evaluate(settings: Settings, qa: list[dict], top_n: int = 10) -> dict:
    index = VectorStoreIndex.from_vector_store(vector_store(settings), embed_model=build_embedding(settings))
    retriever = index.as_retriever(similarity_top_k=top_n)
    per_question = []
    for item in qa:
        if not item.get("answerable", True) or not item["evidence"]:
            continue
        ranked = [
            (n.node.node_id, n.node.get_content(metadata_mode=MetadataMode.NONE), n.node.metadata)
            for n in retriever.retrieve(item["question"])
        ]
        hits, located = evidence_hits(item["evidence"], ranked)
        per_question.append(question_metrics(hits, located, item["evidence"]))
    return {"n_questions": len(per_question), **aggregate(per_question)}


def run(paths: list[Path], qa: list[dict], **overrides) -> dict:
    settings = load_settings()
    settings.storage_dir = Path(tempfile.mkdtemp(prefix="ragqa-study-"))
    for section, values in overrides.items():
        setattr(settings, section, getattr(settings, section).model_copy(update=values))
    started = time.perf_counter()
    report = ingest(paths, settings, progress=False)
    result = evaluate(settings, qa)
    result.update(chunks=report.chunks, seconds=round(time.perf_counter() - started, 1))
    return result


def show(title: str, rows: dict[str, dict]) -> None:
    print(f"\n{title}")
    print(f"{'':10}" + "".join(f"{c:>20}" for c in COLUMNS) + f"{'chunks':>8}")
    for name, row in rows.items():
        print(f"{name:10}" + "".join(f"{str(row.get(c)):>20}" for c in COLUMNS) + f"{row['chunks']:>8}")


def main() -> None:
    parser = arguments("retrieval-study")
    args = parser.parse_args()
    pdf_qa = load_qa(DEVBENCH / "qa/debian_faq_en_pdf.jsonl")
    pdf = [DEVBENCH / "docs/debian-faq.en.pdf"]
    strategies = {s: run(pdf, pdf_qa, ingest={"pdf_strategy": s})
                  for s in ("text", "layout", "markdown", "anchored")}
    show("PDF strategies, debian-faq.en.pdf, dense top-10 (gold: page)", strategies)
    sample_qa = load_qa(REPO_ROOT / "data/sample/qa.jsonl")
    sample = [REPO_ROOT / "data/sample/docs"]
    headers = {f"Ver.{int(on)}": run(sample, sample_qa, headers={"enabled": on}) for on in (False, True)}
    show("Header prefix, sample corpus, dense top-10", headers)
    write_json(args.out, {"pdf_strategies": strategies, "headers": headers})


if __name__ == "__main__":
    main()
