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
from contextlib import closing
from dataclasses import dataclass

from llama_index.core.llms import LLM

from rag.scoring import _HANGUL, hangul_script

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
        rewrite = _one_line(self.llm, self.condense_prompt.format(history=conversation, question=question))
        if not rewrite:
            return question
        if leaked(rewrite, f"{conversation}\n{question}"):
            # A code from the prompt's examples ("test A-12" for "that test"): the earlier
            # question and this one together still name what was meant.
            return f"{turns[-1][0]} {question}"
        return rewrite

    def translate(self, question: str, language: str) -> str | None:
        """The question in `language`; None when the model did not write it in that language's
        script (a 1.5B model sometimes echoes the question or the instructions). A reply that
        answers instead of translating ("데비안 프로젝트는 1993년에 시작되었습니다.") is kept: it
        holds the question's words in the corpus's language, which is what retrieval needs."""
        reply = _one_line(self.llm, self.translate_prompt.format(question=question, language=language))
        return reply if reply and written_in(reply, language) else None


_CODE_OR_FIGURE = re.compile(r"\w*\d\w*(?:[-./]\w+)*|\w+(?:[-./]\w+)*[-./]\w*\d\w*")


def leaked(rewrite: str, source: str) -> bool:
    """Whether the rewrite names a code or figure ("A-12", "300") that the conversation does not."""
    known = source.lower()
    return any(code.lower() not in known for code in _CODE_OR_FIGURE.findall(rewrite))


def written_in(text: str, language: str) -> bool:
    """Korean: any Hangul (a Korean sentence about `/etc/kbd/config` may hold more Latin letters
    than syllables); English: mostly Latin letters."""
    return bool(_HANGUL.search(text)) if language == "Korean" else script_language(text) == language


def _one_line(llm: LLM, prompt: str) -> str:
    """The reply's first line, decoding stopped at its end (the small model goes on with another
    example when let)."""
    reply = ""
    with closing(llm.stream_complete(prompt)) as stream:
        for chunk in stream:
            head, newline, _ = (chunk.delta or "").partition("\n")
            reply += head if newline else chunk.delta or ""
            if newline and reply.strip():
                break
    return first_line(reply)
