"""The reference matcher's support scorer: does this chunk state what this answer segment says?

A bi-encoder's cosine between a segment and a whole chunk measures topic: a same-topic chunk
that states other facts scores nearly as high as the one that states these, and across languages
(an English answer from a Korean chunk) every cosine crowds into the same narrow band. What tells
them apart is cheap to compute and learned from annotated answers:

- `cosine`: e5 cosine of the segment (as a query) and the chunk (as a passage);
- `sentence_cosine` (across scripts): the best e5 cosine of the segment and one sentence of the
  chunk. Across languages the chunk's sentence that the segment translates stands out (median
  0.88 against 0.85 for an unrelated sentence's best) where whole-chunk cosines overlap
  (0.84 against 0.82), docs/BENCHMARKS.md;
- `wording`: the share of the segment's character trigrams the chunk contains, capped by the
  share of its numbers there (same script only: rag/scoring.lexical_support);
- `numbers_missing`: the share of the segment's numbers the chunk lacks: a changed figure makes
  a paraphrase unsupported in any language;
- `latin`: across scripts, the share of the Korean side's Latin-script words (product names,
  commands, abbreviations) that the English side contains.

Two logistic models, one for a segment in the chunk's script and one across scripts (they need
their own calibration), with weights in rag/support.json fitted by benchmarks/fit_support.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag.files import write_text_atomically
from rag.ranking import Logistic
from rag.references import split_sentences
from rag.scoring import _NUMBER, BiEncoderScorer, Pair, hangul_script, lexical_support

SAME = ("cosine", "wording", "numbers_missing")
CROSS = ("cosine", "sentence_cosine", "numbers_missing", "latin")
DEFAULT_SUPPORT = Path(__file__).with_name("support.json")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_\-]{2,}")
_HEADER = re.compile(r"\A(?:[^\n:]{1,40}: [^\n]*\n)+\n")  # LlamaIndex's "Key: value" metadata block


def statements(chunk: str) -> list[str]:
    """The chunk's sentences, without the header prefix that every chunk of a document shares."""
    body = _HEADER.sub("", chunk, count=1)
    return [s for s in split_sentences(body) if len(s) > 3] or [chunk]


def numbers_missing(segment: str, chunk: str) -> float:
    numbers = set(_NUMBER.findall(segment))
    return len(numbers - set(_NUMBER.findall(chunk))) / len(numbers) if numbers else 0.0


def latin_shared(segment: str, chunk: str) -> float:
    """Share of the Korean text's Latin-script words that the other text contains."""
    korean, other = (segment, chunk) if hangul_script(segment) else (chunk, segment)
    words = {w.lower() for w in _LATIN_WORD.findall(korean)}
    lowered = other.lower()
    return sum(w in lowered for w in words) / len(words) if words else 0.0


