"""The reference matcher's support scorer: does this chunk state what this answer segment says?

A bi-encoder's cosine of a segment and a whole chunk measures topic, and across languages every
cosine crowds into one narrow band. Two logistic models, same script and across scripts (weights
and e5's language centres in rag/support.json, fitted by benchmarks/fit_support.py), read cheap
features instead: `cosine` (centred across scripts), `passage_cosine` (across scripts: the best
centred cosine with one sentence of the chunk, or two adjacent ones), `wording`
(`lexical_support`), `numbers_missing` and `latin` (the Korean side's Latin-script words that the
other side holds). Rules back what the models cannot read (rag/support_rules.py: a table row, a
code) and reject what they miss (rag/claims.py: each figure and date stated, in its unit, for its
thing; rag/premise.py: no qualifier whose opposite the chunk states). With the question, a segment
that says it back is also read without its words.
Figures: docs/BENCHMARKS.md, "Reference support: which model" and "Support model, second step".
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from rag.files import write_text_atomically
from rag.logistic import Logistic, fit_standardised
from rag.scoring import BiEncoderScorer, Pair, Scorer
from rag.text import (HEADER, NUMBER, across_scripts, hangul_script, line_sentences, restated,
                      split_sentences, trigrams)
from rag.claims import claims_backed, claims_named, met_cases, stated_figures
from rag.codes import unbracketed
from rag.support_rules import (CLAIM_SUPPORT, CODE_SUPPORT, TABLE_SUPPORT, code_support, common_codes,
                               passages, table_support)
from rag.premise import PremiseCheck

SAME = ("cosine", "wording", "numbers_missing")
CROSS = ("cosine", "passage_cosine", "numbers_missing", "latin")
CENTRES = ("query_latin", "query_hangul", "passage_latin", "passage_hangul")
DEFAULT_SUPPORT = Path(__file__).with_name("support.json")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_\-]{2,}")
_FILLER = frozenset("the and was were are is for with that this from has have had its their".split())


def one_sentence_holds(segment: str, chunk: str, share: float = 0.75) -> bool:
    """Whether one sentence or line of the chunk holds every figure of the segment and most of its
    words: "the client must every four weeks" is not the sentence about the client's two weeks,
    nor the one about the risk register's four."""
    needed = {w.lower() for w in re.findall(r"\w+", segment) if len(w) > 2} - _FILLER
    figures = figures_of(segment)
    for sentence in line_sentences(HEADER.sub("", chunk, count=1)):
        held = {w.lower() for w in re.findall(r"\w+", sentence)}
        if figures <= figures_of(sentence) and len(needed & held) >= share * len(needed):
            return True
    return False


def _says_more(bare: str, question: str) -> bool:
    """Whether what is left of a segment said back holds a figure, or a word the question does not:
    "The." is the question restated and nothing more."""
    asked = {w.lower() for w in re.findall(r"\w+", question)}
    return any(any(c.isdigit() for c in w) or (len(w) > 2 and w.lower() not in asked | _FILLER)
               for w in re.findall(r"\w+", bare))


# A count in words is a figure too ("five consecutive failed attempts" is not backed by "three");
# "one" is left out: it is more often a pronoun ("one of our systems") than a count.
_COUNTS = {word: str(n) for n, word in enumerate(
    "two three four five six seven eight nine ten eleven twelve".split(), 2)} | {
    "fifteen": "15", "twenty": "20", "thirty": "30", "forty": "40", "fifty": "50"}
_COUNT_WORD = re.compile(rf"\b(?:{'|'.join(_COUNTS)})\b", re.IGNORECASE)


def figures_of(text: str) -> set[str]:
    """The numbers of a text, a count in words as its digits."""
    return set(NUMBER.findall(text)) | {_COUNTS[word.lower()] for word in _COUNT_WORD.findall(text)}


