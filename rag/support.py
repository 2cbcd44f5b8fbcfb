"""The reference matcher's support scorer: does this chunk state what this answer segment says?

A bi-encoder's cosine of a segment and a whole chunk measures topic, and across languages every
cosine crowds into one narrow band. Two logistic models, same script and across scripts (weights
and e5's language centres in rag/support.json, fitted by benchmarks/fit_support.py), read cheap
features instead: `cosine` (centred across scripts), `passage_cosine` (across scripts: the best
centred cosine with one sentence of the chunk, or two adjacent ones), `wording`
(`lexical_support`), `numbers_missing` and `latin` (the Korean side's Latin-script words that the
other side holds). Rules back what the models cannot read (`table_support`, `code_support`) and
reject what they miss (rag/claims.py: each figure and date stated, in its unit, for its thing;
rag/premise.py: no qualifier whose opposite the chunk states).
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
from rag.text import (HEADER, MARKER, NUMBER, across_scripts, hangul_script, markdown_tables, split_sentences,
                      trigrams)
from rag.claims import claims_backed, claims_named, met_cases, stated_figures
from rag.premise import PremiseCheck

SAME = ("cosine", "wording", "numbers_missing")
CROSS = ("cosine", "passage_cosine", "numbers_missing", "latin")
CENTRES = ("query_latin", "query_hangul", "passage_latin", "passage_hangul")
DEFAULT_SUPPORT = Path(__file__).with_name("support.json")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_\-]{2,}")


def passages(chunk: str) -> list[str]:
    """The chunk's sentences and each two adjacent ones, without the header prefix that every
    chunk of a document shares."""
    body = HEADER.sub("", chunk, count=1)
    sentences = [s for s in split_sentences(body) if len(s) > 3] or [chunk]
    return sentences + [f"{a} {b}" for a, b in zip(sentences, sentences[1:])]


def numbers_missing(segment: str, chunk: str) -> float:
    """Share of the segment's numbers the chunk lacks; a case meeting the chunk's bound is not
    lacking (rag/claims.py `met_cases`)."""
    numbers = set(NUMBER.findall(segment))
    if not numbers:
        return 0.0
    missing = numbers - set(NUMBER.findall(chunk))
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


TABLE_SUPPORT = 0.9  # the score of a segment a table row states (table_support)
_NUMERIC_CELL = re.compile(r"[-+]?\d+(?:[.,]\d+)*\s*\S{0,3}")
_DATE_CELL = re.compile(r"\d{4}[-./]\d{1,2}[-./]\d{1,2}")


def _named(name: str, segment: str) -> bool:
    """The segment names this cell or column: each of its tokens with a digit as a word of the
    segment ("SL-13" needs "13": "SL-14" shares most of its trigrams), or most character
    trigrams of its longer words ("Peak force (kN)", "peak_decel_g", "WorldSID 50M")."""
    tokens = re.findall(r"[^\W_]+", name.lower())
    coded = [t for t in tokens if any(c.isdigit() for c in t)]
    if coded and set(coded) <= set(re.findall(r"[^\W_]+", segment.lower())):
        return True
    grams = trigrams(" ".join(t for t in tokens if t not in coded and len(t) >= 3))
    return bool(grams) and len(grams & trigrams(segment)) >= 0.6 * len(grams)


def table_support(segment: str, chunk: str) -> bool:
    """Whether one Markdown table row of the chunk states the segment (the learned model reads a
    table as one text): the row the segment names most by its text cells (a tie: none) holds each
    of its figures (less the header prefix's and the codes naming the row: "ES-2re" is not 2), one
    of them a value, and a figure from a numeric cell after the row's first is named by its column
    ("388" needs "passenger"). Same script only: across languages no cell is named."""
    if across_scripts(segment, chunk):
        return False
    header = HEADER.match(chunk)
    in_header = set(NUMBER.findall(header.group(0) if header else ""))
    for columns, rows in markdown_tables(chunk):
        values = [[i for i, cell in enumerate(row) if _NUMERIC_CELL.fullmatch(cell)] for row in rows]
        named = [sum(_named(cell, segment) for i, cell in enumerate(row) if cell and i not in nums)
                 for row, nums in zip(rows, values)]
        best = max(named, default=0)
        if not best or named.count(best) > 1:
            continue
        row, nums = rows[named.index(best)], values[named.index(best)]
        text = segment
        for i, cell in enumerate(row):
            if i not in nums and not _DATE_CELL.fullmatch(cell) and re.search(r"\d", cell):
                text = re.sub(re.escape(cell), " ", text, flags=re.I)  # a code naming the row
        figures = set(NUMBER.findall(text)) - in_header
        covered, valued = set(), False
        for i, cell in enumerate(row):
            found = figures & set(NUMBER.findall(cell))
            if found and i in nums[1:] and not (i < len(columns) and _named(columns[i], segment)):
                continue  # a figure of another column than the one the segment names
            covered |= found
            valued = valued or bool(found and (i in nums or _DATE_CELL.fullmatch(cell)))
        if covered == figures and (valued or (not figures and best >= 2)):
            return True
    return False


CLAIM_SUPPORT = 0.8  # a segment whose every figure the chunk states for its thing (claims_named)
CODE_SUPPORT = 0.8  # the score of a cross-script segment whose codes its chunk states (code_support)
_CODE = re.compile(r"`([^`\n]{2,80})`|([^\s`]+)")
_CODE_SIGN = re.compile(r"[A-Za-z].*[/.@_-]|[/.@_-].*[A-Za-z]")


def _flat(text: str) -> str:
    """Lower-cased, whitespace folded: a code is found across line breaks."""
    return " ".join(text.lower().split())


def codes(text: str) -> set[str]:
    """The text's codes: the words it writes in backticks, and Latin-script words with a path,
    dot, at, dash or underscore inside ("/etc/modules", "file-rc", "xyz@packages.debian.org"),
    not plain words ("squeeze", "Debian") that a sentence about anything may name."""
    found = set()
    for quoted, word in _CODE.findall(MARKER.sub("", text)):
        for token in quoted.split() if quoted else [word]:
            token = re.sub(r"[^\x21-\x7e]+.*$", "", token.strip("\"'“”‘’()[]<>,;:")).rstrip(".,;:")
            coded = quoted or _CODE_SIGN.search(token)
            if re.search(r"[A-Za-z0-9]{3,}", token) and re.search(r"[A-Za-z]", token) and coded:
                found.add(token.lower())
    return found


def code_support(segment: str, chunk: str, common: set[str] = frozenset()) -> bool:
    """Whether the chunk, in the other script, states every code of the segment but the `common`
    ones (they name the topic), and a passage holding one of them holds all its figures: across
    scripts the cosines miss a terse answer resting on a file, command or package name copied
    verbatim ("모듈은 `/etc/modules` 파일에 둡니다."). A syllable counts as three letters here, so a
    Korean sentence around a command ("패키지는 `reportbug`입니다.") is Korean."""
    if hangul_script(segment, 3) == hangul_script(chunk, 3):
        return False
    wanted = codes(segment) - common
    text = _flat(chunk)
    if not wanted or not all(code in text for code in wanted):
        return False
    figures = set(NUMBER.findall(MARKER.sub("", segment)))
    holding = [p for p in passages(chunk) if any(c in p.lower() for c in wanted)]
    return any(figures <= set(NUMBER.findall(p)) for p in holding)


def common_codes(pairs: Sequence[Pair]) -> dict[str, set[str]]:
    """Per segment, the codes that name the topic rather than an answer: those more than half
    of the chunks it is scored against hold (of three or more), or one of their header prefixes
    holds (a title such as "Getting support for Debian GNU/Linux")."""
    chunks: dict[str, list[str]] = {}
    for segment, chunk in pairs:
        chunks.setdefault(segment, []).append(chunk)
    common = {}
    for segment, texts in chunks.items():
        flat = [_flat(t) for t in texts]
        headers = " ".join(m.group(0).lower() for t in texts if (m := HEADER.match(t)))
        common[segment] = {code for code in codes(segment) if code in headers
                           or (len(flat) > 2 and 2 * sum(code in t for t in flat) > len(flat))}
    return common


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

    def __call__(self, pairs: Sequence[Pair]) -> list[float]:
        if not pairs:
            return []
        same, cross, across = self.features(pairs)
        # Figures decide: P is scaled by the share of the segment's numbers the chunk has (a
        # translation with one figure changed is otherwise nearly as close as the right one), and
        # across scripts by the share of its Latin words (names, codes).
        present = 1.0 - same[:, SAME.index("numbers_missing")]
        present *= [names_present(a, b) if x else 1.0 for (a, b), x in zip(pairs, across)]
        scores = np.where(across, self.model.cross(cross), self.model.same(same)) * present
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
