"""False premises: what a question takes for granted, checked against the evidence the answer
would be built from, before the model writes anything.

Two kinds of premise are read from the question. A qualifier with an opposite (youngest, latest,
after, increase; 가장 최근, 최저, 이후, 감소) is contradicted when no evidence text states it and
the evidence sentence about the question's subject states its opposite ("the oldest rock" asked
as "the youngest"). An entity taken for granted (a code with digits, a year, a figure, a proper
name) is absent when no evidence text holds it: a year or code swapped for one the evidence holds
instead is the typical false premise. Everything else holds: a false refusal of an answerable,
paraphrased question costs more than a missed premise, so each rule leans toward holding (the
opposite must be stated where the asked side is nowhere; thresholds, ordinals and the figures of
a yes/no question are not premises). Across scripts (an English question on Korean evidence) only
codes, figures and, from a Korean question, Latin names are compared; a qualifier is held only
against sentences in the question's script.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.premise_words import (
    ASKED, BOUND_AFTER, BOUND_BEFORE, CLAUSE_AFTER, CODE, DEADLINE, ENDS, FIGURE, IDENTIFIER, MONTH, MONTHS,
    NAME, NOT_NAMES, PAIRS, PARTICLE, QUANTITIES, SCALE, STOP, TIME_AFTER, VERSION, WH_KO, YES_NO, Side,
    acronym, asked_clause, holds_acronym,
)
from rag.codes import GIVEN
from rag.near_miss import other_kind, word_stem
from rag.settings import Settings
from rag.shown_tables import NUMBERED, shown_tables, swapped
from rag.text import HANGUL, hangul_script, split_sentences, unlinked


@dataclass(frozen=True)
class PremiseVerdict:
    holds: bool
    status: str  # "stated" | "contradicted" | "absent"
    message: str = ""  # the correction, or what the documents do not mention, in the question's language
    evidence: str = ""  # the evidence sentence a contradiction rests on
    entity: str = ""  # what the documents do not mention

    @property
    def spelled_alike(self) -> bool:
        """Whether the absent thing reads the same in every script: a code, figure or year."""
        return any(ch.isdigit() for ch in self.entity)


STATED = PremiseVerdict(True, "stated")


def _language(question: str) -> str:
    return "ko" if hangul_script(question) else "en"


def _content(text: str, skip: re.Pattern[str] | None = None) -> set[str]:
    text = skip.sub(" ", text) if skip else text
    return {word_stem(w) for w in re.findall(r"\w+", text) if w.lower() not in STOP and len(w) >= 2}


def _figures(text: str) -> list[tuple[str, set[float], int, int]]:
    """(as written, the values it may mean, start, end) of each figure; ordinals left out."""
    out = []
    for match in FIGURE.finditer(text):
        digits, scale, ordinal = match.groups()
        if ordinal:
            continue
        value = _number(digits)
        values = {value} | ({value * SCALE[scale.lower()]} if scale else set())
        out.append((match.group().strip(), values, match.start(), match.end()))
    return out


def _number(digits: str) -> float:
    # "1,200" groups thousands; "3,5" is a decimal comma; "1.200.000" groups them too.
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", digits):
        return float(digits.replace(",", ""))
    if re.fullmatch(r"\d+[.,]\d+", digits):
        return float(digits.replace(",", "."))
    return float(re.sub(r"\D", "", digits))


def _coded(question: str, joined: str) -> str:
    """The question without the codes in brackets that follow its names ("at Kellbrook (KBW)",
    rag/codes.py), and without the name too where the evidence holds its code: either one held is
    the thing named."""
    def held(match: re.Match[str]) -> str:
        return " " if re.search(rf"\b{match.group(2)}\b", joined) else match.group(1)
    return GIVEN.sub(held, question)


def _squeezed(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.lower())


@dataclass
class PremiseCheck:
    """Checks a question's premise against its evidence (see the module docstring); built once
    per pipeline from `[premise]`."""

    enabled: bool = True
    qualifiers: bool = True
    entities: bool = True
    min_overlap: int = 2

    @classmethod
    def from_settings(cls, settings: Settings) -> PremiseCheck:
        cfg = settings.premise
        return cls(cfg.enabled, cfg.qualifiers, cfg.entities, cfg.min_overlap)

    def check(self, question: str, evidence: Sequence[str]) -> PremiseVerdict:
        """The verdict on `question` given `evidence`: the texts the context shows (its units,
        with their documents' labels and header fields, where codes and names often stand)."""
        texts = [text for text in evidence if text.strip()]
        # A pasted link's address holds no premise: its numbers are a host and a port, not figures.
        question = unlinked(question)
        if not self.enabled or not texts or not question.strip():
            return STATED
        language = _language(question)
        # An English question's names are not held against evidence with any Korean in it (토이
        # 스토리 for Toy Story); a Korean question's Latin names are held against any evidence.
        lines = [line for text in texts for line in text.splitlines()]
        names = language == "ko" or not any(hangul_script(line) for line in lines)
        verdict = STATED
        if self.entities:
            verdict = self._entities(question, texts, language, names)
        # A contradiction outranks an absence: "why was the launch pushed back to February" where
        # the memo says the launch date is unchanged is answered so, and not asked again elsewhere.
        if self.qualifiers and (verdict.holds or verdict.status == "absent") \
                and not (contradicted := self._qualifiers(question, texts, language)).holds:
            verdict = contradicted
        if verdict.holds and self.entities and not _yes_no(question) and (row := swapped(question, texts)):
            verdict = _swapped(*row, language)  # "the 400 bar bench at Linz": the row says Brno
        if verdict.holds and self.entities and names and language == "en" \
                and (kind := other_kind(asked_clause(question), texts)):
            verdict = self._absent(kind, language)  # "a rental car" where the policy pays for your own car
        return verdict

    def contradicts(self, sentence: str, text: str) -> bool:
        """Whether `text` (a chunk an answer sentence cites) states the opposite of a qualifier the
        sentence gives ("the youngest rock" where the chunk says the oldest; "the rear impact
        test" cited to the frontal test): the same reading as a question's qualifiers."""
        if not (self.enabled and self.qualifiers) or not ASKED.search(sentence):
            return False
        return not self._qualifiers(sentence, [text], _language(sentence)).holds

    # ---------------------------------------------------------------------------- entities

    def _entities(self, question: str, texts: list[str], language: str, names: bool) -> PremiseVerdict:
        joined = "\n".join(texts)
        squeezed = _squeezed(joined)
        codes = [m for m in CODE.finditer(question) if len(_squeezed(m.group())) >= 3]
        for code in codes:
            if _squeezed(code.group()) not in squeezed:
                return self._absent(code.group(), language)
        rest = CODE.sub(" ", question)
        for name, number in IDENTIFIER.findall(rest):
            if not _holds_identifier(name, number, joined):
                return self._absent(f"{name} {number}", language)
        for month in MONTH.finditer(rest):
            if month.start() > 0 and not _holds_month(month, joined):
                return self._absent(month.group(), language)
        rest = IDENTIFIER.sub(" ", rest)
        for figure in self._premised_figures(rest):
            if not self._holds_figure(figure, joined):
                unit = "%" if rest[figure[3] : figure[3] + 1] == "%" else ""
                return self._absent(figure[0] + unit, language)
        if not names:
            return STATED
        rest = _coded(rest, joined)
        words = {w.lower() for w in re.findall(r"[A-Za-z]+", joined)}
        # A name in a sentence that only sets the scene ("I'm visiting a customer in Graz next
        # week. What is paid per km?") is the asker's circumstance, not what the answer rests on.
        asked = [m.span() for m in re.finditer(r"[^.!?]*\?", rest)]
        scene = len(re.findall(r"[^.!?]+[.!?]?", rest.strip())) > 1 and asked
        for name in self._names(rest, language):
            if scene and not any(a <= name.start() < b for a, b in asked):
                continue
            if acronym(name.group()):
                if not holds_acronym(name.group(), joined):
                    return self._absent(name.group(), language)
            elif not any(w.startswith(_stem_name(name.group())) for w in words):
                whole = re.match(r"[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*", rest[name.start() :])
                return self._absent(whole.group() if whole else name.group(), language)
        return STATED

    def _premised_figures(self, question: str) -> list[tuple[str, set[float], int, int]]:
        """The question's figures that it takes for granted: a year always; another figure above
        twelve (smaller ones are counts spelled many ways: "three", "세") unless it is a bound
        ("above 500") or the question asks whether it is so ("Was it 412?")."""
        yes_no = _yes_no(question)
        out = []
        for figure in _figures(question):
            written, values, start, end = figure
            value = min(values)
            year = 1900 <= value <= 2100 and float(value).is_integer()
            before = question[max(0, start - 20) : start].split()
            bound = bool(BOUND_BEFORE.search(" ".join(before[-3:])) or BOUND_AFTER.match(question[end:]))
            if year or (value > 12 and not bound and not yes_no):
                out.append(figure)
        return out

    @staticmethod
    def _holds_figure(figure: tuple[str, set[float], int, int], joined: str) -> bool:
        """Stated as written (digits alone: "30" in "30m", "2023" in "2023-06"), or as a value
        the evidence writes otherwise ("30,000" as "3만")."""
        written, values, _, _ = figure
        digits = re.match(r"[\d.,]+", written)
        if digits and re.search(rf"(?<![\d.,]){re.escape(digits.group())}(?![\d]|[.,]\d)", joined):
            return True
        stated = set().union(*(v for _, v, _, _ in _figures(joined)))
        return any(abs(a - b) <= 1e-9 * max(abs(a), 1) for a in values for b in stated)

    @staticmethod
    def _names(question: str, language: str) -> list[re.Match[str]]:
        """Proper names: in English capitalised words not at a sentence's start; in Korean any
        capitalised Latin word; acronyms (USB, CEO: held written or spelled out), but no currency
        or unit (EUR, kN), which are written as symbols or spelled out too often to be held to."""
        out = []
        for match in NAME.finditer(question):
            word = match.group()
            head = question[: match.start()].rstrip()
            if language == "en" and (not head or head[-1] in ".?!:;\"“("):
                continue
            if ((len(word) < 3 or (word.isupper() and len(word) <= 3)) and not acronym(word)) \
                    or word.lower() in NOT_NAMES:
                continue  # a currency or unit (EUR, HR: hours) is written as a symbol or spelled out
            if language == "en" and word.lower() in STOP:
                continue
            if re.match(r"\s+(?:[A-Z]|\d+)\b", question[match.end():]):
                continue  # a designation ("Model K", "Type 2"): the series the corpus is about
            out.append(match)
        return out

    # ---------------------------------------------------------------------------- qualifiers

    def _qualifiers(self, question: str, texts: list[str], language: str) -> PremiseVerdict:
        if _yes_no(question):
            return STATED  # "Did it increase?" asks, it does not presume
        subject = _content(question, ASKED)
        need = max(1, min(self.min_overlap, len(subject)))
        about = [(shared, sentence) for shared, sentence in _sentences(texts, subject, language == "ko")
                 if shared >= need]
        for first, second in PAIRS:
            for asked, opposite in ((first, second), (second, first)):
                match = next((m for m in asked.asked.finditer(question)
                              if not TIME_AFTER.match(question[m.end():]) and not (
                                  m.group().lower() in ("before", "after")
                                  and (CLAUSE_AFTER.match(question[m.end():]) or DEADLINE.search(question)))),
                             None)
                if match is None:
                    continue
                verdict = self._contradiction(question, match, asked, opposite, about, language)
                if verdict.holds and (first, second) in QUANTITIES:
                    verdict = _outranked(question, match, asked is first, texts, language)
                if not verdict.holds:
                    return verdict
        return STATED

    def _contradiction(self, question: str, match: re.Match[str], asked: Side, opposite: Side,
                       about: list[tuple[int, str]], language: str) -> PremiseVerdict:
        """Contradicted when, of the sentences about the question's subject (sharing at least
        `min_overlap` of its content words, fewer if it has fewer) that state either side, those
        most about it state the opposite and none the asked side; a tie holds."""
        stating = [(shared, sentence) for shared, sentence in about
                   if asked.stated.search(sentence) or opposite.asked.search(sentence)]
        if not stating:
            return STATED
        most = max(shared for shared, _ in stating)
        leaders = [sentence for shared, sentence in stating if shared == most]
        if any(asked.stated.search(sentence) for sentence in leaders):
            return STATED
        best = leaders[0]
        if match.group().lower() in ("before", "after"):
            # "the re-inspection after the Q3 audit" relates the re-inspection to the audit: a
            # sentence of something else done before the audit does not contradict it
            thing = re.findall(r"[\w-]+", question[: match.start()])[-1:]
            if thing and (held := _content(thing[0])) and not held & _content(best):
                return STATED
        said = opposite.asked.search(best)
        asked, given = match.group(), said.group()
        noun = _noun(question[match.end():])
        if language == "ko":
            asked, given = (f"{asked} {noun}", f"{given} {noun}") if noun else (asked, given)
            message = f"문서에는 {asked}{_subject_particle(asked)} 아니라 {given}에 대한 내용이 있습니다."
        elif given.lower().endswith("est") or " " in given or given.lower() in ENDS:
            named = f"{given.lower()} {noun}" if noun else given.lower()
            message = f"The documents give the {named}, not the {asked.lower()}."
        else:
            message = f"The documents say {given.lower()}, not {asked.lower()}."
        return PremiseVerdict(False, "contradicted", message, best)

    @staticmethod
    def _absent(entity: str, language: str) -> PremiseVerdict:
        message = (f"문서에는 {entity}에 대한 내용이 없습니다." if language == "ko"
                   else f"The documents say nothing about {entity}.")
        return PremiseVerdict(False, "absent", message, entity=entity)


def _swapped(name: str, column: str, value: str, given: str, language: str) -> PremiseVerdict:
    if language == "ko":
        return PremiseVerdict(False, "contradicted", f"문서에서 {name}의 {column} 값은 {given}이(가) 아니라 "
                                                     f"{value}입니다.")
    return PremiseVerdict(False, "contradicted", f"The documents give {value} as the {column} of {name}, "
                                                 f"not {given}.")


def _sentences(texts: Sequence[str], subject: set[str], korean: bool) -> list[tuple[int, str]]:
    """(content words shared with the question, sentence) of every evidence sentence in the
    question's script: a translation's wording is not compared. A context's lines are its units
    (a table row, a label), never one sentence; a block's first line (its chunk's label: document,
    place, header fields) is what each of its sentences is about too."""
    out = []
    for text in texts:
        for block in re.split(r"\n\s*\n", text):
            lines = [NUMBERED.sub("", line) for line in block.splitlines() if line.strip()]
            label = _content(lines[0], ASKED) if lines else set()
            for sentence in (s for line in lines for s in split_sentences(line)):
                if hangul_script(sentence) == korean:
                    out.append((len(subject & (_content(sentence, ASKED) | label)), sentence))
    return out


def _outranked(question: str, match: re.Match[str], greater: bool, texts: Sequence[str],
               language: str) -> PremiseVerdict:
    """A superlative the question gives a row ("Why did Hamburg have the highest utilisation?")
    that another row shown outranks in that column: contradicted. The row is named by its label
    (its first cell) before the qualifier."""
    after, anywhere = _content(_noun(question[match.end():])), _content(question, ASKED)
    asked_before = question[: match.start()]
    for rows in shown_tables(texts):
        label = next(iter(rows[0]))
        columns = [c for c in rows[0] if c != label]  # named after the qualifier, or (Korean) anywhere
        column = next((c for words in (after, anywhere) for c in columns if _content(c) & words), "")
        named = [row for row in rows if len(row[label]) >= 2 + (not HANGUL.search(row[label])) and re.search(
            rf"(?<!\w){re.escape(row[label])}(?!\w)", asked_before, re.IGNORECASE)]
        scored = [(min(found[0][1]), row) for row in rows
                  if column and (found := _figures(row.get(column, "")))]
        mine = [value for value, row in scored if named and row is named[0]]
        if len(named) != 1 or len(scored) < 2 or not mine:
            continue
        best_value, best = (max if greater else min)(scored, key=lambda pair: pair[0])
        if best_value == mine[0]:
            continue
        name, top, shown = named[0][label], best[label], best[column]
        if language == "ko":
            message = (f"문서에서 {column}{_subject_particle(column)} {match.group()} 것은 {name}"
                       f"{_subject_particle(name)} 아니라 {top}({shown})입니다.")
        else:
            measured = column[:1].lower() + column[1:] if column[1:2].islower() else column
            asked = match.group().lower()
            message = f"The documents give {top} the {asked} {measured} ({shown}), not {name}."
        return PremiseVerdict(False, "contradicted", message, "; ".join(f"{k}: {v}" for k, v in best.items()))
    return STATED


def _yes_no(question: str) -> bool:
    """A question that asks whether something is so: English by its leading auxiliary, Korean by
    having no question word."""
    if hangul_script(question):
        return not WH_KO.search(question)
    return bool(YES_NO.match(question))


def _noun(after: str) -> str:
    """What a qualifier qualifies, for the correction ("the youngest known rock", "가장 최근 계약"):
    the words up to the next function word, at most three, or none when the qualifier ends in the
    middle of a word (인하되었나요)."""
    words = []
    for word in re.findall(r"[\w-]+", after)[:3] if re.match(r"\s", after) else []:
        if word.lower() in STOP or word.isdigit() or ASKED.fullmatch(word):
            break
        if HANGUL.search(word):  # a Korean noun phrase ends at its particle
            words.append(PARTICLE.sub("", word))
            break
        words.append(word)
    return " ".join(words)


def _holds_identifier(name: str, number: str, joined: str) -> bool:
    """The evidence numbers this thing so ("version 3" is "v3.0", `"layer": 2`)."""
    names = VERSION if name.lower() in VERSION else {name.lower()}
    number = re.sub(r"(?:\.0+)+$", "", number)
    keys = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return bool(re.search(rf"(?:{keys})\W{{0,3}}0*{re.escape(number)}(?:\.0+)?(?![\d]|\.\d)", joined,
                          re.IGNORECASE))


def _holds_month(month: re.Match[str], joined: str) -> bool:
    """The evidence names the month, in words or as a date's digits ("2024-09", "9월"), or the
    quarter or half-year it falls in ("July" is in "Q3 2024", "3분기", "H2")."""
    number = int(month.group(1)) if month.group(1) else MONTHS.index(month.group().lower()) + 1
    name = MONTHS[number - 1]
    quarter, half = (number - 1) // 3 + 1, (number - 1) // 6 + 1
    nth = ("first", "second", "third", "fourth")
    return bool(re.search(rf"\b{name[:3]}|(?<!\d)0?{number}월|\d{{4}}[-/.]0?{number}(?!\d)"
                          rf"|\b\d{{1,2}}[./]0?{number}[./]\d{{2,4}}"
                          rf"|\bQ{quarter}\b|\b{quarter}Q\b|{nth[quarter - 1]} quarter"
                          rf"|(?<!\d){quarter}\s?분기"
                          rf"|\bH{half}\b|{nth[half - 1]} half|{'상' if half == 1 else '하'}반기",
                          joined, re.IGNORECASE))


def _stem_name(word: str) -> str:
    word = re.sub(r"(?<=[A-Z]{2})s$", "", word)  # "SMEs": SME's plural ("sme_discount")
    word = re.sub(r"['’]s?$", "", word.lower())
    return word[: max(4, len(word) - 2)]


def _subject_particle(word: str) -> str:
    """이 after a final consonant, 가 after a vowel (a Latin or digit ending reads as 가)."""
    last = word[-1:] if word else ""
    if HANGUL.match(last):
        return "이" if (ord(last) - 0xAC00) % 28 else "가"
    return "가"