def numbers_missing(segment: str, chunk: str) -> float:
    """Share of the segment's numbers the chunk lacks; a case meeting the chunk's bound is not
    lacking (rag/claims.py `met_cases`)."""
    numbers = figures_of(segment)
    if not numbers:
        return 0.0
    missing = numbers - figures_of(chunk)
    if missing:  # a case meeting a bound, or a figure the chunk spells otherwise ("500,000": 500000)
        missing -= {n for case in met_cases(segment, chunk) | stated_figures(segment, chunk)
                    for n in NUMBER.findall(case)}
    return len(missing) / len(numbers)


@lru_cache(maxsize=4096)
def _wording(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """Trigrams and numbers of a text; cached, as each chunk meets every segment of an answer."""
    return frozenset(trigrams(text)), frozenset(NUMBER.findall(text))


def lexical_support(segment: str, chunk: str) -> float | None:
    """Share of the segment's trigrams that the chunk contains (1.0: every word is there), capped
    by the share of its numbers the chunk contains: one missing figure is a few trigrams among
    many, but a chunk without the figure cannot support the statement. Across languages words
    cannot match, so only the numbers count; None when there are none."""
    (grams, numbers), (chunk_grams, _) = _wording(segment), _wording(chunk)
    number_share = 1.0 - numbers_missing(segment, chunk) if numbers else None
    if across_scripts(segment, chunk):
        return number_share
    if not grams:
        return 0.0
    share = len(grams & chunk_grams) / len(grams)
    return share if number_share is None else min(share, number_share)


def latin_shared(segment: str, chunk: str) -> float:
    """Share of the Korean text's Latin-script words that the other text contains."""
    korean, other = (segment, chunk) if hangul_script(segment) else (chunk, segment)
    words = {w.lower() for w in _LATIN_WORD.findall(korean)}
    lowered = other.lower()
    return sum(w in lowered for w in words) / len(words) if words else 0.0


def names_present(segment: str, chunk: str) -> float:
    """Share of a Korean segment's Latin words (names, codes: "Rheinwall Re", "reportbug") that
    the Latin chunk holds as words: a translation keeps them as written, so a swapped one is a
    changed fact."""
    names = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9]+", segment)}
    if not names or not hangul_script(segment, 3):
        return 1.0
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", chunk)}
    return len(names & words) / len(names)


def centre_key(text: str, query: bool) -> str:
    hangul = hangul_script(text, 3 if query else 1)  # a query (a segment) as across_scripts reads it
    return f"{'query' if query else 'passage'}_{'hangul' if hangul else 'latin'}"


@dataclass
class SupportModel:
    same: Logistic | None
    cross: Logistic | None
    centres: dict[str, np.ndarray]  # CENTRES: e5's mean vector per script, as query and as passage
    source: str = ""

    @classmethod
    def load(cls, path: Path) -> SupportModel:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            same, cross = data["same"], data["cross"]
            centres = {key: np.asarray(data["centres"][key], dtype=np.float32) for key in CENTRES}
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ValueError(f"support model {path}: cannot read it ({error})") from None
        return cls(Logistic.from_dict(same, SAME, f"support model {path} (same)"),
                   Logistic.from_dict(cross, CROSS, f"support model {path} (cross)"),
                   centres, data.get("source", ""))

    def save(self, path: Path) -> None:
        data = {"same": self.same.to_dict(), "cross": self.cross.to_dict(), "source": self.source,
                "centres": {key: [round(float(x), 6) for x in self.centres[key]] for key in CENTRES}}
        write_text_atomically(path, json.dumps(data, indent=1) + "\n")

    def centred(self, vectors: np.ndarray, texts: Sequence[str], query: bool) -> np.ndarray:
        """The vectors with their language's mean taken out, normalised again."""
        moved = vectors - np.stack([self.centres[centre_key(t, query)] for t in texts])
        return moved / np.maximum(np.linalg.norm(moved, axis=1, keepdims=True), 1e-9)


