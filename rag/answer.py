"""The Answer of docs/FORMATS.md, typed: its sources, its matched segments and their references,
and the question's versions (`Query`) that `RagPipeline.answer` carries from step to step."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from llama_index.core.schema import MetadataMode, NodeWithScore

from rag.references import Segment, cited, marked
from rag.text import normalised


@dataclass(frozen=True)
class Query:
    """One question's versions: as asked, as it stands alone (a chat's follow-up rewritten; else
    as asked), in the corpus's language when the corpus lacks the question's, and the version
    whose ranking chose the context."""

    asked: str
    standalone: str
    translated: str | None = None
    search: str = ""

    @property
    def queries(self) -> list[str]:
        """What retrieval and reranking are asked: the stand-alone question and its translation."""
        return [self.standalone, self.translated] if self.translated else [self.standalone]

    @property
    def rewritten(self) -> str | None:
        """The stand-alone question when it differs from the one asked."""
        return self.standalone if self.standalone != self.asked else None


@dataclass(frozen=True)
class Reference:
    """A chunk backing a segment: its number in the prompt, its location and its support score."""

    ref: int
    chunk_id: str
    doc: str | None
    page: int | None
    page_end: int | None  # a chunk may run over pages
    slide: int | None
    section: str | None
    ocr: bool  # the text was read from a picture or a scan: it may hold misreadings
    score: float


@dataclass(frozen=True)
class Source:
    """A chunk shown to the model: its number in the prompt, its location, text and rank score."""

    ref: int
    chunk_id: str
    doc: str | None
    page: int | None
    page_end: int | None
    slide: int | None
    section: str | None
    ocr: bool
    text: str
    score: float

    @classmethod
    def of(cls, ref: int, node: NodeWithScore) -> Source:
        meta = node.node.metadata
        return cls(ref, node.node.node_id, meta.get("doc"), meta.get("page"), meta.get("page_end"),
                   meta.get("slide"), meta.get("section"), bool(meta.get("ocr")),
                   node.node.get_content(metadata_mode=MetadataMode.NONE), round(float(node.score or 0.0), 4))

    @classmethod
    def listed(cls, top: list[NodeWithScore]) -> list[Source]:
        """The chunks shown, numbered from 1 in their order."""
        return [cls.of(i + 1, node) for i, node in enumerate(top)]

    @classmethod
    def after(cls, sources: list[Source], nodes: list[NodeWithScore]) -> list[Source]:
        """The nodes not among `sources`, numbered on from their last."""
        seen = {source.chunk_id for source in sources}
        unseen = [node for node in nodes if node.node.node_id not in seen]
        return [cls.of(len(sources) + i + 1, node) for i, node in enumerate(unseen)]

    def reference(self, score: float) -> Reference:
        located = {f.name: getattr(self, f.name) for f in fields(Reference) if f.name != "score"}
        return Reference(**located, score=round(score, 4))


@dataclass(frozen=True)
class AnswerSegment:
    """A run of the answer's sentences (first and last index) with the chunks backing it; its
    text marked with their numbers (the model's own marks replaced)."""

    text: str
    sentences: list[int]
    supported: bool
    references: list[Reference]

    @classmethod
    def of(cls, segment: Segment, sources: list[Source]) -> AnswerSegment:
        references = [sources[ref.chunk].reference(ref.score) for ref in segment.references]
        text = marked(segment.text, [ref.ref for ref in references])
        return cls(text, segment.sentences, segment.supported, references)


def cited_answer(draft: str, segments: list[AnswerSegment]) -> str:
    """The draft with the matcher's marks: those of each segment's references, none where a
    segment is unsupported."""
    return cited(draft, [
        (*segment.sentences, [ref.ref for ref in segment.references])
        for segment in segments
    ])


@dataclass
class Answer:
    question: str
    answer: str  # the model's text with the matcher's [n] marks, or the refusal in the asker's language
    segments: list[AnswerSegment] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    scorer: str = ""  # which model scored the references: learned-support or llm-verifier
    reranker: str = ""  # which model reranked: ltr (learned ranker) or the scorer's kind
    # a chat's follow-up as rewritten for retrieval, or given the corpus's codes; None if neither
    standalone_question: str | None = None
    translated_question: str | None = None  # the question in the corpus's language, asked in another
    # Which gate refused: retrieval (nothing relevant), model (it declined), references (nothing supported).
    refused_by: str | None = None
    draft: str = ""  # the model's reply as written, its own [n] marks and all; empty when it wrote none
    # How the answer was made: composed (quoting the evidence units the model picked), generated
    # (written by the model), cells (read from table facts).
    mode: str = "generated"
    # The evidence's widening steps, in order: why (no figure, no answer, unsupported), and the
    # chunks and tokens of the try that was widened.
    widened: list[dict[str, Any]] = field(default_factory=list)
    # Where shown sources of documents no currency orders give the answer's figure otherwise
    # (rag/conflicts.py): {what, values: [{value, ref, doc}, ...]}, the answer's value first.
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    hop: str | None = None  # the entity a second retrieval searched for (rag/hop.py); None: one round

    @property
    def answerable(self) -> bool:
        return self.refused_by is None

    def to_dict(self) -> dict[str, Any]:
        record = asdict(self)
        return {"question": record.pop("question"), "answer": record.pop("answer"),
                "answerable": self.answerable} | record

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> Answer:
        """The Answer `to_dict` wrote (a UI's state, a JSON line)."""
        segments = [AnswerSegment(**segment | {"references": [Reference(**r) for r in segment["references"]]})
                    for segment in record.get("segments", [])]
        sources = [Source(**source) for source in record.get("sources", [])]
        kept = {key: value for key, value in record.items() if key != "answerable"}
        return cls(**kept | {"segments": segments, "sources": sources})


def is_refusal(text: str, refusal: str) -> bool:
    return not text or normalised(refusal) in normalised(text)[: len(normalised(refusal)) + 40]
