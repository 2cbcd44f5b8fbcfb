"""Questions rewritten before retrieval, by the LLM:

- a chat's follow-up made to stand alone (LlamaIndex's condense-question pattern): retrieval
  cannot resolve "and the passenger?";
- a question written in the other language than most of the corpus, translated into the
  corpus's language. BM25, the ranker's wording features and the context's sentence choice all
  work within one language: on English questions over the Korean Debian FAQ the rerank stage
  found the gold chunk in its top 5 for 0.35 of the questions as asked and 0.70 with the
  translation (docs/BENCHMARKS.md). Retrieval then runs on both questions and the ranker orders
  their union by the translation; the answer is still written in the asker's language.

Korean and English are told apart by script (rag/scoring.hangul_script).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from llama_index.core.llms import LLM

from rag.scoring import hangul_script

_LABEL = re.compile(r"^(standalone question|question|translation|korean|english)\s*:\s*", re.I)


def script_language(text: str) -> str:
    return "Korean" if hangul_script(text) else "English"


def corpus_language(texts: Sequence[str]) -> str | None:
    """The language most of these chunk texts are written in; None for no texts."""
    if not texts:
        return None
    korean = sum(hangul_script(t) for t in texts)
    return "Korean" if 2 * korean > len(texts) else "English"


def first_line(reply: str) -> str:
    """The reply's first non-empty line, without a label the model may have echoed."""
    lines = [line.strip() for line in reply.strip().splitlines() if line.strip()]
    return _LABEL.sub("", lines[0].strip('"')).strip().strip('"') if lines else ""


@dataclass
class QuestionRewriter:
    llm: LLM
    condense_prompt: str
    translate_prompt: str
    history_turns: int = 3

    def standalone(self, question: str, history: Sequence[tuple[str, str]]) -> str:
        """The follow-up rewritten from the last `history_turns` (question, answer) turns;
        unchanged without history, and when the rewrite comes back empty."""
        turns = list(history)[-self.history_turns :] if self.history_turns else []
        if not turns:
            return question
        conversation = "\n".join(f"User: {q}\nAssistant: {a}" for q, a in turns)
        reply = self.llm.complete(self.condense_prompt.format(history=conversation, question=question)).text
        return first_line(reply) or question

    def translate(self, question: str, language: str) -> str | None:
        """The question in `language`; None when the model did not write it in that language's
        script (a 1.5B model sometimes echoes the question or the instructions)."""
        reply = first_line(self.llm.complete(self.translate_prompt.format(question=question, language=language)).text)
        if not reply or script_language(reply) != language:
            return None
        return reply
