"""Questions rewritten by the LLM before retrieval: a chat's follow-up made to stand alone
(LlamaIndex's condense-question pattern), and a question in the language most of the corpus
lacks translated into the corpus's, since BM25, the ranker's wording features and the context's
sentence choice work within one language (docs/BENCHMARKS.md, "Questions in the other language
than the corpus"); retrieval runs on both and the answer keeps the asker's language. Languages
are told apart by script (rag/text.hangul_script).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from contextlib import closing
from dataclasses import dataclass

from llama_index.core.llms import LLM

from rag.text import HANGUL, hangul_script

_LABEL = re.compile(r"^(standalone question|question|translation|korean|english)\s*:\s*", re.I)


def script_language(text: str) -> str:
    return "Korean" if hangul_script(text) else "English"


MIN_SHARE = 0.2  # a language under this share of the documents is lacking: translate into the other


def document_languages(chunks: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Document id -> "Korean" or "English", from (document id, chunk text) pairs: its chunks'
    majority script. A Korean manual is Korean however many of its chunks list English commands."""
    korean: dict[str, int] = {}
    for doc, text in chunks:
        korean[doc] = korean.get(doc, 0) + (1 if hangul_script(text) else -1)
    return {doc: "Korean" if votes > 0 else "English" for doc, votes in korean.items()}


def document_shares(languages: dict[str, str]) -> dict[str, float]:
    """The share of the documents written in Korean and in English (`document_languages`):
    counted by documents, not chunks."""
    if not languages:
        return {}
    share = sum(language == "Korean" for language in languages.values()) / len(languages)
    return {"Korean": share, "English": 1.0 - share}


def translation_target(question: str, shares: dict[str, float]) -> str | None:
    """The language to translate the question into: the corpus's, when the corpus lacks the
    question's own (under MIN_SHARE of its documents); None when it has enough of it."""
    if not shares or shares[script_language(question)] >= MIN_SHARE:
        return None
    return max(shares, key=shares.__getitem__)


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
    count_tokens: Callable[[str], int] = len  # the rewriting LLM's tokens of a text
    window: int = 2048  # tokens a rewriting prompt may take (the LLM's window less its reply)

    def standalone(self, question: str, history: Sequence[tuple[str, str]]) -> str:
        """The follow-up rewritten from the last `history_turns` (question, answer) turns that
        fit the rewriting LLM's window (the newest first; an over-long turn, such as a refused
        pasted document, is left out); unchanged without such turns, and when the rewrite comes
        back empty."""
        turns: list[tuple[str, str]] = []
        for turn in reversed(list(history)[-self.history_turns :] if self.history_turns else []):
            if self.fits(self._condense([turn, *turns], question)):
                turns.insert(0, turn)
        if not turns:
            return question
        conversation = _conversation(turns)
        rewrite = _one_line(self.llm, self._condense(turns, question))
        if not rewrite:
            return question
        if leaked(rewrite, f"{conversation}\n{question}"):
            # A code from the prompt's examples ("test A-12" for "that test"): the earlier
            # question and this one together still name what was meant.
            return f"{turns[-1][0]} {question}"
        return rewrite

    def fits(self, prompt: str) -> bool:
        return self.count_tokens(prompt) <= self.window

    def _condense(self, turns: Sequence[tuple[str, str]], question: str) -> str:
        return self.condense_prompt.format(history=_conversation(turns), question=question)

    def translate(self, question: str, language: str) -> str | None:
        """The question in `language`; None when the model did not write it in that language's
        script (a 1.5B model sometimes echoes the question or the instructions). A reply that
        answers instead of translating ("데비안 프로젝트는 1993년에 시작되었습니다.") is kept: it
        holds the question's words in the corpus's language, which is what retrieval needs."""
        prompt = self.translate_prompt.format(question=question, language=language)
        if not self.fits(prompt):  # too long for the rewriting LLM: retrieval uses it as asked
            return None
        reply = _one_line(self.llm, prompt)
        return reply if reply and written_in(reply, language) else None


def _conversation(turns: Sequence[tuple[str, str]]) -> str:
    return "\n".join(f"User: {q}\nAssistant: {a}" for q, a in turns)


_CODE_OR_FIGURE = re.compile(r"\w*\d\w*(?:[-./]\w+)*|\w+(?:[-./]\w+)*[-./]\w*\d\w*")


def leaked(rewrite: str, source: str) -> bool:
    """Whether the rewrite names a code or figure ("A-12", "300") that the conversation does not."""
    known = source.lower()
    return any(code.lower() not in known for code in _CODE_OR_FIGURE.findall(rewrite))


def written_in(text: str, language: str) -> bool:
    """Korean: any Hangul (a Korean sentence about `/etc/kbd/config` may hold more Latin letters
    than syllables); English: mostly Latin letters."""
    return bool(HANGUL.search(text)) if language == "Korean" else script_language(text) == language


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
