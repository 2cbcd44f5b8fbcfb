"""The words the premise check (rag/premise.py) reads, in English and Korean: pairs of opposite
qualifiers (which forms make a question ask one side, which forms of the evidence state it),
question words, bounds, codes, figures, identifiers, months, names, acronyms and function words."""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag.units import CURRENCIES, named_units


@dataclass(frozen=True)
class Side:
    """One side of a qualifier pair. `asked`: the forms that make a question ask it, and that
    state it against the other side; `stated`: those forms and looser ones (comparatives, verbs)
    that count as the evidence stating it, so a paraphrase of the asked side holds."""

    asked: re.Pattern[str]
    stated: re.Pattern[str]


def _forms(english: str, korean: str = "") -> re.Pattern[str]:
    """English forms as whole words (`|`-separated regexes), Korean ones as substrings: a
    particle or ending follows a Korean stem."""
    parts = [rf"\b(?:{english})\b"] + ([f"(?:{korean})"] if korean else [])
    return re.compile("|".join(parts), re.IGNORECASE)


def _side(asked: str, korean: str = "", looser: str = "", korean_looser: str = "") -> Side:
    return Side(_forms(asked, korean), _forms("|".join(filter(None, [asked, looser])),
                                               "|".join(filter(None, [korean, korean_looser]))))