@dataclass
class SupportModel:
    same: Logistic
    cross: Logistic
    source: str = ""

    @classmethod
    def load(cls, path: Path) -> SupportModel:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            same, cross = data["same"], data["cross"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ValueError(f"support model {path}: cannot read it ({error})") from None
        return cls(Logistic.from_dict(same, SAME, f"support model {path} (same)"),
                   Logistic.from_dict(cross, CROSS, f"support model {path} (cross)"), data.get("source", ""))

    def save(self, path: Path) -> None:
        data = {"same": self.same.to_dict(), "cross": self.cross.to_dict(), "source": self.source}
        write_text_atomically(path, json.dumps(data, indent=1) + "\n")


class LearnedSupport:
    """(segment, chunk) pairs -> P(the chunk states the segment), from the bi-encoder's vectors
    (cached: the chunks' come from the store) and the wording."""

    kind = "learned-support"

    def __init__(self, encoder: BiEncoderScorer, model: SupportModel):
        self.encoder = encoder
        self.model = model

    def features(self, pairs: Sequence[Pair]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows of SAME, rows of CROSS, which pairs are across scripts) for the pairs; CROSS rows
        of same-script pairs are zeros (their chunks' sentences are not embedded: the wording
        already tells, and the matcher stays within its time budget)."""
        across = np.array([hangul_script(a) != hangul_script(b) for a, b in pairs], dtype=bool)
        segments = self._segment_vectors([a for a, _ in pairs], {a for (a, _), x in zip(pairs, across) if x})
        chunks = self.encoder.embed([b for _, b in pairs], query=False)
        cosines = np.einsum("ij,ij->i", segments, chunks)
        best = self._best_sentence(pairs, segments, across)
        same, cross = [], []
        for (segment, chunk), cosine, is_cross, top in zip(pairs, cosines, across, best):
            missing = numbers_missing(segment, chunk)
            same.append([cosine, 0.0 if is_cross else lexical_support(segment, chunk), missing])
            cross.append([cosine, top, missing, latin_shared(segment, chunk)] if is_cross else [0.0] * len(CROSS))
        return np.array(same).reshape(-1, len(SAME)), np.array(cross).reshape(-1, len(CROSS)), across

    def _segment_vectors(self, segments: Sequence[str], whole: set[str]) -> np.ndarray:
        """A segment's vector: the normalised sum of its sentences' query vectors, or for the
        segments in `whole` its own embedding. The matcher scores every run of up to three
        sentences; embedding each sentence once instead of each run halves the matcher's time,
        with the same figures on the same-script gold sets. Across scripts the sum lowered
        precision (0.87 -> 0.63 on EN answers on KO chunks), so those runs are embedded whole."""
        parts = {text: [text] if text in whole else (split_sentences(text) or [text]) for text in dict.fromkeys(segments)}
        unique = list(dict.fromkeys(p for sentences in parts.values() for p in sentences))
        vectors = dict(zip(unique, self.encoder.embed(unique, query=True)))
        joined = {}
        for text, sentences in parts.items():
            total = np.sum([vectors[p] for p in sentences], axis=0)
            joined[text] = total / (np.linalg.norm(total) or 1.0)
        return np.stack([joined[t] for t in segments])

    def _best_sentence(self, pairs: Sequence[Pair], segments: np.ndarray, across: np.ndarray) -> np.ndarray:
        """The best cosine of each cross-script segment with one sentence of its chunk, all the
        chunks' sentences embedded in one batch (0 for same-script pairs)."""
        parts = {b: statements(b) for (_, b), x in zip(pairs, across) if x}
        best = np.zeros(len(pairs))
        if not parts:
            return best
        flat = self.encoder.embed([t for texts in parts.values() for t in texts], query=False)
        ends = np.cumsum([len(texts) for texts in parts.values()])
        vectors = dict(zip(parts, np.split(flat, ends[:-1])))
        for i, ((_, chunk), vector) in enumerate(zip(pairs, segments)):
            if across[i]:
                best[i] = float((vectors[chunk] @ vector).max())
        return best

    def __call__(self, pairs: Sequence[Pair]) -> list[float]:
        if not pairs:
            return []
        same, cross, across = self.features(pairs)
        return np.where(across, self.model.cross(cross), self.model.same(same)).tolist()


def fit_logistic(rows: np.ndarray, labels: np.ndarray, features: tuple[str, ...], positive_weight: float) -> Logistic:
    """Logistic regression on standardised features, weights given back in raw units;
    `positive_weight` sets the operating point (how many supported pairs one unsupported
    pair's error is worth) for the matcher's threshold of 0.5."""
    from sklearn.linear_model import LogisticRegression

    mean, scale = rows.mean(axis=0), rows.std(axis=0) + 1e-9
    model = LogisticRegression(max_iter=3000, class_weight={0.0: 1.0, 1.0: positive_weight})
    model.fit((rows - mean) / scale, labels)
    raw = model.coef_[0] / scale
    bias = float(model.intercept_[0] - (model.coef_[0] * mean / scale).sum())
    return Logistic([round(float(w), 6) for w in raw], round(bias, 6), features)


def support_scorer(settings, encoder: BiEncoderScorer | None):
    """The reference matcher's scorer: the learned support model over the bi-encoder, or with
    `scoring.support = "llm"` the LLM server as verifier (rag/verifier.py)."""
    if settings.scoring.support == "llm":
        from rag.verifier import LLMVerifier

        return LLMVerifier.from_settings(settings)
    return LearnedSupport(encoder, SupportModel.load(settings.scoring.support_file))
