"""Training questions mined from the corpus itself, in seconds and without the LLM
(`ragqa qa mine`), in the QA format of `ragqa qa generate` so the same trainers and evaluators
read them. Two kinds, each pointing at the chunk it came from:

- `cloze`: a crop of one of the chunk's sentences (inverse cloze: a sentence asks for the rest of
  its passage; cropping keeps it from being a verbatim copy);
- `heading`: a section's heading asks for the section's first chunk.

Header-field questions are left out: every chunk of a document carries its header, so one
chunk would be labelled relevant and its siblings hard negatives for the same words.

Language-agnostic (sentences and words are split as the matcher splits them), so Korean
documents give Korean questions. Hard negatives are chosen at training time (training/pairs.py).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from llama_index.core.schema import BaseNode, MetadataMode

from rag.files import write_text_atomically
from rag.text import split_sentences
from rag.settings import Settings
from rag.store import all_nodes

MIN_WORDS = 6  # shorter sentences (a label, a table cell) make no question


def _order(node: BaseNode) -> tuple[str, int]:
    """Document, then position: chunk ids end with their position in the document."""
    tail = node.node_id.rsplit("-", 1)[-1]
    return node.metadata.get("doc", ""), int(tail) if tail.isdigit() else 0


def crop(sentence: str, rng: random.Random) -> str:
    """60-90% of the sentence's words, a contiguous run, without the closing punctuation."""
    words = sentence.split()
    size = max(MIN_WORDS - 1, round(len(words) * rng.uniform(0.6, 0.9)))
    start = rng.randrange(0, len(words) - size + 1)
    return " ".join(words[start : start + size]).rstrip(".!?。")


def _item(kind: str, number: int, question: str, node: BaseNode) -> dict[str, Any]:
    return {
        "id": f"mined-{kind}-{number:05d}", "question": question, "answer": None, "answerable": True,
        "kind": kind,
        "evidence": [{"doc": node.metadata.get("doc"), "chunk_id": node.node_id, "required": True}],
    }


def mine_questions(settings: Settings, per_chunk: int = 2, seed: int = 13) -> list[dict[str, Any]]:
    """Questions from every stored chunk; the same store and seed give the same questions."""
    nodes = sorted(all_nodes(settings), key=_order)
    if not nodes:
        raise ValueError(f"no documents are indexed in {settings.storage_dir}: run `ragqa ingest PATH` first")
    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    seen_sections: set[tuple[str, str]] = set()
    for node in nodes:
        doc = node.metadata.get("doc", "")
        text = node.get_content(metadata_mode=MetadataMode.NONE)
        sentences = [s for s in split_sentences(text)
                     if len(s.split()) >= MIN_WORDS and not s.lstrip().startswith(("|", "#"))]
        for sentence in rng.sample(sentences, min(per_chunk, len(sentences))):
            items.append(_item("cloze", len(items), crop(sentence, rng), node))
        section = (node.metadata.get("section") or "").split(" > ")[-1].strip()
        if len(section.split()) >= 2 and (doc, section) not in seen_sections:
            seen_sections.add((doc, section))
            items.append(_item("heading", len(items), section, node))
    return items


def write_questions(items: list[dict[str, Any]], out: Path) -> None:
    write_text_atomically(out, "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items))
