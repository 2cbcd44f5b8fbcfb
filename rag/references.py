"""Reference matching: link each segment of a generated answer to the chunks that support it.

The answer is split into sentences; every run of up to `max_span` sentences is scored against
every chunk in one batched scorer call, and a dynamic program picks the partition into segments
and a chunk per segment. A segment of L sentences whose best support is s is worth
L * max(s, threshold) - split_penalty (not the paper's sum of scores): a sum of per-sentence
support, so cutting or joining gains only where support changes (a sentence saying "It" needs
its predecessor), an unsupported segment earns exactly the threshold, and the small penalty
breaks ties toward longer segments. Within a segment a sentence counts the segment's score only
up to its own plus `context_bonus`: a sentence no chunk supports cannot ride along.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from llama_index.core.schema import MetadataMode, NodeWithScore

from rag.scoring import SupportScorer
from rag.settings import Settings
from rag.text import MARKER, split_sentences


@dataclass
class Reference:
    chunk: int  # index into the chunks given to the matcher
    score: float


@dataclass
class Segment:
    start: int  # first sentence index
    end: int  # last sentence index, inclusive
    text: str  # its sentences as written (citation markers and all)
    score: float  # best calibrated score over the chunks (0 when there are none)
    supported: bool
    references: list[Reference] = field(default_factory=list)  # best first; empty if unsupported

    @property
    def sentences(self) -> list[int]:
        return [self.start, self.end]


@dataclass
class ReferenceMatcher:
    """Links an answer's segments to the chunks that support them (see module docstring).
    Built once per pipeline; `threshold` can be overridden per call (the UI's threshold control
    re-runs only the matcher)."""

    scorer: SupportScorer
    threshold: float
    max_span: int
    margin: float
    context_bonus: float
    split_penalty: float = 0.01  # only breaks ties: not a setting

    @classmethod
    def from_settings(cls, settings: Settings, scorer: SupportScorer) -> ReferenceMatcher:
        cfg = settings.references
        return cls(scorer, settings.support.threshold, cfg.max_span, cfg.margin, cfg.context_bonus)

    def run(self, answer: str, nodes: Sequence[NodeWithScore], threshold: float | None = None,
            question: str = "") -> list[Segment]:
        """The answer's segments with indices into `nodes`, read as they were embedded (header
        included). Citation markers and the sources' file names ("in report-2024-08.docx [2]",
        copied from the context's labels) are citations, not claims: they are left out of what is
        scored, or the scorer would count the name's figures as missing from the chunk. The
        `question`'s words said back are the scorer's to discount (rag/scoring.py SupportScorer)."""
        sentences = split_sentences(answer)
        docs = [re.escape(str(n.node.metadata["doc"])) for n in nodes if n.node.metadata.get("doc")]
        names = re.compile("|".join(docs) or "(?!)")
        claims = [names.sub("", MARKER.sub("", s)) for s in sentences]
        chunks = [n.node.get_content(metadata_mode=MetadataMode.EMBED) for n in nodes]
        return [replace(segment, text=" ".join(sentences[segment.start : segment.end + 1]))
                for segment in self.match(claims, chunks, threshold, question)]

    def match(self, sentences: list[str], chunks: list[str], threshold: float | None = None,
              question: str = "") -> list[Segment]:
        """Partition `sentences` into segments and attach supporting chunks (see module docstring)."""
        threshold = self.threshold if threshold is None else threshold
        n = len(sentences)
        if n == 0:
            return []
        max_span = max(1, self.max_span)
        spans = [(i, j) for i in range(n) for j in range(i, min(n, i + max_span))]
        text = {span: " ".join(sentences[span[0] : span[1] + 1]) for span in spans}
        pairs = list(dict.fromkeys((text[span], chunk) for span in spans for chunk in chunks))
        lookup = dict(zip(pairs, self.scorer(pairs, question))) if pairs else {}
        raw = {span: [lookup[(text[span], c)] for c in chunks] for span in spans}

        # A segment's support for chunk k: its score, capped per sentence at that sentence's own
        # score for k plus the context bonus, averaged over its sentences.
        def support(span: tuple[int, int]) -> list[float]:
            i, j = span
            capped = [[min(raw[span][k], raw[(m, m)][k] + self.context_bonus) for m in range(i, j + 1)]
                      for k in range(len(chunks))]
            return [sum(sentences) / (j - i + 1) for sentences in capped]

        chunk_scores = {span: support(span) for span in spans}
        best = {span: max(scores, default=0.0) for span, scores in chunk_scores.items()}

        # value[j]: best objective over sentences[:j]; back[j]: start of the last segment.
        value = [0.0] + [float("-inf")] * n
        back = [0] * (n + 1)
        for j in range(1, n + 1):
            # Shortest last segment first: on ties, earlier segments come out longer.
            for i in range(j - 1, max(0, j - max_span) - 1, -1):
                length = j - i
                candidate = value[i] + length * max(best[(i, j - 1)], threshold) - self.split_penalty
                if candidate > value[j] + 1e-12:
                    value[j], back[j] = candidate, i

        segments: list[Segment] = []
        j = n
        while j > 0:
            i = back[j]
            span = (i, j - 1)
            top = best[span]
            supported = bool(chunks) and top >= threshold
            references = []
            if supported:
                references = sorted(
                    (
                        Reference(k, s)
                        for k, s in enumerate(chunk_scores[span])
                        if s >= threshold and s >= top - self.margin
                    ),
                    key=lambda r: (-r.score, r.chunk),
                )
            segments.append(Segment(i, j - 1, text[span], top, supported, references))
            j = i
        return segments[::-1]


# ------------------------------------------------------------------------------ marks

_CLOSING = re.compile(r"[.!?。！？]+[\"'”’)\]]*$")


def marked(text: str, refs: Sequence[int]) -> str:
    """`text` with the model's citation marks replaced by `refs` ("[1, 3]"), set before its
    closing punctuation; without refs, no mark. What a reader sees is the matcher's finding, not
    the number the model wrote (which may name another passage)."""
    bare = MARKER.sub("", text).rstrip()
    if not refs:
        return bare
    end = _CLOSING.search(bare)
    cut = end.start() if end else len(bare)
    return f"{bare[:cut]} [{', '.join(str(ref) for ref in refs)}]{bare[cut:]}"


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Where each sentence of split_sentences(text) lies in `text` (the split only folds
    whitespace, so each is found in order with any whitespace between its words)."""
    spans, cursor = [], 0
    for sentence in split_sentences(text):
        found = re.compile(r"\s+".join(re.escape(word) for word in sentence.split(" "))).search(text, cursor)
        spans.append(found.span())
        cursor = found.end()
    return spans


def cited(text: str, segments: Sequence[tuple[int, int, Sequence[int]]]) -> str:
    """`text` with each segment's marks (first and last sentence index, the refs backing it)
    made the matcher's; the layout between segments (paragraphs, list lines) is kept."""
    spans = sentence_spans(text)
    parts, cursor = [], 0
    for first, last, refs in segments:
        start, end = spans[first][0], spans[last][1]
        parts += [text[cursor:start], marked(text[start:end], refs)]
        cursor = end
    return "".join(parts) + text[cursor:]
