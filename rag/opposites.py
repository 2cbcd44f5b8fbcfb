"""Pairs of opposite qualifiers, in English and Korean, as the premise check (rag/premise.py)
reads them: which forms make a question ask one side, and which forms of the evidence state it."""

from __future__ import annotations

import re
from dataclasses import dataclass


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


# Pairs of opposite qualifiers. Quantity superlatives share one pair (highest, largest, maximum),
# so a question's "largest" is stated by the evidence's "highest". Comparatives and "most" are
# only looser forms: "which is higher, A or B?" asks for a comparison, not a premise.
PAIRS: tuple[tuple[Side, Side], ...] = (
    (_side("oldest|eldest", "가장 오래된|최고령", "older|elder|ancient|earliest|first", "오래|최초"),
     _side("youngest|newest", "가장 젊은|최연소|가장 새로운", "younger|newer|latest|recent",
           "젊은|새로운|최신")),
    (_side("earliest|first|oldest", "가장 이른|최초|처음|가장 오래된",
           "earlier|beginning|initial|original|1st", "첫|초기"),
     _side("latest|last|most recent", "가장 최근|최신|마지막|최종", "later|recent|newest|current|final",
           "최근|나중")),
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
    (_side("best", "최선|가장 좋은", "better|good", "좋은"),
     _side("worst", "최악|가장 나쁜", "worse|bad", "나쁜")),
    (_side("northern|north|northernmost", "북쪽|북부", "northward|north\\w*", "북"),
     _side("southern|south|southernmost", "남쪽|남부", "southward|south\\w*", "남")),
    (_side("eastern|east|easternmost", "동쪽|동부", "eastward|east\\w*", "동"),
     _side("western|west|westernmost", "서쪽|서부", "westward|west\\w*", "서")),
    (_side("before|prior to", "이전", "earlier|previous|previously|prior|preceding|until",
           "전에|전의|전까지"),
     _side("after", "이후", "later|following|subsequent|subsequently|since|thereafter", "후에|후의|다음")),
    (_side("increase[sd]?|increasing|rose|risen", "증가|상승|인상",
           "rise[sn]?|rising|raise[sd]?|grow|grew|grown|growth|gain\\w*|climb\\w*|up|higher|more|jump\\w*",
           "늘|오른|올라"),
     _side("decrease[sd]?|decreasing|decline[sd]?|declining", "감소|하락|인하",
           "fall(?:s|en|ing)?|fell|drop\\w*|reduc\\w*|lower\\w*|cut|down|shr[aiu]nk\\w*|less|fewer",
           "줄|내린|내려")),
    (_side("brought forward|moved up|advanced", "앞당", "earlier|sooner", "당겨"),
     _side("postponed|delayed|deferred|pushed back", "연기|미뤄|미루", "later|moved to", "늦춰|순연")),
    (_side("above", "초과", "over|exceed\\w*|more than|greater than|higher than|beyond|at least", "이상|넘"),
     _side("below", "미만", "under|less than|lower than|fewer than|within|at most|up to", "이하|이내|못 미")),
)

# Words after a qualifier that make it a date, not a premise: "last year", "지난 분기".
TIME_AFTER = re.compile(r"\s*(?:year|month|week|day|quarter|time|night|decade|century|years|months|weeks"
                        r"|days|quarters|times|해|년|달|월|주|분기)\b", re.IGNORECASE)

# Any form that asks for a side: left out when a question and a sentence are compared for subject.
ASKED = re.compile("|".join(f"(?:{side.asked.pattern})" for pair in PAIRS for side in pair), re.IGNORECASE)
