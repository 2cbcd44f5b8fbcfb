"""RAGAS 0.4 answer and context metrics, judged by our own local LLM and embedding model.

RAGAS is the common yardstick for RAG answers (faithfulness, relevancy, context precision and
recall, factual correctness), so scores from it compare with published figures. Its default judge
is OpenAI; here the judge is the LlamaIndex LLM the project already runs (embedded llama.cpp or a
vLLM server) and the embedding is the project's own, so no document leaves the premises.

RAGAS 0.4's new `ragas.metrics.collections` accept only Instructor/OpenAI-client LLMs; the classic
metric classes (still exported by `ragas.metrics`, with a deprecation warning) accept any
`BaseRagasLLM`, which is what `LlamaIndexLLMWrapper` gives. Each (row, metric) pair is one job of
ragas' Executor, submitted only when the row has the fields the metric needs, so a missing
reference or failed judgement costs that one score (None), never the run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import rag  # noqa: F401  (offline environment before ragas is imported)
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.llms import LLM
from ragas.dataset_schema import SingleTurnSample
from ragas.embeddings.base import LlamaIndexEmbeddingsWrapper
from ragas.executor import Executor
from ragas.llms.base import LlamaIndexLLMWrapper
from ragas.metrics import (
    BleuScore,
    ChrfScore,
    FactualCorrectness,
    Faithfulness,
    IDBasedContextPrecision,
    IDBasedContextRecall,
    LLMContextPrecisionWithReference,
    LLMContextRecall,
    NonLLMStringSimilarity,
    ResponseRelevancy,
    RougeScore,
)
from ragas.run_config import RunConfig

LLM_METRICS = (
    "faithfulness", "answer_relevancy", "context_precision", "context_recall", "factual_correctness"
)
NON_LLM_METRICS = ("rouge", "bleu", "chrf", "string_similarity", "id_context_precision", "id_context_recall")


@dataclass
class RagasRow:
    question: str
    answer: str
    contexts: list[str]  # retrieved chunk texts given to the generator
    reference: str | None  # reference answer; None: metrics needing it give None
    retrieved_ids: list[str]  # chunk ids retrieved
    reference_ids: list[str]  # gold chunk ids; empty: ID-based metrics give None


def _build_metrics(
    names: Sequence[str], llm: LLM | None, embedding: BaseEmbedding | None, run_config: RunConfig
):
    unknown = [name for name in names if name not in LLM_METRICS + NON_LLM_METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; known: {LLM_METRICS + NON_LLM_METRICS}")
    if llm is None and any(name in LLM_METRICS for name in names):
        raise ValueError(f"metrics {[n for n in names if n in LLM_METRICS]} need a judge LLM, got llm=None")
    if embedding is None and "answer_relevancy" in names:
        raise ValueError("metric 'answer_relevancy' needs an embedding model, got embedding=None")

    judge = None if llm is None else LlamaIndexLLMWrapper(llm, run_config=run_config)
    embedder = None if embedding is None else LlamaIndexEmbeddingsWrapper(embedding, run_config=run_config)
    factories = {
        "faithfulness": lambda: Faithfulness(llm=judge),
        # One generated question per answer: LlamaIndex LLMs return one completion per call anyway.
        "answer_relevancy": lambda: ResponseRelevancy(llm=judge, embeddings=embedder, strictness=1),
        "context_precision": lambda: LLMContextPrecisionWithReference(llm=judge),
        "context_recall": lambda: LLMContextRecall(llm=judge),
        # Defaults (F1, low atomicity and coverage): four judge calls per row.
        "factual_correctness": lambda: FactualCorrectness(llm=judge),
        "rouge": RougeScore,
        "bleu": BleuScore,
        "chrf": ChrfScore,
        "string_similarity": NonLLMStringSimilarity,
        "id_context_precision": IDBasedContextPrecision,
        "id_context_recall": IDBasedContextRecall,
    }
    metrics = {name: factories[name]() for name in dict.fromkeys(names)}
    for metric in metrics.values():
        metric.init(run_config)
    return metrics


def _has(sample: SingleTurnSample, column: str) -> bool:
    value = getattr(sample, column)
    return value is not None and value != []


def _score(value) -> float | None:
    if value is None or math.isnan(value):
        return None
    return min(max(float(value), 0.0), 1.0)  # float noise: BLEU of identical texts is 1.0000000000000004


def ragas_scores(
    rows: list[RagasRow],
    llm: LLM | None,
    embedding: BaseEmbedding | None,
    metrics: Sequence[str] = LLM_METRICS + NON_LLM_METRICS,
    timeout_s: int = 600,
    max_workers: int = 1,
    show_progress: bool = True,
) -> list[dict[str, float | None]]:
    """One dict per row: metric name -> score, or None when it could not be computed for that row.

    The judge answers in JSON, about 60 tokens per statement of the answer: with the generator's
    256 new tokens, answers of more than three statements truncate it and score None; build the
    judge with a larger `llm.max_new_tokens` (1024). `timeout_s` bounds one metric on one row; it
    cannot cut short the embedded llama.cpp, whose async call blocks, only a vLLM server's.
    """
    # ragas retries a failing LLM call up to 10 times with back-off up to 60 s, made for
    # rate-limited APIs; a local judge's errors (context overflow) just repeat.
    run_config = RunConfig(timeout=timeout_s, max_workers=max_workers, max_retries=2, max_wait=5)
    built = _build_metrics(metrics, llm, embedding, run_config)

    executor = Executor(desc="RAGAS", show_progress=show_progress, run_config=run_config)  # failed job: NaN
    jobs = []
    for i, row in enumerate(rows):
        sample = SingleTurnSample(
            user_input=row.question,
            response=row.answer,
            retrieved_contexts=row.contexts,
            reference=row.reference,
            retrieved_context_ids=row.retrieved_ids,
            reference_context_ids=row.reference_ids,
        )
        for name, metric in built.items():
            if all(_has(sample, column) for column in metric.required_columns["SINGLE_TURN"]):
                executor.submit(metric.single_turn_ascore, sample, None, timeout_s, name=f"{name}-{i}")
                jobs.append((i, name))

    scores: list[dict[str, float | None]] = [dict.fromkeys(built) for _ in rows]
    for (i, name), value in zip(jobs, executor.results()):
        scores[i][name] = _score(value)
    return scores
