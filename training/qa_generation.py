"""Training questions generated from the corpus (the paper's recipe, `ragqa qa generate`).

For each stored chunk the LLM writes a few questions that the chunk answers, each with a short
answer, from the chunk's header-prefixed text (so a question can name its test or document).
The output is the QA format of docs/FORMATS.md with `chunk_id` evidence; it trains the reranker and the
retriever (training/pairs.py) and doubles as a retrieval eval set. Lines are appended and
fsync'd one chunk at a time, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llama_index.core.llms import LLM
from llama_index.core.schema import BaseNode, MetadataMode
from tqdm import tqdm

from rag.replies import parse_json_object
from rag.settings import Settings
from rag.store import all_nodes

MIN_CHUNK_CHARS = 120  # shorter chunks (a title, a stray caption) give only trivial questions


def parse_pairs(reply: str, most: int) -> list[dict[str, str]]:
    """Valid, distinct (question, answer) pairs from an LLM reply; [] when there are none."""
    data = parse_json_object(reply) or {}
    pairs, seen = [], set()
    for pair in data.get("pairs") or []:
        if not isinstance(pair, dict):
            continue
        question = str(pair.get("question") or "").strip()
        answer = str(pair.get("answer") or "").strip()
        if not (10 <= len(question) <= 300 and 2 <= len(answer) <= 600) or question.lower() in seen:
            continue
        seen.add(question.lower())
        pairs.append({"question": question, "answer": answer})
    return pairs[:most]


@dataclass
class QAGenerator:
    """Asks the LLM for `per_chunk` question-answer pairs about one chunk, again when its reply
    holds none."""

    llm: LLM
    prompt: str
    per_chunk: int = 3
    retries: int = 1

    @classmethod
    def from_settings(cls, settings: Settings) -> QAGenerator:
        """The configured LLM with `[training]`'s budget, prompt and questions per chunk."""
        from rag.models import build_llm

        cfg = settings.training
        llm = build_llm(settings, settings.llm.model_copy(update={"max_new_tokens": cfg.max_new_tokens}))
        return cls(llm, cfg.qa_prompt_file.read_text(encoding="utf-8"), cfg.questions_per_chunk)

    def __call__(self, text: str) -> list[dict[str, str]]:
        for _ in range(1 + self.retries):
            reply = self.llm.complete(self.prompt.format(n=self.per_chunk, text=text)).text
            pairs = parse_pairs(reply, self.per_chunk)
            if pairs:
                return pairs
        return []


def select_chunks(nodes: list[BaseNode], docs: list[str] | None, limit: int | None) -> list[BaseNode]:
    """Chunks worth asking about, in document order; `limit` spreads evenly over the corpus."""
    chosen = [
        n for n in nodes
        if len(n.get_content(metadata_mode=MetadataMode.NONE)) >= MIN_CHUNK_CHARS
        and (not docs or n.metadata.get("doc") in docs)
    ]
    chosen.sort(key=lambda n: (n.metadata.get("doc", ""),
                               n.metadata.get("page") or n.metadata.get("slide") or 0, n.node_id))
    if limit and len(chosen) > limit:
        step = len(chosen) / limit
        chosen = [chosen[int(i * step)] for i in range(limit)]
    return chosen


def done_chunks(path: Path) -> set[str]:
    """Chunk ids an earlier run already wrote questions for (a torn last line is ignored)."""
    done = set()
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                done.add(json.loads(line)["evidence"][0]["chunk_id"])
            except (ValueError, KeyError, IndexError):
                continue
    return done


def qa_items(node: BaseNode, pairs: list[dict[str, str]]) -> list[dict[str, Any]]:
    evidence = [{"doc": node.metadata.get("doc"), "chunk_id": node.node_id, "required": True}]
    return [
        {"id": f"gen-{node.node_id}-{i}", "question": p["question"], "answer": p["answer"],
         "answerable": True, "evidence": evidence}
        for i, p in enumerate(pairs)
    ]


def generate_qa(
    settings: Settings,
    out: Path,
    generator: Callable[[str], list[dict[str, str]]],
    docs: list[str] | None = None,
    limit: int | None = None,
    progress: bool = True,
) -> dict[str, int]:
    """Write generated QA for the store's chunks to `out`, skipping chunks already there."""
    chunks = select_chunks(all_nodes(settings), docs, limit)
    if not chunks:
        raise ValueError("no chunk to generate questions from: ingest documents first")
    done = done_chunks(out)
    todo = [c for c in chunks if c.node_id not in done]
    out.parent.mkdir(parents=True, exist_ok=True)
    counts = {"chunks": len(chunks), "already_done": len(chunks) - len(todo), "questions": 0, "failed": 0}
    with out.open("a", encoding="utf-8") as file:
        for node in tqdm(todo, desc="qa generate", unit="chunk", disable=not progress):
            items = qa_items(node, generator(node.get_content(metadata_mode=MetadataMode.EMBED)))
            counts["questions"] += len(items)
            counts["failed"] += not items
            for item in items:
                file.write(json.dumps(item, ensure_ascii=False) + "\n")
            file.flush()
            os.fsync(file.fileno())
    return counts
