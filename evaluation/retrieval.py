"""Retrieval evaluation by stage, as in the paper's Table 5 and the PDF study: dense, BM25,
their fusion, and the fusion reranked by the configured rerank stage, each ranking n chunks, scored
against the QA file's gold evidence (evaluation.metrics). `sweep` repeats it for setting
variants (header on/off, PDF strategy, ...), each ingesting the corpus into its own store.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import Any

from llama_index.core.llms import MockLLM
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle
from pydantic import ValidationError
from tqdm import tqdm

from evaluation.metrics import aggregate, evidence_hits, question_metrics
from rag.models import build_embedding
from rag.postprocessors import build_rerank_stage
from rag.ranking import ranker_in_use
from rag.retrieval import bm25_retriever, dense_retriever, hybrid_retriever
from rag.settings import Settings, problems, renamed
from rag.store import Store, collection

STAGES = ("dense", "bm25", "hybrid", "rerank")  # pipeline order; rerank is what the pipeline uses


def ranked(nodes: list[NodeWithScore]) -> list[tuple[str, str, dict]]:
    return [(n.node.node_id, n.node.get_content(metadata_mode=MetadataMode.NONE), n.node.metadata)
            for n in nodes]


def evaluate_stages(
    settings: Settings, qa: list[dict[str, Any]], n: int, progress: bool = True
) -> tuple[dict[str, dict], list[dict[str, Any]]]:
    """({stage: aggregated metrics}, per-question rows) on the store `settings` points at.
    The rerank stage reorders the hybrid stage's n chunks; the pipeline keeps its first keep_k."""
    embedding = build_embedding(settings)
    rerank = build_rerank_stage(settings, Store(settings), embedding, top_n=n)
    retrievers = {
        "dense": dense_retriever(settings, embedding, n),
        "bm25": bm25_retriever(settings, n),
        "hybrid": hybrid_retriever(settings, embedding, MockLLM(), n),  # no LLM call: one query
    }
    per_stage: dict[str, list[dict]] = {stage: [] for stage in STAGES}
    rows = []
    for item in tqdm(qa, desc=f"retrieval n={n}", unit="q", disable=not progress):
        query = QueryBundle(item["question"])
        rankings = {stage: r.retrieve(query) if r is not None else [] for stage, r in retrievers.items()}
        rankings["rerank"] = rerank.postprocess_nodes(rankings["hybrid"], query_bundle=query)
        row: dict[str, Any] = {"id": item["id"], "n": n, "stages": {}}
        for stage, nodes in rankings.items():
            hits, located = evidence_hits(item["evidence"], ranked(nodes))
            metrics = question_metrics(hits, located, item["evidence"])
            per_stage[stage].append(metrics)
            row["stages"][stage] = metrics | {"ranked": [n.node.node_id for n in nodes[:10]]}
        rows.append(row)
    return {stage: aggregate(values) for stage, values in per_stage.items()}, rows


def variants(vary: list[str]) -> list[dict[str, str]]:
    """["headers.enabled=true,false", "ingest.pdf_strategy=text,anchored"] -> the cross product
    as {"headers.enabled": "true", "ingest.pdf_strategy": "text"}, ... ([{}] when empty)."""
    axes = []
    for spec in vary:
        key, sep, values = spec.partition("=")
        if not sep or "." not in key or not values:
            raise ValueError(f"--vary {spec!r} is not SECTION.KEY=VALUE1,VALUE2")
        axes.append([(key.strip(), v.strip()) for v in values.split(",")])
    return [dict(combo) for combo in itertools.product(*axes)]


def with_overrides(settings: Settings, overrides: dict[str, str]) -> Settings:
    """A copy of `settings` with SECTION.KEY values set (validated by the section's model)."""
    copy = settings.model_copy(deep=True)
    for dotted, value in overrides.items():
        section_name, key = dotted.split(".", 1)
        section = getattr(copy, section_name, None)
        if section is None or key not in type(section).model_fields:
            new = renamed(dotted)
            raise ValueError(f"--vary {dotted}: {dotted} is now {new}" if new
                             else f"unknown setting {dotted!r}")
        try:
            setattr(copy, section_name, type(section).model_validate(section.model_dump() | {key: value}))
        except ValidationError as error:
            raise ValueError(f"--vary {dotted}={value}: {problems(error, section_name)}") from None
    return copy


def label(overrides: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in overrides.items()) or "current"


def evaluate_retrieval(
    settings: Settings,
    qa: list[dict[str, Any]],
    ns: list[int],
    vary: list[str] | None = None,
    corpus: list[Path] | None = None,
    progress: bool = True,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """metrics.json of docs/FORMATS.md (the first variant at the first n under "stages"), plus every
    n under "by_n" and every variant under "variants"; and the per-question rows. Without
    `corpus` the configured store is evaluated as it is."""
    from ingestion.pipeline import ingest

    qa = [item for item in qa if item.get("answerable", True) and item.get("evidence")]
    if not qa:
        raise ValueError("no answerable question of the QA file has evidence, which retrieval is "
                         "scored against (docs/FORMATS.md, QA item)")
    combos = variants(vary or [])
    if combos != [{}] and not corpus:
        raise ValueError("--vary needs --corpus: each variant ingests the corpus into its own store")
    configured = [with_overrides(settings, overrides) for overrides in combos]  # every value checked first
    results: dict[str, dict[str, Any]] = {}
    rows, rankers = [], []  # the learned ranker each variant's rerank stage uses
    for overrides, current in zip(combos, configured):
        with tempfile.TemporaryDirectory(prefix="ragqa-eval-", ignore_cleanup_errors=True) as scratch:
            if corpus:  # a fresh store per variant; the configured store is left alone
                current.storage_dir = Path(scratch)
                current.store = current.store.model_copy(update={"chroma_url": ""})  # never a shared server
                report = ingest(corpus, current, progress=progress)
                if report.failed:
                    failed = "; ".join(f"{f['file']}: {f['reason']}" for f in report.failed[:3])
                    raise ValueError(f"{label(overrides)}: {len(report.failed)} files of --corpus failed "
                                     f"to ingest ({failed})")
            elif collection(current).count() == 0:
                raise ValueError("no documents are indexed: run `ragqa ingest` or pass --corpus")
            results[label(overrides)] = {}
            rankers.append(ranker_in_use(current.rerank.ranker_file, Store(current).refit_file,
                                         current.rerank.refit)[1] if current.rerank.method == "ltr" else {})
            for n in ns:
                stages, question_rows = evaluate_stages(current, qa, n, progress)
                results[label(overrides)][str(n)] = stages
                rows += [row | {"variant": label(overrides)} for row in question_rows]
    first = next(iter(results.values()))
    metrics = {"n_questions": len(qa), "stages": first[str(ns[0])], "by_n": first, "ranker": rankers[0]}
    if len(results) > 1:
        metrics["variants"] = results
    return metrics, rows