# Quantity pairs, the greater side first: a table's column can rank their claims ("Hamburg had the
# highest utilisation" where Oslo's is higher). Superlatives of one measure share a pair (highest,
# largest, maximum), so a question's "largest" is stated by the evidence's "highest". Comparatives
# and "most" are only looser forms: "which is higher, A or B?" asks for a comparison, not a premise.
QUANTITIES: tuple[tuple[Side, Side], ...] = (
    (_side("highest|largest|biggest|greatest|maximum", "가장 높은|가장 큰|가장 많은|최고|최대",
           "higher|larger|bigger|greater|most|more|top|upper|max|peak", "높|큰|많|최고치|최댓값"),
     _side("lowest|smallest|least|fewest|minimum", "가장 낮은|가장 작은|가장 적은|최저|최소",
           "lower|smaller|less|fewer|bottom|min", "낮|작|적|최저치|최솟값")),
    (_side("longest|tallest", "가장 긴|가장 오래 걸", "longer|long|taller|tall", "긴|길"),
     _side("shortest", "가장 짧은", "shorter|short", "짧")),
    (_side("fastest|quickest", "가장 빠른", "faster|quicker|fast", "빠른|빨리"),
     _side("slowest", "가장 느린", "slower|slow", "느린|느리")),
    (_side("heaviest", "가장 무거운", "heavier|heavy", "무거"),
     _side("lightest", "가장 가벼운", "lighter|light", "가벼")),
    (_side("hottest|warmest", "가장 더운|가장 뜨거운", "hotter|warmer|hot|warm", "더운|뜨거"),
     _side("coldest|coolest", "가장 추운|가장 차가운", "colder|cooler|cold|cool", "추운|차가")),
)
# All pairs of opposite qualifiers.
PAIRS: tuple[tuple[Side, Side], ...] = (
    (_side("oldest|eldest", "가장 오래된|최고령", "older|elder|ancient|earliest|first", "오래|최초"),
     _side("youngest|newest", "가장 젊은|최연소|가장 새로운", "younger|newer|latest|recent",
           "젊은|새로운|최신")),
    (_side("earliest|first|oldest", "가장 이른|최초|처음|가장 오래된",
           "earlier|beginning|initial|original|1st", "첫|초기"),
     _side("latest|last|most recent", "가장 최근|최신|마지막|최종", "later|recent|newest|current|final",
           "최근|나중")),
    *QUANTITIES,
    (_side("best", "최선|가장 좋은", "better|good", "좋은"),
     _side("worst", "최악|가장 나쁜", "worse|bad", "나쁜")),
    (_side("strongest", "가장 강한", "stronger|strong", "강한|강하"),
     _side("weakest", "가장 약한", "weaker|weak", "약한|약하")),
    (_side("cheapest", "가장 싼|가장 저렴한", "cheaper|cheap|inexpensive|lowest price", "싼|저렴"),
     _side("most expensive|dearest", "가장 비싼", "expensive|costlier|costly|highest price", "비싼|비싸")),
    (_side("easiest", "가장 쉬운", "easier|easy|simple", "쉬운|쉽"),
     _side("hardest|most difficult", "가장 어려운", "harder|difficult|hard", "어려운|어렵")),
    (_side("succeed(?:ed|s)?|successful(?:ly)?|success|pass(?:ed)?", "성공|합격", "pass(?:es)?", ""),
     _side("fail(?:ed|s|ure)?|unsuccessful", "실패|불합격", "", "")),
    (_side("won|wins?", "승리|우승", "winning|winner", "이겼|이긴"),
     _side("lost|lose[sd]?", "패배", "losing|loser|defeat\\w*", "졌|진")),
    (_side("private", "민간|사립", "privately", "사적"), _side("public", "공공|공립", "publicly", "공적")),
    (_side("imports?|imported", "수입", "importing|importer", ""),
     _side("exports?|exported", "수출", "exporting|exporter", "")),
    (_side("accepted|approved", "승인|수락|채택", "accept\\w*|approv\\w*|granted", ""),
     _side("rejected|refused|denied", "거절|거부|기각", "reject\\w*|refus\\w*|den(?:y|ies)", "반려")),
    (_side("legal|lawful", "합법", "legally|permitted|allowed", "허용"),
     _side("illegal|unlawful", "불법", "illegally|prohibited|forbidden|banned", "금지")),
    (_side("internal", "내부", "inside|in-house", "사내"),
     _side("external", "외부", "outside|third-party", "사외")),
    (_side("domestic", "국내", "national|local", ""),
     _side("foreign|overseas|international", "해외|국외", "abroad", "")),
    (_side("positive", "긍정", "positively|favourabl\\w*|favorabl\\w*", ""),
     _side("negative", "부정", "negatively|unfavourabl\\w*|unfavorabl\\w*", "")),
    (_side("northern|north|northernmost", "북쪽|북부", "northward|north\\w*", "북"),
     _side("southern|south|southernmost", "남쪽|남부", "southward|south\\w*", "남")),
    (_side("eastern|east|easternmost", "동쪽|동부", "eastward|east\\w*", "동"),
     _side("western|west|westernmost", "서쪽|서부", "westward|west\\w*", "서")),
    (_side("front|frontal", "정면|전면", "head-on", "앞쪽"), _side("rear|rear-end", "후면|후방", "", "뒤쪽")),
    (_side("inner", "안쪽", "inside|interior", ""), _side("outer", "바깥쪽", "outside|exterior", "")),
    (_side("before|prior to", "이전", "earlier|previous|previously|prior|preceding|until",
           "전에|전의|전까지"),
     _side("after", "이후", "later|following|subsequent|subsequently|since|thereafter", "후에|후의|다음")),
    (_side("increase[sd]?|increasing|rose|risen", "증가|상승|인상",
           "rise[sn]?|rising|raise[sd]?|grow|grew|grown|growth|gain\\w*|climb\\w*|up|higher|more|jump\\w*",
           "늘|오른|올라"),
     _side("decrease[sd]?|decreasing|decline[sd]?|declining", "감소|하락|인하",
           "fall(?:s|en|ing)?|fell|drop\\w*|reduc\\w*|lower\\w*|cut|down|shr[aiu]nk\\w*|less|fewer",
           "줄|내린|내려")),
    # "v2 cut the mileage rate" where v2 says the mileage rates are unchanged
    # ("why was the launch pushed back" where the memo says the launch date is unchanged)
    (_side("cut|reduced|lowered|raised|increased|decreased|changed|amended|revised|halved|doubled|"
           "postponed|delayed|deferred|pushed back|put back|brought forward|moved|rescheduled",
           "인하|삭감|인상|변경된|바뀐|연기|앞당",
           "reduc\\w*|lower\\w*|rais\\w*|increas\\w*|decreas\\w*|chang\\w*|amend\\w*|revis\\w*|postpon\\w*|"
           "delay\\w*|defer\\w*|mov\\w*|reschedul\\w*", "줄|늘|바뀌|미뤄"),
     _side("unchanged|not changed|no change|remain(?:s|ed)? the same|stay(?:s|ed)? the same",
           "변경 없|변동 없|변경되지 않|동일하게 유지")),
    (_side("brought forward|moved up|advanced", "앞당", "earlier|sooner", "당겨"),
     _side("postponed|delayed|deferred|pushed back", "연기|미뤄|미루", "later|moved to", "늦춰|순연")),
    (_side("above", "초과", "over|exceed\\w*|more than|greater than|higher than|beyond|at least", "이상|넘"),
     _side("below", "미만", "under|less than|lower than|fewer than|within|at most|up to", "이하|이내|못 미")),
)

