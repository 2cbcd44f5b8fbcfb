"""A deterministic correctness check beside the LLM judge: does the answer state the gold
answer's key value?

The key value of a gold answer is its figures (each number with the unit written after it;
codes and dates such as "SI-2024-05" are words), or, for an answer without figures, its content
words. An answer is right when it states every figure
with its unit (thousands separators, decimal commas, spacing and unit spelling normalised: "1,204"
= "1204", "61,2 kN" = "61.2kN", "14 밀리초" = "14 ms") or, without figures, when it holds the
content words (at least two thirds of them for a long answer; Korean particles and endings after
a word are tolerated: "화성 시험소에서" holds "화성 시험소"). A gold answer that starts with yes or
no also needs the answer's yes or no. A bracketed note in the gold answer ("31 March 2025
(unchanged)") is not part of its key value. No model is involved, so the figure
is the same on every run and every machine; the judge covers what a key value cannot.
"""

from __future__ import annotations

import re
import unicodedata

from rag.text import MARKER

# A number (thousands separators and a decimal point or comma allowed), then an optional unit:
# letters, %, ° or Hangul written right after it or after one space.
_FIGURE = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:[.,](\d+))?(?:\s?(%|°\s?c|[a-zµ/²³]+|[가-힣]+))?")
# Unit spellings that mean the same unit; the key is what every spelling becomes.
_UNITS = {
    "ms": ("ms", "msec", "밀리초"), "s": ("s", "sec", "secs", "second", "seconds", "초"),
    "mm": ("mm", "밀리미터", "millimetre", "millimetres", "millimeter", "millimeters"),
    "km/h": ("km/h", "kph", "kmh"), "kn": ("kn", "킬로뉴턴", "kilonewton", "kilonewtons"),
    "°c": ("°c", "degc", "degree", "degrees", "도"), "%": ("%", "percent", "퍼센트", "프로"),
    "g": ("g",), "kg": ("kg", "킬로그램"), "m": ("m", "미터", "metre", "metres", "meter", "meters"),
}
_UNIT_OF = {spelling: key for key, spellings in _UNITS.items() for spelling in spellings}
_LONGEST_FIRST = sorted((s for s in _UNIT_OF if len(s) > 1), key=len, reverse=True)
# Codes and dates joined by hyphens or slashes ("SI-2024-05", "2024-08-28") are identifiers, not
# figures: they are matched as words.
_IDENTIFIER = re.compile(r"\w*\d\w*(?:[-/]\w+)+|\w+(?:[-/]\w+)*[-/]\w*\d\w*")
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
# Korean particles and endings that follow a word without a space (longest first).
_PARTICLES = sorted(
    ("은 는 이 가 을 를 에 에서 에게 의 로 으로 와 과 도 만 "
     "이다 입니다 였다 이었다 였습니다 까지 부터 처럼 보다 이며 였고").split(),
    key=len, reverse=True,
)
_STOP = set(
    "a an the of in on at to for by with and or is are was were be been it its this that as from "
    "which who what when where how did does do test".split()
)


_MONTHS = {name: i for i, names in enumerate(
    ("january jan", "february feb", "march mar", "april apr", "may", "june jun", "july jul",
     "august aug", "september sep sept", "october oct", "november nov", "december dec"), start=1)
    for name in names.split()}
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DATES = [  # (pattern, group order year, month, day); every spelling becomes 2024-08-28
    (re.compile(rf"\b{_MONTH} (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b"), (3, 1, 2)),
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?{_MONTH},? (\d{{4}})\b"), (3, 2, 1)),
    (re.compile(r"\b(\d{4})[./](\d{1,2})[./](\d{1,2})\b"), (1, 2, 3)),
    (re.compile(r"(\d{4})년 ?(\d{1,2})월 ?(\d{1,2})일"), (1, 2, 3)),
]


# A weekday before a date is the date's: "Sat 5 Oct 2024" states "Saturday 5 October 2024".
_WEEKDAY = re.compile(r"\b(?:mon|tue(?:s)?|wed(?:nes)?|thu(?:r(?:s)?)?|fri|sat(?:ur)?|sun)(?:day)?\.?,? "
                      r"(?=\d{4}-\d\d-\d\d)")


def _iso_date(match: re.Match, order: tuple[int, int, int]) -> str:
    year, month, day = (match.group(i) for i in order)
    month = _MONTHS.get(month.rstrip("."), month) if not month.isdigit() else month
    return f"{year}-{int(month):02d}-{int(day):02d}"


# A scale after a currency's amount: "EUR 1.24m" is EUR 1.24 million, never metres.
_SCALED = re.compile(r"((?:eur|usd|gbp|chf|krw|pln|czk|sek|nok|dkk|jpy|[€$£₩])\s?\d+(?:[.,]\d+)?)\s?"
                     r"(m|mn|mio|k|bn)\b")
_SCALE_WORDS = {"m": "million", "mn": "million", "mio": "million", "k": "thousand", "bn": "billion"}


