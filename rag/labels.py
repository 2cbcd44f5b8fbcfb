"""How a question names a table's labels (rag/cells.py): its words, codes and numbers, and the
share of a row label's or column header's words it holds. Codes and numbers match exactly (a
hyphen aside: "SL05" is "SL-05"; "24" names "24m"); other words by their start or stem, so English
endings and Korean particles do not matter ("deceleration" names "decel", "calibrated" names
"calibration", "하중은" names "하중"; a contraction by its word: "fcst" forecast); a label's unit,
currency or scale need not be named ("fee_eur_k" is named by "fee")."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from rag.facts import label_unit, unit_word
from rag.units import CELSIUS_KEY
from rag.text import folded, hangul_script

_WORD = re.compile(r"\d+(?:[.,]\d+)+|[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*|[\uac00-\ud7a3]+")
_AFTER_NUMBER = re.compile(r"(?<![\w-])(\d+)-(?=[^\W\d]{2,})")
# "calibrated" and "calibration" meet, and so do "attendance" and "attendees", "settled" and "settlement"
_SUFFIX = re.compile(r"(?:ations?|ions?|[ae]nces?|ments?|ees?|ors?|ing|ed|es|s)$")  # "auditor": audited
_INFLECTION = frozenset({"ed", "d", "s", "es", "ing"})
_VERB_ENDING = re.compile(r"(?:s|ed|ing)$")
_DIGIT = re.compile(r"\d")
_CAPITALS = re.compile(r"\b[A-Z]{3,5}\b")
BRACKETS = re.compile(r"[(\[][^)\]]*[)\]]")
# A value's short name in brackets: "LC-HRMS (Orbitrap)"; a code there is a reference ("Avonmouth (HM-2301)")
SHORT_NAME = re.compile(r"\S\s*\(([^()\d]+)\)\s*$")
STOP = frozenset(
    "a an the of in on at for to by with from and or is are was were be been did does do has have had "
    "what which who whom whose when where how many much its it this that these those there per all any "
    "value values 값 무엇 얼마 몇 어느 어떤".split())


# What a "where" question asks for: a column of these names a place.
PLACES = frozenset("location place site office property properties city country address venue based base "
                   "plant depot branch region building room hall floor campus "
                   "위치 장소 지점 주소 소재지 근무지".split())


def is_place(label: str) -> bool:
    """Whether a column names a place ("property", "Office", "work_location")."""
    return any(w in PLACES for w in words(label))


_ORDINAL_PERIOD = re.compile(r"\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+(quarter|half)\b",
                             re.IGNORECASE)
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}


def _period(match: re.Match[str]) -> str:
    """"third quarter" as a table heads it: Q3 ("first half": H1)."""
    return f"{'Q' if match.group(2).lower() == 'quarter' else 'H'}{_ORDINALS[match.group(1).lower()]}"


@lru_cache(maxsize=65536)
def words(text: str) -> tuple[str, ...]:
    """Lower-cased words, codes ("sl-05", "ft-2024-07") and numbers ("19.4") of a text, accents
    folded; "_" separates, and so does a hyphen after a number ("36-month" is "36 month"); an
    ordinal period is its code ("the third quarter" is "q3")."""
    text = _ORDINAL_PERIOD.sub(_period, folded(text).replace("_", " "))
    return tuple(w.lower() for w in _WORD.findall(_AFTER_NUMBER.sub(r"\1 ", text)))


def is_code(word: str) -> bool:
    """A code or number: "sl-05", "2021", "hic15"."""
    return _DIGIT.search(word) is not None


def _stem(word: str) -> str:
    stem = _SUFFIX.sub("", word).rstrip("e")
    return stem if len(stem) >= 4 else word


# Words a register's column and a question use for one field ("what role does she hold": job_title).
_SAME_FIELD = [frozenset(group.split()) for group in (
    "role position title job 직무 직책 직위", "headcount staff employees 인원 직원수",
    "price cost charge fee 가격 요금 비용", "annual yearly year 연간",
    "max maximum upper 최대 상한", "min minimum lower 최소 하한")]
_FIELD_OF = {word: group for group in _SAME_FIELD for word in group}
# A column header's abbreviations and the word a question spells out ("serial_no": serial number).
_SPELLED = {"no": "number", "nr": "number", "num": "number", "qty": "quantity", "dept": "department",
            "ext": "extension", "tel": "telephone", "amt": "amount", "temp": "temperature",
            "cap": "capacity", "desc": "description", "mgr": "manager", "addr": "address", "dt": "date"}


def same(label_word: str, question_word: str) -> bool:
    """Whether a question's word names a label's word: codes and numbers exactly (a hyphen aside),
    other words by their start or stem, or a word of the same field ("role" names "title")."""
    if label_word == question_word or label_word.replace("-", "") == question_word.replace("-", ""):
        return True
    if question_word in _FIELD_OF.get(label_word, ()) or _SPELLED.get(label_word) == question_word:
        return True
    if question_word.isdigit() and re.fullmatch(rf"{question_word}[a-z]+", label_word):
        return True  # "24" names the column "24m"
    if is_code(label_word) or is_code(question_word):
        return False
    if question_word == label_word + "s" and len(label_word) >= 2:
        return True  # a short word's plural: "the UK DCs" names "UK DC total"
    if hangul_script(label_word):  # a particle may follow: "하중은" names "하중"
        return len(label_word) >= 2 and question_word.startswith(label_word)
    if len(question_word) >= 3 and label_word[len(question_word):] in _INFLECTION \
            and label_word.startswith(question_word):
        return True  # "own" names "owned"; a stem too short for `_stem`
    if label_word.endswith(("er", "ers")) and len(base := _VERB_ENDING.sub("", question_word)) >= 3 \
            and base != question_word and label_word.removesuffix("s") in (base + "er", base + "r"):
        return True  # the doer: "who owns it" names "owner", "who manages" "manager"
    return len(label_word) >= 3 and (question_word.startswith(label_word)
                                     or _stem(question_word) == _stem(label_word)
                                     or _contracted(label_word, question_word))


def _contracted(label_word: str, question_word: str) -> bool:
    """A header's contraction of the word: "fcst" forecast, "tgt" target, "mgr" manager: no vowel
    after its first letter, the word's letters in order from the same first to the same last."""
    if not (label_word.isalpha() and len(label_word) >= 3) or re.search(r"[aeiou]", label_word[1:]):
        return False
    for word in {question_word, question_word.removesuffix("s")}:
        if word[:1] == label_word[0] and word[-1:] == label_word[-1]:
            rest = iter(word[1:])
            if all(letter in rest for letter in label_word[1:]):
                return True
    return False


