"""An answer drafted from the evidence the context chose: the model writes it and the matcher cites
its sentences (`generated`), or the model picks numbered units and the answer is built from them
(`composed`, rag/compose.py). Each returns the pipeline's `answered` arguments: the text, the
sources, the gate that refused (None when answered), the model's draft, the segments, the mode.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from functools import cache

from llama_index.core.llms import LLM
from llama_index.core.schema import MetadataMode, NodeWithScore

from rag.answer import AnswerSegment, Source, cited_answer, is_refusal
from rag.asked import heading, lacks
from rag.compose import Composer, notice
from rag.context import Evidence
from rag.codes import CorpusCodes
from rag.names import named, sited
from rag.quotes import Quoter
from rag.references import ReferenceMatcher
from rag.rewrite import script_language
from rag.settings import Settings
from rag.store import Store, document_texts

Stream = Callable[[str], None] | None


@dataclass
class Drafter:
    """The model's turn: the prompts, the refusal sentences, and the checks of what it wrote."""

    settings: Settings
    llm: LLM
    prompt: str  # the free answer's template
    composer: Composer
    matcher: ReferenceMatcher
    quoter: Quoter
    store: Store
    codes: CorpusCodes  # the corpus's sites by code, whose figures one sentence of a chunk gives

    @classmethod
    def from_settings(cls, settings: Settings, llm: LLM, matcher: ReferenceMatcher, quoter: Quoter,
                      store: Store) -> Drafter:
        return cls(settings, llm, settings.answer.prompt_file.read_text(encoding="utf-8"),
                   Composer.from_settings(settings, matcher), matcher, quoter, store,
                   CorpusCodes.from_settings(settings, store.lexical))

    def refusal(self, language: str) -> str:
        """The refusal sentence in this answer language."""
        return self.settings.answer.refusals.get(language, self.settings.answer.refusal)

    def language(self, question: str) -> str:
        """The answer's language: the configured one, or the question's."""
        configured = self.settings.answer.language
        return script_language(question) if configured.lower() == "auto" else configured

    def prompt_for(self, question: str, context: str, language: str = "") -> str:
        # What varies comes last: llama.cpp reuses the evaluated prefix of the previous prompt.
        return self.prompt.format(context=context, question=question, refusal=self.settings.answer.refusal,
                                  language=language or self.language(question))

    def prompts(self, question: str) -> tuple[str, str]:
        """Both answer prompts with this question and no evidence: what the window must hold."""
        language = self.language(question)
        return self.prompt_for(question, "", language), self.composer.prompt_for(question, "", language)

    def refused(self, reply: str, language: str) -> bool:
        return any(is_refusal(reply, r) for r in {self.settings.answer.refusal, self.refusal(language)})

    def composed(self, question: str, evidence: Evidence, language: str, on_token: Stream,
                 timings: dict[str, float], started: float, threshold: float | None, tag: str) -> tuple:
        """An answer composed from the units the model picks; its reply (numbers) is not streamed:
        the reader is told only that the time is passing."""
        clock = time.perf_counter()
        # Each token passes on as "": it still stops an abandoned answer.
        quiet = None if on_token is None else (lambda token: on_token(""))
        if on_token is not None and evidence.units:
            on_token(notice("compose", language))
        prompt = self.composer.prompt_for(question, evidence.text, language)
        reply = self.generate(prompt, quiet, timings, started) if evidence.units else ""
        timings[tag + "generate"] = round((time.perf_counter() - clock) * 1000, 1)
        sources = Source.listed(evidence.nodes)
        composed = None if self.refused(reply, language) else self.composer.compose(
            reply, evidence, sources, threshold, question)
        timings[tag + "match"] = round((time.perf_counter() - clock) * 1000 - timings[tag + "generate"], 1)
        if composed is None:
            return self.refusal(language), sources, "model", reply
        if lacks(question, [composed.text]):  # the units picked do not give what is asked: no answer
            return self.refusal(language), sources, "references", reply
        return composed.text, sources, None, reply, composed.segments

    def generated(self, question: str, evidence: Evidence, language: str, on_token: Stream,
                  timings: dict[str, float], started: float, threshold: float | None, tag: str) -> tuple:
        """An answer the model writes, its sentences matched to the chunks; gate "model" when it
        declines, "references" when no sentence is supported."""
        clock = time.perf_counter()
        prompt = self.prompt_for(question, evidence.text, language)
        text = self.generate(prompt, on_token, timings, started) if evidence.nodes else ""
        timings[tag + "generate"] = round((time.perf_counter() - clock) * 1000, 1)
        sources = Source.listed(evidence.nodes)
        if self.refused(text, language):
            timings[tag + "match"] = 0.0
            return self.refusal(language), sources, "model", text
        clock = time.perf_counter()
        segments = self.match(text, evidence.nodes, sources, threshold, question)
        timings[tag + "match"] = round((time.perf_counter() - clock) * 1000, 1)
        backed = [s.text for s in segments if s.supported and not heading(s.text, question)]
        if not backed or lacks(question, backed):
            # Not one sentence is backed by a source (a heading quoted back is none), or none gives
            # the figure asked: the unit the draft paraphrases, quoted, else no answer.
            if (quote := self.quoter.quote(question, text, evidence, sources, language)) is not None:
                return quote[0], sources, None, text, quote[1], "composed"
            return self.refusal(language), sources, "references", text, segments
        return cited_answer(text, segments), sources, None, text, segments

    def generate(self, prompt: str, on_token: Stream, timings: dict[str, float], started: float) -> str:
        """The LLM's reply, streamed to `on_token`; records the time to its first token."""
        parts: list[str] = []
        # Closing the stream when on_token raises (an abandoned answer) stops the decoding.
        with closing(self.llm.stream_complete(prompt)) as stream:
            for chunk in stream:
                if not parts:
                    timings["first_token"] = round((time.perf_counter() - started) * 1000, 1)
                parts.append(chunk.delta or "")
                if on_token is not None:
                    on_token(chunk.delta or "")
        return "".join(parts).strip()

    def match(self, text: str, top: list[NodeWithScore], sources: list[Source],
              threshold: float | None = None, question: str = "") -> list[AnswerSegment]:
        """The matcher's segments, each reference's document holding the names the segment gives
        its thing ("the Leeds site" is not backed by the Rotterdam handbook: rag/names.py), and
        each chunk's sentence of its figures of the site it names."""
        segments = self.matcher.run(text, top, threshold, question)
        docs = [node.node.metadata.get("doc") for node in top]
        chunks = [node.node.get_content(metadata_mode=MetadataMode.EMBED) for node in top]
        document = cache(lambda doc: document_texts(self.store.collection, [doc]).get(doc, ""))
        sites = self.codes.codes()
        return [AnswerSegment.of(sited(named(segment, docs, chunks, document), chunks, sites), sources)
                for segment in segments]
