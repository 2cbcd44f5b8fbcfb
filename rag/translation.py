"""When a question is translated, and into which language (the translating is
`QuestionRewriter.translate`, rag/rewrite.py):

- for retrieval, where the corpus lacks the question's language (`translation_target`: under a
  fifth of its documents, each by its chunks' script): "How much is the meal allowance?"
  over a Korean corpus is also searched as "식비 한도는 얼마입니까?";
- beside the question in the prompt, where the corpus holds the question's language but the
  evidence shown is in the other script (an English question answered by the one Korean
  handbook): across scripts the small model echoed the prompt's example instead of reading its
  passages. Not where it was translated for retrieval: that path was measured reading the
  question as asked (docs/BENCHMARKS.md, "Questions in the other language than the corpus");
- never for `other_documents`: once a question over a corpus holding both languages was refused
  for a name, date or figure its evidence lacks, its few documents in the other language (a
  partner's Korean notes beside English reports) are searched on their own (rag/pipeline.py).
  The ranker's wording features are blind across scripts and bury them, while e5's cosine still
  finds them; the 1.5B model's translations missed the names those notes spell in Hangul
  ("하이소" for 해솔).
"""

from __future__ import annotations

from dataclasses import dataclass

from rag.retrieval import lexical_version
from rag.rewrite import (QuestionRewriter, document_languages, document_shares, script_language,
                         translation_target)
from rag.settings import Settings
from rag.store import Store


@dataclass
class Translation:
    """Built once per pipeline from `[answer] translate_questions`; reads the corpus's languages
    again only when the store changed."""

    rewriter: QuestionRewriter
    store: Store
    enabled: bool = True
    _languages: tuple[int | None, dict[str, str]] = (None, {})  # (store version, document -> language)

    @classmethod
    def from_settings(cls, settings: Settings, rewriter: QuestionRewriter, store: Store) -> Translation:
        return cls(rewriter, store, settings.answer.translate_questions)

    def for_retrieval(self, question: str) -> str | None:
        """The question in the corpus's language where the corpus lacks the question's; else None."""
        if not self.enabled:
            return None
        language = translation_target(question, document_shares(self._documents()))
        return self.rewriter.translate(question, language) if language else None

    def other_documents(self, question: str) -> list[str]:
        """The documents written in the other language than the question."""
        asked = script_language(question)
        return sorted(doc for doc, language in self._documents().items() if language != asked)

    def _documents(self) -> dict[str, str]:
        """Each document's language, read again when the store changed."""
        version = lexical_version(self.store.lexical)
        if self._languages[0] != version or version is None:
            self._languages = (version, document_languages(self.store.lexical.openings()))
        return self._languages[1]

    def beside(self, question: str, translated: str | None, evidence: str) -> str | None:
        """The language to write the question in beside it in the prompt: the `evidence`'s, where
        that is the other script and the question was not `translated` for retrieval; else None."""
        language = script_language(evidence)
        if not self.enabled or translated or not evidence.strip() or language == script_language(question):
            return None
        return language
