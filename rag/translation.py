"""When a question is translated, and into which language (the translating is
`QuestionRewriter.translate`, rag/rewrite.py):

- for retrieval, where the corpus lacks the question's language (`translation_target`: under a
  fifth of its documents, by script, sampled from the store): "How much is the meal allowance?"
  over a Korean corpus is also searched as "식비 한도는 얼마입니까?";
- beside the question in the prompt, where the corpus holds the question's language but the
  evidence shown is in the other script (an English question answered by the one Korean
  handbook): across scripts the small model echoed the prompt's example instead of reading its
  passages. Not where it was translated for retrieval: that path was measured reading the
  question as asked (docs/BENCHMARKS.md, "Questions in the other language than the corpus");
- `across`, once a question over a corpus holding both languages found no answer: its few
  documents in the other language (a partner's Korean notes beside English reports) are far
  down the ranking of a question in the one, so it is searched again in the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag.retrieval import lexical_version
from rag.rewrite import QuestionRewriter, document_shares, script_language, translation_target
from rag.settings import Settings
from rag.store import Store, spread_sample


@dataclass
class Translation:
    """Built once per pipeline from `[answer] translate_questions`; reads the corpus's languages
    again only when the store changed."""

    rewriter: QuestionRewriter
    store: Store
    enabled: bool = True
    _shares: tuple[int | None, dict[str, float]] = (None, {})  # (store version, documents per language)

    @classmethod
    def from_settings(cls, settings: Settings, rewriter: QuestionRewriter, store: Store) -> Translation:
        return cls(rewriter, store, settings.answer.translate_questions)

    def for_retrieval(self, question: str) -> str | None:
        """The question in the corpus's language where the corpus lacks the question's; else None."""
        if not self.enabled:
            return None
        language = translation_target(question, self._languages())
        return self.rewriter.translate(question, language) if language else None

    def across(self, question: str) -> str | None:
        """The question in the other language, where the corpus holds documents in it; else None."""
        if not self.enabled:
            return None
        asked = script_language(question)
        other = next((language for language, share in self._languages().items()
                      if language != asked and share > 0), None)
        return self.rewriter.translate(question, other) or None if other else None

    def _languages(self) -> dict[str, float]:
        """The corpus's share of documents per language, read again when the store changed."""
        version = lexical_version(self.store.lexical)
        if self._shares[0] != version or version is None:
            self._shares = (version, document_shares(spread_sample(self.store.collection)))
        return self._shares[1]

    def beside(self, question: str, translated: str | None, evidence: str) -> str | None:
        """The language to write the question in beside it in the prompt: the `evidence`'s, where
        that is the other script and the question was not `translated` for retrieval; else None."""
        language = script_language(evidence)
        if not self.enabled or translated or not evidence.strip() or language == script_language(question):
            return None
        return language