# Words after a qualifier that make it a date, not a premise: "last year", "지난 분기".
TIME_AFTER = re.compile(r"\s*(?:year|month|week|day|quarter|time|night|decade|century|years|months|weeks"
                        r"|days|quarters|times|해|년|달|월|주|분기)\b", re.IGNORECASE)

# A clause after "before" or "after" makes it a conjunction of time, no premise: "how long before
# waiting charges start", "after the truck arrives".
CLAUSE_AFTER = re.compile(r"\s+(?:[\w'’-]+\s+){0,3}?(?:starts?|begins?|appl(?:y|ies)|kicks?|ends?|"
                          r"arrives?|leaves?|is|are|was|were|has|have|had|gets?|goes?|comes?|runs?\s+out)\b",
                          re.IGNORECASE)

# A question asking for a time limit says "before" or "after" of it, presuming nothing: "the cut-off
# for purchase orders before the year-end" where the policy says what happens after it.
# A verb of a term's end or start names that end's column: "when does the Voltex contract run out"
# is its end_date (or expiry), not its start_date.
ENDING = re.compile(r"\b(?:run(?:s|ning)? out|expir(?:e|es|ed|y|ing)|lapses?|ends?|ending|finish(?:es)?|"
                    r"terminat(?:e|es|ion)|comes? to an end|up for renewal)\b|만료|종료|끝나", re.IGNORECASE)
STARTING = re.compile(r"\b(?:start(?:s|ed)?|beg[ai]n(?:s)?|commenc(?:e|es|ed)|kick(?:s|ed)? off)\b|시작|개시",
                      re.IGNORECASE)
DEADLINE = re.compile(r"\b(?:cut-?offs?|deadlines?|(?:last|latest) (?:day|date)|by when|closing date)\b"
                      r"|마감|기한", re.IGNORECASE)

# Any form that asks for a side: left out when a question and a sentence are compared for subject.
ASKED = re.compile("|".join(f"(?:{side.asked.pattern})" for pair in PAIRS for side in pair), re.IGNORECASE)

# A question that asks whether something is so: English by its leading auxiliary, Korean by having
# no question word.
YES_NO = re.compile(r"^\s*(?:is|are|was|were|do|does|did|has|have|had|can|could|will|would|should"
                    r"|may|might|must|shall)\b", re.IGNORECASE)
WH_KO = re.compile(r"무엇|뭐|뭔|어느|어떤|어떻게|언제|어디|누구|누가|몇|얼마|왜|무슨")

# Entities. A code has a letter and a digit and at least three characters (FT-2024-07, HIC15);
# a figure may carry a scale word or a Korean unit of count (30m, 3만).
CODE = re.compile(r"(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z][A-Za-z0-9]*(?:[-_/][A-Za-z0-9]+)*"
                  r"|(?<![\w-])\d+(?:[-_/][A-Za-z0-9]+)*[-_/][A-Za-z]+\d[A-Za-z0-9]*")
FIGURE = re.compile(r"(?<![\w.,])(\d+(?:[.,]\d+)*)(?:\s*(thousand|million|billion|bn|mn|[kmb]|천|만|억|조)"
                    r"(?![A-Za-z]))?(st|nd|rd|th)?", re.IGNORECASE)
SCALE = {"thousand": 1e3, "k": 1e3, "천": 1e3, "million": 1e6, "mn": 1e6, "m": 1e6, "만": 1e4,
         "billion": 1e9, "bn": 1e9, "b": 1e9, "억": 1e8, "조": 1e12}
# A figure the asker supplies as a bound is not a premise: "above 500", "30일 이내".
BOUND_BEFORE = re.compile(r"\b(?:(?:more|less|fewer|greater|higher|lower|other|rather)\s+than|over|under"
                          r"|above|below|at\s+(?:least|most)|up\s+to|within|exceed\w*|beyond|between"
                          r"|top|first|last|next|past|every|each|per)\b", re.IGNORECASE)