class LearnedSupport:
    """(segment, chunk) pairs -> P(the chunk states the segment), from the bi-encoder's vectors
    (cached: the chunks' come from the store) and the wording."""

    kind = "learned-support"

    def __init__(self, encoder: BiEncoderScorer, model: SupportModel, opposites: PremiseCheck | None = None):
        self.encoder = encoder
        self.model = model
        self.opposites = opposites  # a chunk stating a qualifier's opposite backs no sentence

    def features(self, pairs: Sequence[Pair]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows of SAME, rows of CROSS, which pairs are across scripts) for the pairs; CROSS rows
        of same-script pairs are zeros (their chunks' sentences are not embedded: the wording
        already tells, and the matcher stays within its time budget)."""
        across = np.array([across_scripts(a, b) for a, b in pairs], dtype=bool)
        segments = self._segment_vectors([a for a, _ in pairs], {a for (a, _), x in zip(pairs, across) if x})
        chunks = self.encoder.embed([b for _, b in pairs], query=False)
        cosines = np.einsum("ij,ij->i", segments, chunks)
        centred = np.zeros_like(segments)  # across scripts, the language centres taken out
        if across.any():
            rows = np.flatnonzero(across)
            centred[rows] = self.model.centred(segments[rows], [pairs[i][0] for i in rows], True)
            chunk_rows = self.model.centred(chunks[rows], [pairs[i][1] for i in rows], False)
            cosines[rows] = np.einsum("ij,ij->i", centred[rows], chunk_rows)
        best = self._best_passage(pairs, centred, across)
        same, cross = [], []
        for (segment, chunk), cosine, is_cross, top in zip(pairs, cosines, across, best):
            missing = numbers_missing(segment, chunk)
            same.append([cosine, 0.0 if is_cross else lexical_support(segment, chunk), missing])
            cross.append([cosine, top, missing, latin_shared(segment, chunk)]
                         if is_cross else [0.0] * len(CROSS))
        return np.array(same).reshape(-1, len(SAME)), np.array(cross).reshape(-1, len(CROSS)), across

    def _segment_vectors(self, segments: Sequence[str], whole: set[str]) -> np.ndarray:
        """A segment's vector: the normalised sum of its sentences' query vectors (each sentence
        embedded once, not each run of up to three: faster, same figures), or for the segments in
        `whole` (across scripts, where the sum lowered precision) its own embedding
        (docs/BENCHMARKS.md, "Reference support: which model")."""
        parts = {text: [text] if text in whole else (split_sentences(text) or [text])
                 for text in dict.fromkeys(segments)}
        unique = list(dict.fromkeys(p for sentences in parts.values() for p in sentences))
        vectors = dict(zip(unique, self.encoder.embed(unique, query=True)))
        joined = {}
        for text, sentences in parts.items():
            total = np.sum([vectors[p] for p in sentences], axis=0)
            joined[text] = total / (np.linalg.norm(total) or 1.0)
        return np.stack([joined[t] for t in segments])

    def _best_passage(self, pairs: Sequence[Pair], centred: np.ndarray, across: np.ndarray) -> np.ndarray:
        """The best centred cosine of each cross-script segment (its centred vector in
        `centred`) with one passage of its chunk, all the chunks' passages embedded in one batch
        (0 for same-script pairs)."""
        parts = {b: passages(b) for (_, b), x in zip(pairs, across) if x}
        best = np.zeros(len(pairs))
        if not parts:
            return best
        texts = [t for group in parts.values() for t in group]
        flat = self.model.centred(self.encoder.embed(texts, query=False), texts, False)
        ends = np.cumsum([len(group) for group in parts.values()])
        vectors = dict(zip(parts, np.split(flat, ends[:-1])))
        for i in np.flatnonzero(across):
            best[i] = float((vectors[pairs[i][1]] @ centred[i]).max())
        return best

    def __call__(self, pairs: Sequence[Pair], asked: str = "") -> list[float]:
        """P(the chunk states the segment) per pair. With the question `asked`, a segment is also
        read without the words it copies from it (`restated`): a small model says the question
        back ("the number of wrong password tries before a lock-out is five"), and the asker's
        wording, unlike the document's, would count against the answer. What is left must be one
        sentence of the chunk (`one_sentence_holds`); the rules read the segment whole: each
        figure stated for its thing, no qualifier contradicted."""
        if not pairs:
            return []
        pairs = [(unbracketed(segment, chunk), chunk) for segment, chunk in pairs]
        scores = self._learned(pairs)
        if asked:
            bare = [(restated(segment, asked), chunk) for segment, chunk in pairs]
            redo = [i for i, (pair, cut) in enumerate(zip(pairs, bare))
                    if pair != cut and _says_more(cut[0], asked) and one_sentence_holds(*cut)]
            if redo:
                scores[redo] = np.maximum(scores[redo], self._learned([bare[i] for i in redo]))
        common = common_codes(pairs)
        rules = [TABLE_SUPPORT if "|" in chunk and table_support(segment, chunk)
                 else CODE_SUPPORT if code_support(segment, chunk, common[segment])
                 else CLAIM_SUPPORT if claims_named(segment, chunk) else 0.0
                 for segment, chunk in pairs]
        # Support means the chunk states each figure and date for this thing (rag/claims.py).
        stated = [claims_backed(segment, chunk)
                  and not (self.opposites and self.opposites.contradicts(segment, chunk))
                  for segment, chunk in pairs]
        return (np.maximum(scores, rules) * np.asarray(stated, dtype=float)).tolist()

    def _learned(self, pairs: Sequence[Pair]) -> np.ndarray:
        """The logistic models' P. Figures decide: P is scaled by the share of the segment's
        numbers the chunk has (a translation with one figure changed is otherwise nearly as close
        as the right one), and across scripts by the share of its Latin words (names, codes)."""
        same, cross, across = self.features(pairs)
        present = 1.0 - same[:, SAME.index("numbers_missing")]
        present *= [names_present(a, b) if x else 1.0 for (a, b), x in zip(pairs, across)]
        return np.where(across, self.model.cross(cross), self.model.same(same)) * present


def fit_logistic(rows: np.ndarray, labels: np.ndarray, features: tuple[str, ...],
                 positive_weight: float) -> Logistic:
    """Logistic regression on standardised features, weights given back in raw units;
    `positive_weight` sets the operating point (how many supported pairs one unsupported
    pair's error is worth) for the matcher's threshold of 0.5."""
    from sklearn.linear_model import LogisticRegression

    def fit(standardised: np.ndarray) -> tuple[np.ndarray, float]:
        model = LogisticRegression(max_iter=3000, class_weight={0.0: 1.0, 1.0: positive_weight})
        model.fit(standardised, labels)
        return model.coef_[0], float(model.intercept_[0])

    return fit_standardised(rows, fit, features)


def fit_centres(encoder: BiEncoderScorer, texts: Sequence[str],
                per_script: int = 1500) -> dict[str, np.ndarray]:
    """e5's mean vector per script (Latin, Hangul), as query and as passage, from unlabelled
    sentences (thinned evenly to `per_script` of each script)."""
    centres = {}
    for hangul in (False, True):
        chosen = [t for t in dict.fromkeys(texts) if hangul_script(t) == hangul]
        chosen = chosen[:: max(1, len(chosen) // per_script)][:per_script]
        if not chosen:
            raise ValueError(f"no {'Hangul' if hangul else 'Latin'}-script sentences to centre on")
        for query in (True, False):
            centres[centre_key(chosen[0], query)] = encoder.embed(chosen, query=query).mean(axis=0)
    return centres


def support_scorer(settings, encoder: BiEncoderScorer | None) -> Scorer:
    """The reference matcher's scorer: the learned support model over the bi-encoder, or with
    `support.method = "llm"` the LLM server as verifier (rag/verifier.py)."""
    if settings.support.method == "llm":
        from rag.verifier import LLMVerifier

        return LLMVerifier.from_settings(settings)
    return LearnedSupport(encoder, SupportModel.load(settings.support.model_file),
                          PremiseCheck.from_settings(settings))