def meets(these: Iterable[str], those: Sequence[str]) -> bool:
    """Whether a word of `these` and a word of `those` name each other, either way round."""
    return any(same(a, b) or same(b, a) for a in these for b in those)


def initials(label_word: str, question: Sequence[str]) -> bool:
    """Whether the question spells out a label's initialism in consecutive words: "average daily
    rate" names "ADR", "net promoter score" names "NPS" (three letters at least: two are chance)."""
    n = len(label_word)
    if not 3 <= n <= 5 or not label_word.isalpha():
        return False
    firsts = "".join(w[0] for w in question)
    return any(firsts[i:i + n] == label_word and all(len(w) > 1 and not is_code(w) for w in question[i:i + n])
               for i in range(len(firsts) - n + 1))


_CUMULATIVE = re.compile(r"\b(?:to date|so far|year to date)\b", re.IGNORECASE)


# A JSON record's nested key ("cargo.weights.gross_kg"): each key ends in its own unit, if any.
KEY_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


@lru_cache(maxsize=65536)  # a register's row labels, met by every question
def content(label: str) -> tuple[str, ...]:
    """The words of a label that must be named: outside brackets, no stop words, no unit,
    currency or scale ("fee_eur_k" is named by "fee"); of a key path, each key's ("min" is the
    key of `time_above_liquidus_s.min`, not minutes).

    >>> content("limits.time_above_liquidus_s.min"), content("limits.peak_temp_c.max")
    (('limits', 'time', 'above', 'liquidus', 'min'), ('limits', 'peak', 'temp', 'max'))
    """
    if KEY_PATH.fullmatch(label):
        return tuple(w for key in label.split(".") for w in content(CELSIUS_KEY.sub("", key)))
    label = _CUMULATIVE.sub(" ", label)  # "Spent to date" is named by "spent"
    found = [w for w in words(BRACKETS.sub(" ", label)) or words(label) if w not in STOP]
    money = bool(label_unit(label))
    while len(found) > 1 and unit_word(found[-1], money):  # the unit ends the label
        found.pop()
    return tuple(found)


def named(label: str, question: Sequence[str]) -> tuple[float, float, set[str]]:
    """The share of the label's words the question holds, the share of its words that are no
    code ("WorldSID" names "WorldSID 50M" when no other row is WorldSID), and the words held."""
    needed = content(label)
    capitals = set(_CAPITALS.findall(label))  # an initialism is written in capitals: "ADR", not "room"
    hits = {w for w in needed if any(same(w, q) for q in question)
            or (w.upper() in capitals and initials(w, question))}
    plain = [w for w in needed if not is_code(w)]
    return ((len(hits) / len(needed) if needed else 0.0),
            (len(hits & set(plain)) / len(plain) if plain else 0.0), hits)