BOUND_AFTER = re.compile(r"\s*\S{0,3}\s*(?:이상|이하|초과|미만|이내|넘|or\s+(?:more|less|fewer))")
# A capitalised word, possessive and all: a name, unless it starts a sentence.
NAME = re.compile(r"(?<![A-Za-z])[A-Z][A-Za-z]*(?:['’][A-Za-z]+)?")
# A figure after one of these names a thing ("version 3.0", "layer 2", "제3조"): held to even when
# small, and only as that thing's number.
IDENTIFIER = re.compile(r"\b(version|ver|v|rev|revision|edition|release|phase|layer|tier|section|clause"
                        r"|article|chapter|appendix|annex|table|step|stage|level|grade|option|lot|batch"
                        r"|버전|개정|단계|제)\.?\s*(\d+(?:\.\d+)*)(?![\d.])", re.IGNORECASE)
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
CALENDAR = frozenset((*MONTHS, *WEEKDAYS))  # a date's words: no name, no site
MONTH = re.compile(r"\b(?:" + "|".join(m.capitalize() for m in MONTHS) + r")\b|(?<!\d)(1[0-2]|0?[1-9])월")
# Capitalised words that are not names; with STOP, words that say nothing about a subject.
NOT_NAMES = {
    *CALENDAR,
    "english", "korean", "the", "what", "which", "who", "whom", "whose", "when", "where", "why", "how",
    "does", "did", "was", "were", "are", "and", "for", "from", "with", "that", "this", "according",
    "i'm", "i’m", "i've", "i’ve", "i'd", "i’d", "i'll", "i’ll",  # the asker, not a name
}
STOP = NOT_NAMES | {
    "is", "a", "an", "of", "in", "on", "at", "to", "by", "as", "or", "be", "it", "its", "do", "has", "so",
    "far", "ever", "yet", "one", "ones", "have", "had", "there", "their", "they", "into", "than", "then",
    "any", "all", "about", "between",
    "much", "many", "give", "given", "say", "said", "documents", "document", "report", "reported",
    "reach", "reached", "value", "values", "state", "stated", "listed", "show", "shown", "tell",
    "무엇", "무엇인가요", "어떤", "어느", "얼마", "얼마인가요", "언제", "누구", "몇", "가장",
}
# Qualifiers besides the "-est" words that read as "the ...": "the documents give the first".
ENDS = {"first", "last", "maximum", "minimum", "best", "worst"}
# A Korean noun's particle, dropped where the noun is quoted in a message.
PARTICLE = re.compile(r"(?<=[\uac00-\ud7a3])(?:에서는|에서|에게|에는|으로|로|의|은|는|이|가|을|를"
                      r"|에|와|과|도)$")
# Names of a version, any of which may number it.
VERSION = {"version", "ver", "v", "rev", "revision", "버전", "개정"}


def acronym(word: str) -> bool:
    """A short all-capital word that is no currency or unit (USB, VPN, CEO; not EUR, HR: hours)."""
    return 2 <= len(word) <= 4 and word.isupper() and word.isalpha() and not named_units(f"1 {word}") \
        and word not in CURRENCIES


def holds_acronym(word: str, text: str) -> bool:
    """Written so, or spelled out: the initials of consecutive words ("multi-factor authentication":
    MFA; "chief executive officer": CEO), a function word between them allowed ("Ministry of Defence")."""
    if re.search(rf"(?<![A-Za-z]){word}(?![A-Za-z])", text, re.IGNORECASE):
        return True
    every = re.findall(r"[A-Za-z]+", text)
    n = len(word)
    return any("".join(w[0] for w in words[i:i + n]).lower() == word.lower()
               for words in (every, [w for w in every if w.lower() not in _JOINING])
               for i in range(len(words) - n + 1))


_JOINING = frozenset({"of", "and", "for", "the"})


# Where the asked clause starts after a clause setting the scene: "I've just started on shift work
# at one of the works - how long have I got ...?"
_ASKING = re.compile(r"(?:[.!?;:]|\s[-–—])\s+(?=(?:how|what|when|where|which|who|why|is|are|do|does|did|can|"
                     r"could|should|will|would|have|has|may|must)\b)", re.IGNORECASE)


_ASKER = re.compile(r"\s*(?:I|I'm|I've|I'll|I’m|I’ve|we|we're|we've|we’re|my|our)\b", re.IGNORECASE)


def asked_clause(question: str) -> str:
    """The clause that asks, without the asker's circumstances set before it."""
    starts = [m.end() for m in _ASKING.finditer(question)]
    if not starts or not _ASKER.match(question):
        return question  # "For rental cars, what is the rate?": the condition is the question's
    return question[starts[-1]:]

