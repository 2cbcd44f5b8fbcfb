"""The answer pipeline, top to bottom: the question with the codes the corpus gives the sites it
names (rag/codes.py) -> retrieve (dense + BM25, fused) -> rerank -> the current
version first -> a cell answer, or a second hop -> write the context (the chunks' relevant sentences
and rows within a token budget) -> the premise check -> draft (rag/drafting.py: the model writes or
picks, the references are matched) -> conflicts shown; widened, or asked again in the other
language, while no answer is found.

`RagPipeline.answer(question)` returns the Answer object of docs/FORMATS.md; `ragqa ask --json`, the
UI and the evaluators all read that one shape.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

from llama_index.core.llms import LLM
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode
from llama_index.core.vector_stores.types import MetadataFilters

from rag.answer import Answer, AnswerSegment, Query, Source, cited_answer
from rag.cells import CellLookup
from rag.compose import notice
from rag.codes import CorpusCodes
from rag.conflicts import ConflictFinder, disagreement, restated, said
from rag.context import ContextBuilder, Evidence, Widening
from rag.currency import CurrentFirst
from rag.drafting import Drafter
from rag.hop import Hop, Hopped
from rag.models import build_embedding, build_llm, build_rewriting_llm, token_counter
from rag.postprocessors import best_ranked, build_rerank_stage
from rag.premise import PremiseCheck, PremiseVerdict
from rag.quotes import Quoter
from rag.references import ReferenceMatcher, marked
from rag.rewrite import QuestionRewriter, script_language
from rag.retrieval import check_filters, dense_retriever, hybrid_retriever, metadata_filters, retrieved
from rag.support import support_scorer
from rag.table_question import CellAnswer
from rag.translation import Translation
from rag.settings import Settings
from rag.store import Store, stored_nodes

_TEMPLATE_TOKENS = 16  # the chat template's role markers around the prompt


def window(llm: LLM) -> int:
    """Tokens a prompt may take in this LLM: its window less its reply and the chat template."""
    return llm.metadata.context_window - max(llm.metadata.num_output, 0) - _TEMPLATE_TOKENS


class QuestionError(ValueError):
    """The question cannot be asked as it is (empty, or longer than the model's window)."""


def check_question(question: str) -> None:
    if not question.strip():
        raise QuestionError("the question is empty")


class RagPipeline:
    def __init__(self, settings: Settings, llm: LLM | None = None):
        self.settings = settings
        embedding = build_embedding(settings)
        self.llm = llm or build_llm(settings)
        self.embedding = embedding
        self.store = Store(settings)
        self.retriever: BaseRetriever | None = None  # built on first use (current_retriever)
        self.reranker = build_rerank_stage(settings, self.store, embedding)
        self.encoder = self.reranker.encoder  # the bi-encoder whose vectors the store holds
        self.matcher = ReferenceMatcher.from_settings(settings, support_scorer(settings, self.encoder))
        rewriting = llm or build_rewriting_llm(settings)
        self.rewriter = QuestionRewriter(
            rewriting, settings.answer.condense_prompt_file.read_text(encoding="utf-8"),
            settings.answer.translate_prompt_file.read_text(encoding="utf-8"), settings.answer.history_turns,
            token_counter(rewriting), window(rewriting),
        )
        self.translation = Translation.from_settings(settings, self.rewriter, self.store)
        self.count_tokens = token_counter(self.llm)
        self.current = CurrentFirst.from_settings(settings, self.store)
        self.conflicts = ConflictFinder.from_settings(settings, self.current.newer)
        self.context = ContextBuilder(self.encoder, self.count_tokens, list(settings.headers.fields),
                                      settings.context.tables, settings.context.rank_weight,
                                      self.current.notes, self.current.newer)
        self.widening = Widening.from_settings(settings)
        self.premise = PremiseCheck.from_settings(settings)
        self.codes = CorpusCodes.from_settings(settings, self.store.lexical)
        self.cells = CellLookup.from_settings(settings, self.store, self.current.newer, self.codes.codes)
        self.hop = Hop.from_settings(settings)
        self.drafter = Drafter.from_settings(settings, self.llm, self.matcher,
                                             Quoter.from_settings(settings, self.current.newer), self.store)

    def answer(
        self,
        question: str,
        on_token: Callable[[str], None] | None = None,
        docs: list[str] | None = None,
        where: dict[str, str] | None = None,
        history: Sequence[tuple[str, str]] = (),
        threshold: float | None = None,
        retrieve_k: int | None = None,
        keep_k: int | None = None,
    ) -> Answer:
        """Answer from all documents, or only from `docs` (document ids as ingested) and from
        documents whose header fields equal `where`'s values. With the chat's earlier
        (question, answer) turns in `history`, the question is first rewritten to stand alone.
        `threshold`, `retrieve_k` and `keep_k` override the references' support threshold, the chunks
        retrieved and the chunks kept after reranking, for this answer. A question refused for a
        name, date or figure its evidence lacks, in a corpus holding both languages, is asked again
        of the documents of the other language (rag/translation.py `other_documents`): one more
        round, said in the widening steps."""
        args = (question, on_token, docs, where, history, threshold, retrieve_k, keep_k)
        started = time.perf_counter()
        first, absent = self._answer(*args)
        # The evidence lacks a name, date or figure the question gives: the other language may
        # spell it (5월 21일 for 21 May). Not after the model's refusal: read across scripts, the
        # other language's nearest passages got the small model answering unanswerable questions.
        if not absent or first.translated_question or time.perf_counter() - started >= self.widening.time_s:
            return first  # the widening's time cap holds
        clock, standalone = time.perf_counter(), first.standalone_question or question
        others = [doc for doc in self.translation.other_documents(standalone) if not docs or doc in docs]
        widest = self.widening.size(keep_k or self.reranker.top_n, self.widening.steps)
        lead = others and dense_retriever(self.settings, self.embedding, widest, metadata_filters(
            others, where)).retrieve(standalone)
        searching = round((time.perf_counter() - clock) * 1000, 1)
        if not lead:
            return first
        if on_token is not None:
            on_token(notice("widen", self.drafter.language(question)))
        again, _ = self._answer(*args, lead=lead)
        # Only an answer citing a passage in the other language is one this round found: another
        # from the question's own language is the first round's evidence, read again by chance.
        asked = script_language(question)
        cited = {r.ref for segment in again.segments for r in segment.references}
        if not again.answerable or not any(script_language(s.text) != asked for s in again.sources
                                           if s.ref in cited):
            return first
        step = {"reason": "other language", "chunks": len(again.sources), "tokens": 0}
        # the first round's stages, then the second's, whose candidates were the other language's
        timings = {f"first_{k}": v for k, v in first.timings_ms.items()} | again.timings_ms | {
            "other_language": searching}
        return replace(again, widened=[*first.widened, step, *again.widened], timings_ms=timings)

    def _answer(self, question: str, on_token: Callable[[str], None] | None, docs: list[str] | None,
                where: dict[str, str] | None, history: Sequence[tuple[str, str]], threshold: float | None,
                retrieve_k: int | None, keep_k: int | None,
                lead: Sequence[NodeWithScore] = ()) -> tuple[Answer, bool]:
        """One answer, and whether the premise check refused it for a name, date or figure the
        evidence lacks. `lead`: the only candidates, in their order, whatever the ranker says (the
        other language's documents, as e5 ranks them for the question): no retrieval runs."""
        cfg = self.settings
        check_question(question)
        if docs or where:
            check_filters(cfg, docs or [], where or {})
        room = self.room(question)  # before any LLM call: a pasted document is refused at once
        started = time.perf_counter()
        query = Query(question, self.codes.expand(self.rewriter.standalone(question, history)))
        if query.rewritten:
            room = self.room(query.standalone)
        timings: dict[str, float] = {}
        if history:
            timings["condense"] = round((time.perf_counter() - started) * 1000, 1)
        clock = time.perf_counter()

        def lap(stage: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            timings[stage] = round((now - clock) * 1000, 1)
            clock = now

        retriever = self.current_retriever(metadata_filters(docs, where), retrieve_k)
        keep = keep_k or self.reranker.top_n  # top_n: LlamaIndex's postprocessor name for what is kept
        widest = self.widening.size(keep, self.widening.steps)  # ranked once, widened by prefixes,
        # and the next ones read for a figure disagreeing with the answer's (rag/conflicts.py)
        reranker = self.reranker.model_copy(update={"top_n": widest + cfg.currency.conflict_candidates})
        translated = None if lead else self.translation.for_retrieval(query.standalone)
        query = replace(query, translated=translated and self.codes.expand(translated))
        if query.translated:
            lap("translate")
        found = list(lead) or retrieved(retriever, query.queries)  # both questions' candidates
        lap("retrieve")
        candidates, search = best_ranked(reranker, found, query.queries)
        if lead:  # scored by the ranker, as shown with each source, but kept in e5's order
            scored = {node.node.node_id: node for node in candidates}
            candidates = [scored[node.node.node_id] for node in lead if node.node.node_id in scored]
        ranked, query = candidates[:widest], replace(query, search=search)
        lap("rerank")

        def newer(missed: list[str]) -> list[NodeWithScore]:  # within the asker's filters
            allowed = [doc for doc in missed if not docs or doc in docs]
            if not allowed:
                return []
            hits = retrieved(self.current_retriever(metadata_filters(allowed, where)), query.queries)
            return best_ranked(reranker, hits, query.queries)[0]

        before = {node.node.node_id: i for i, node in enumerate(ranked)}
        ranked = self.current.prefer(ranked, keep, newer)  # a newer version or erratum above the older
        if not lead:  # the other language's candidates are the only ones
            ranked = self._anchored(query, ranked, keep, retriever)
        lifted = frozenset(node.node.node_id for i, node in enumerate(ranked)  # moved up, or fetched
                           if before.get(node.node.node_id, i + 1) > i)
        top = ranked[:keep]
        lap("currency")
        language = self.drafter.language(query.asked)  # answered, or refused, in the asker's language

        composes = cfg.answer.mode == "compose"
        widened: list[dict[str, str | int]] = []
        hopped: Hopped | None = None

        def answered(text: str, sources: list[Source], gate: str | None = None, draft: str = "",
                     segments: list[AnswerSegment] | None = None, mode: str = "") -> Answer:
            """A refusal keeps the chunks kept as its sources so a reader can check them; when no
            sentence the model wrote was supported, its draft stays in the segments (all marked
            unsupported) so readers see what was held back. Sources that disagree are said."""
            checked, later = time.perf_counter(), Source.after(sources, candidates)
            conflicts, added = self.conflicts.find(query.standalone, text, sources, gate, later)
            sources = [*sources, *added]
            timings["conflicts"] = round((time.perf_counter() - checked) * 1000, 1)
            if conflicts and gate in ("model", "references"):
                # No backed answer, but two sources give the asked thing two values: that is the answer.
                text, segments = disagreement(conflicts, sources, language)
                gate, mode, shown = None, "conflict", text
            else:
                text, segments = restated(text, segments or [], conflicts, sources)  # the current version's
                if hopped is not None:  # the bridge's line cited too: the answer cites both documents
                    text, segments = hopped.cited(text, segments or [], sources, gate)
                shown = said(text, conflicts, language)
            return Answer(query.asked, shown, segments or [], sources, timings,
                          self.matcher.scorer.kind, self.reranker.scorer_kind, query.rewritten,
                          query.translated, gate, draft, mode or ("composed" if composes else "generated"),
                          widened, [c.to_dict() for c in conflicts], hopped and hopped.entity)

        if not top or max(self._relevance(q, top) for q in query.queries) < cfg.retrieval.min_score:
            timings.update(context=0.0, generate=0.0, match=0.0)
            return answered(self.drafter.refusal(language), Source.listed(top), "retrieval"), False

        # A question that names a table's row and column is answered from the cell, no LLM call.
        fetch = lambda text: retrieved(retriever, [text])  # noqa: E731 - within the asker's filters
        cell = next(filter(None, (self.cells.answer(q, ranked, lifted, fetch, beyond=found)
                                  for q in query.queries)), None)
        lap("cells")
        if cell is not None:
            cell = replace(cell, text=self.codes.spelled(cell.text))
            return answered(*self._cited_cells(cell, ranked), mode="cells"), False
        # A bridge to another document (a lead's name, not their office): one more retrieval.
        hopped = self.hop.follow(query.search, ranked, keep, retriever, reranker)
        lap("hop")
        if hopped is not None:
            ranked, query = hopped.ranked, replace(query, search=hopped.search)
            composes = composes or self.hop.compose  # a sentence joining two documents cites neither
            if (read := hopped.read()) is not None:  # the fact's row and the bridge's, quoted
                return answered(*read, mode="composed"), False

        budget, shown, step = self.budget(room), [], 0
        anchor = ""  # a name the question gives that the chunks hold and the context must show
        while True:
            nodes = ranked[: self.widening.size(keep, step)]
            tokens = min(self.widening.size(budget, step), self.budget(room, widest=True))
            tag = f"widen{step}_" if step else ""
            evidence = self.context.evidence(query.search, nodes, tokens, composes, shown, anchor)
            if composes and script_language(" ".join(u.text for u in evidence.units)) != language:
                # A quote would not be in the asker's language: the model writes this answer.
                composes = False
                evidence = self.context.evidence(query.search, nodes, tokens, anchor=anchor)
            lap(tag + "context")
            if not step:
                verdict = self._premise(query, evidence.text)
                if verdict.status == "absent" and self._premise(query, _text(nodes)).entity != verdict.entity:
                    # the chunks hold the name, the units chosen do not: the best unit naming it leads
                    anchor = verdict.entity
                    evidence = self.context.evidence(query.search, nodes, tokens, composes, shown, anchor)
                    verdict = self._premise(query, evidence.text)
                blocks = evidence.text.split("\n\n")
                lap("premise")
                # Evidence in the other script may spell a name otherwise ("Article 1", 제1조): there
                # an absence is no evidence; a contradiction is. In the other language's own round a
                # figure or code absent is: it reads alike in both ("13 hours", 13시간).
                across = any(script_language(b) != script_language(query.search) for b in blocks)
                if not verdict.holds and not (across and verdict.status == "absent"
                                              and not (lead and verdict.spelled_alike)):
                    return answered(verdict.message or self.drafter.refusal(language),
                                    Source.listed(evidence.nodes), "premise"), verdict.status == "absent"
            room_to_widen = len(ranked) > len(nodes) or tokens < self.budget(room, widest=True)

            def wider() -> bool:
                return room_to_widen and self.widening.allows(step, time.perf_counter() - started)

            reason = self.widening.lacks(query.standalone, evidence.units) if wider() else None
            if reason is None:
                asked = query.standalone
                if not composes and (beside := self._beside(query, evidence, timings)):  # its language too
                    query, asked = replace(query, translated=beside), f"{asked} ({beside})"
                attempt = (self.drafter.composed if composes else self.drafter.generated)(
                    asked, evidence, language, on_token, timings, started, threshold, tag)
                result, clock = answered(*attempt), time.perf_counter()
                if result.answerable or not wider():  # the time cap counts this try
                    return result, False
                reason = "no answer" if result.refused_by == "model" else "unsupported"
            widened.append({"reason": reason, "chunks": len(evidence.nodes), "tokens": tokens})
            if on_token is not None:
                on_token(notice("widen", language))
            shown, step = evidence.units if composes else [], step + 1

    def _anchored(self, query: Query, ranked: list[NodeWithScore], keep: int,
                  retriever: BaseRetriever) -> list[NodeWithScore]:
        """The ranked chunks, led by one that holds a name, code or month the question gives that
        the kept chunks lack, found among the next-ranked or fetched by that name alone (within
        the asker's filters): "Tomasz Wielgus's depot" is in a contacts note that the question's
        other words do not rank. Unchanged where the kept chunks hold it, or no chunk does: the
        premise check then says the documents do not mention it."""
        kept = ranked[:keep]
        verdict = self._premise(query, _text(kept))
        if verdict.status != "absent" or not verdict.entity:
            return ranked
        known = {n.node.node_id for n in ranked}

        def fetched() -> Iterator[NodeWithScore]:  # retrieved only when no next-ranked chunk holds it
            yield from (n for n in retrieved(retriever, [verdict.entity]) if n.node.node_id not in known)

        script = script_language(query.search)  # the other language's documents have their own round
        for node in itertools.chain(ranked[keep:], fetched()):
            if script_language(_text([node])) == script and \
                    self._premise(query, _text([*kept, node])).entity != verdict.entity:
                return [node, *(n for n in ranked if n is not node)]
        return ranked

    def _premise(self, query: Query, evidence: str) -> PremiseVerdict:
        """The premise check on the evidence's blocks, of the question that chose the context: as it
        stands alone, or its translation, never a second hop's search words (they name the bridge,
        not what the asker takes for granted). An absent name of a translation ("Roterdam" for
        로테르담) is checked again in the question as asked."""
        blocks = evidence.split("\n\n")
        asked = query.search if query.search == query.translated else query.standalone
        verdict = self.premise.check(asked, blocks)
        if verdict.status == "absent" and asked != query.standalone:
            verdict = self.premise.check(query.standalone, blocks)
        return verdict

    def _cited_cells(self, cell: CellAnswer, ranked: list[NodeWithScore]) -> tuple:
        """`answered`'s arguments for a cell answer: its sources (the chunks its cells are in, as
        ranked, else as stored) and its one segment, cited to each at 1.0: read, not matched. A
        cell that contradicts the question's premise is the premise gate's correction."""
        ids = list(dict.fromkeys(fact.chunk_id for fact in cell.facts))
        known = {node.node.node_id: node for node in ranked}
        missing = [i for i in ids if i not in known]
        stored = {n.node_id: NodeWithScore(node=n, score=0.0)
                  for n in (stored_nodes(self.store.collection, ids=missing) if missing else [])}
        sources = Source.listed([known.get(i) or stored[i] for i in ids if i in known or i in stored])
        segment = AnswerSegment(marked(cell.text, [s.ref for s in sources]), [0, 0], True,
                                [s.reference(1.0) for s in sources])
        return segment.text, sources, "premise" if cell.kind == "premise" else None, "", [segment]

    def rematch(self, answer: Answer, threshold: float) -> Answer:
        """`answer` with its references found again at another support threshold: only the
        matcher runs. A refusal by retrieval or by the model has nothing to match."""
        if answer.refused_by not in (None, "references") or not answer.segments or answer.mode != "generated":
            return answer  # a composed answer cites its units exactly: no threshold changes that
        clock = time.perf_counter()
        segments = self.drafter.match(answer.draft, self._stored(answer.sources), answer.sources, threshold,
                                      answer.standalone_question or answer.question)
        timings = answer.timings_ms | {"match": round((time.perf_counter() - clock) * 1000, 1)}
        if not any(segment.supported for segment in segments):
            refusal = self.drafter.refusal(self.drafter.language(answer.question))
            return replace(answer, answer=refusal, segments=segments, timings_ms=timings,
                           refused_by="references")
        return replace(answer, answer=cited_answer(answer.draft, segments), segments=segments,
                       timings_ms=timings, refused_by=None)

    def _stored(self, sources: list[Source]) -> list[NodeWithScore]:
        """The cited chunks as the store holds them (with their header, as the matcher reads
        them); a chunk deleted since keeps the text the answer showed."""
        ids = [s.chunk_id for s in sources]
        stored = {n.node_id: n for n in stored_nodes(self.store.collection, ids=ids)}
        return [NodeWithScore(node=stored.get(s.chunk_id) or TextNode(text=s.text, metadata={"doc": s.doc}),
                              score=s.score) for s in sources]

    def _relevance(self, question: str, top: list[NodeWithScore]) -> float:
        """The refusal gate's measure: the best calibrated e5 relevance among the kept chunks. The
        ranker's score says which candidate is likeliest the one, not whether any is on topic."""
        texts = [node.node.get_content(metadata_mode=MetadataMode.EMBED) for node in top]
        return max(self.encoder([(question, text) for text in texts]))

    def _beside(self, query: Query, evidence: Evidence, timings: dict[str, float]) -> str:
        """The question in the shown evidence's language, where that is the other script
        (rag/translation.py), timed as `translate`."""
        language = self.translation.beside(query.standalone, query.translated,
                                           " ".join(unit.text for unit in evidence.units))
        if language is None:
            return ""
        clock = time.perf_counter()
        beside = self.rewriter.translate(query.standalone, language) or ""
        timings["translate"] = round((time.perf_counter() - clock) * 1000, 1)
        return beside

    def current_retriever(self, filters: MetadataFilters | None = None,
                          similarity_top_k: int | None = None) -> BaseRetriever:
        """Hybrid retrieval over the store as it is now. The lexical index is read live, so the
        default retriever is kept once it has its BM25 channel; before anything is indexed (no
        lexical index yet) it is dense alone and built again each time."""
        if filters is None and similarity_top_k in (None, self.settings.retrieval.retrieve_k):
            if self.retriever is None:
                has_lexical = self.store.lexical.exists()  # before building: the index may appear meanwhile
                retriever = hybrid_retriever(self.settings, self.embedding, self.llm)
                if not has_lexical:
                    return retriever
                self.retriever = retriever
            return self.retriever
        return hybrid_retriever(self.settings, self.embedding, self.llm, similarity_top_k, filters)

    def room(self, question: str) -> int:
        """Tokens the window leaves for evidence with this question (the prompt's fixed part and
        the question counted once); a question that leaves none is refused before any work."""
        room = window(self.llm) - self._fixed(question)
        if room <= 0:
            most = window(self.llm) - self._fixed("")
            raise QuestionError(
                f"the question is too long: {self.count_tokens(question)} tokens, and the model's window of "
                f"{self.settings.llm.n_ctx} (llm.n_ctx) leaves room for at most {max(most, 0)}: shorten it"
            )
        return room

    def _fixed(self, question: str) -> int:
        """Tokens of the longer of the answer prompts with this question and no evidence."""
        return max(self.count_tokens(prompt) for prompt in self.drafter.prompts(question))

    def budget(self, room: int, widest: bool = False) -> int:
        """Evidence tokens: the configured budget (`widest`: widened as far as the settings go),
        or what the `room` leaves if that is less."""
        configured = self.settings.context.budget(self.settings.llm.backend)
        if widest:
            configured = self.widening.size(configured, self.widening.steps)
        # Less a few tokens: the context's first and last tokens may merge with the prompt's.
        return min(configured, room - 8)


def _text(nodes: Sequence[NodeWithScore]) -> str:
    """The chunks' whole text, as the premise check reads it."""
    return "\n\n".join(n.node.get_content(MetadataMode.EMBED) for n in nodes)