_DASHES = re.compile(r"[‐‑‒–—−]")
# A gold answer's bracketed note ("31 March 2025 (unchanged)", "TRK-0536 (701,254 km)", a name's
# other spelling): what backs or glosses the key value, not part of it.
_NOTE = re.compile(r"\s*\([^()]*\)")


def _normal(text: str) -> str:
    """NFKC, lower case, every dash a hyphen ("06:00–14:00"), dates written as 2024-08-28
    ("August 28, 2024", "2024년 8월 28일"), and a currency's scale in words ("EUR 1.24m" as
    "EUR 1.24 million")."""
    text = _DASHES.sub("-", unicodedata.normalize("NFKC", text).lower())
    for pattern, order in _DATES:
        text = pattern.sub(lambda m, order=order: _iso_date(m, order), text)
    text = _WEEKDAY.sub("", text)
    return _SCALED.sub(lambda m: f"{m.group(1)} {_SCALE_WORDS[m.group(2)]}", text)


def figures(text: str) -> list[tuple[float, str | None]]:
    """(value, unit) for each number in the text; the unit is None where no known unit follows
    (a bare count, or a word such as "times" that is not a unit)."""
    found = []
    text = _IDENTIFIER.sub(" ", _normal(text))
    text = re.sub(r"\b[a-z]+\b", lambda m: _NUMBER_WORDS.get(m.group(), m.group()), text)
    for whole, fraction, unit in _FIGURE.findall(text):
        value = float(whole.replace(",", "") + (f".{fraction}" if fraction else ""))
        unit = re.sub(r"\s", "", unit) if unit else ""
        found.append((value, _UNIT_OF.get(unit) or _unit_prefix(unit)))
    return found


def _unit_prefix(word: str) -> str | None:
    """A unit spelled at the start of a longer word ("4.1배를" has none, "14ms였다" has ms)."""
    for spelling in _LONGEST_FIRST:
        if word.startswith(spelling):
            return _UNIT_OF[spelling]
    return None


def _stem(word: str) -> str:
    """The word without a Korean particle or ending, also after a Latin name ("gnash와")."""
    if mixed := re.fullmatch(r"([^가-힣]+)([가-힣]+)", word):
        return mixed.group(1) if mixed.group(2) in _PARTICLES else word
    if re.fullmatch(r"[가-힣]+", word):
        for particle in _PARTICLES:
            if word.endswith(particle) and len(word) > len(particle):
                return word[: -len(particle)]
    return word


def _words(text: str) -> list[str]:
    """Lower-cased words (codes and dates kept whole), Korean particles taken off."""
    return [_stem(w) for w in re.findall(r"[\w\-/]+", _normal(text))]


def content_words(text: str) -> list[str]:
    return list(dict.fromkeys(w for w in _words(text) if w not in _STOP and not w.isdigit()))


_YES = re.compile(r"^\W*(yes|예|네)\b", re.I)
_NO = re.compile(r"^\W*(no|아니요|아니오|아뇨)\b", re.I)
_NEGATION = re.compile(r"\b(no|not|never|none)\b|n't|않|아니|없", re.I)


def polarity(text: str) -> bool | None:
    """The yes or no a text starts with; None when it starts with neither."""
    if _YES.match(text):
        return True
    if _NO.match(text):
        return False
    return None


def states_answer(answer: str, reference: str) -> bool:
    """Whether `answer` states the key value of the gold `reference` (module docstring). A gold
    answer that starts with yes or no is met by the same yes or no (said, or without one, by
    negating or not), or, when the answer says neither, by the key value of the rest ("out of
    scope in 2024"); "Yes, it is part of the 2024 programme" holds "2024" but is wrong. Citation
    marks are no figures: "Three results need follow-up [1, 3]" does not state 1."""
    answer = MARKER.sub("", answer)
    reference = _NOTE.sub("", reference).strip() or reference
    wanted_polarity = polarity(reference)
    if wanted_polarity is not None:
        said = polarity(answer)
        meant = (not _NEGATION.search(answer)) if said is None else said
        rest = _NO.sub("", _YES.sub("", reference)).strip(" ,.")
        return meant is wanted_polarity or (
            said is None and bool(rest) and _states_value(answer, rest, words_too=True))
    return _states_value(answer, reference)


def _states_value(answer: str, reference: str, words_too: bool = False) -> bool:
    """The key value check; `words_too` asks for the content words as well as the figures."""
    wanted = figures(reference)
    if wanted:
        stated = figures(answer)
        if not all(any(abs(value - v) < 1e-9 and (unit is None or u == unit) for v, u in stated)
                   for value, unit in wanted):
            return False
        if not words_too:
            return True
    words = [w for w in content_words(reference) if not figures(w)]
    if not words:
        return bool(wanted)  # only here with words_too, the figures stated
    held = set(_words(answer))
    found = sum(any(h == w or h.startswith(w) for h in held) for w in words)
    return found == len(words) if len(words) <= 3 else found >= 2 * len(words) / 3
