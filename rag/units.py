"""Figures with their units, and the comparisons a sentence draws between them. `amounts`: each
figure of a text as a value in one unit, whatever the spelling ("EUR 30m", "EUR 30 million" and
"30,000,000 EUR" are one amount; "3억 원" is 300,000,000 KRW; "5%" and "5 percent" agree).
`figures` is the same as (number as written, unit, where it starts). `comparisons_hold`: a
comparison word between two figures of one unit ("within", "exceeded", "이내", "초과", "raised
from 5 to 7") agrees with their order. Units are known by their spellings (`UNITS`, `CURRENCIES`);
a word after a number that is no unit ("12 August") claims nothing. rag/claims.py checks a
chunk states each figure for the thing a sentence gives it for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# Each unit by its spellings; single Latin letters count only in this case ("5 s", not "50M").
UNITS: dict[str, tuple[str, ...]] = {
    "mm": ("mm", "millimetre", "millimetres", "millimeter", "millimeters", "밀리미터"),
    "cm": ("cm", "centimetre", "centimetres", "centimeter", "centimeters", "센티미터"),
    "m": ("m", "metre", "metres", "meter", "meters", "미터"),
    "km": ("km", "kilometre", "kilometres", "kilometer", "kilometers", "킬로미터"),
    "km/h": ("km/h", "kmh", "kph", "km/hr", "kilometres per hour", "kilometers per hour", "킬로미터/시"),
    "mph": ("mph", "miles per hour"),
    "mm/s": ("mm/s",),
    "m/s": ("m/s", "metres per second", "meters per second"),
    "ms": ("ms", "msec", "millisecond", "milliseconds", "밀리초"),
    "s": ("s", "sec", "secs", "second", "seconds", "초"),
    "min": ("min", "mins", "minute", "minutes", "분"),
    "h": ("h", "hr", "hrs", "hour", "hours", "시간"),
    "day": ("day", "days"),
    "g": ("g", "gram", "grams", "그램"),
    "kg": ("kg", "kilogram", "kilograms", "킬로그램"),
    "kN": ("kn", "kilonewton", "kilonewtons", "킬로뉴턴"),
    "N": ("newton", "newtons", "뉴턴"),
    "Nm": ("nm", "newton metres", "newton meters"),
    "%": ("%", "percent", "per cent", "pct", "퍼센트"),
    # Angles too: rarely swapped for temperatures.
    "°C": ("°c", "℃", "°", "degrees celsius", "degrees c", "deg c", "degrees", "degree", "도"),
    "V": ("V", "volt", "volts", "볼트"),
    "A": ("A", "amp", "amps", "ampere", "amperes", "암페어"),
    "Ah": ("ah", "amp-hours", "ampere-hours"),
    "W": ("W", "watt", "watts", "와트"),
    "kW": ("kw", "kilowatt", "kilowatts", "킬로와트"),
    "Wh": ("wh", "watt-hours"),
    "kWh": ("kwh", "kilowatt-hours", "킬로와트시"),
    "Hz": ("hz", "hertz", "헤르츠"),
    "kHz": ("khz", "kilohertz"),
    "MB": ("mb", "megabyte", "megabytes"),
    "GB": ("gb", "gigabyte", "gigabytes"),
}

# Currencies by their spellings: before a number only codes and signs ("EUR 30m", "€30"), after it
# words too ("30 million euros", "3억 원").
CURRENCIES: dict[str, tuple[str, ...]] = {
    "EUR": ("EUR", "€", "euro", "euros", "유로"),
    "USD": ("USD", "US$", "$", "dollar", "dollars", "달러"),
    "GBP": ("GBP", "£"),
    "JPY": ("JPY", "¥", "yen"),
    "CHF": ("CHF",),
    "KRW": ("KRW", "₩", "won", "원"),
    # ISO codes alone for the rest: their local signs ("kr", "zł") are too short or shared to read
    **{code: (code,) for code in ("PLN", "CZK", "HUF", "SEK", "NOK", "DKK", "ISK", "RON", "BGN", "TRY",
                                  "CNY", "INR", "SGD", "HKD", "TWD", "THB", "AUD", "NZD", "CAD", "MXN",
                                  "BRL", "ZAR", "AED", "SAR", "ILS")},
}
# A scale after a number: "m", "k", "bn" only beside a currency ("EUR 30m"; "30m" is metres).
SCALES = {"thousand": 1e3, "k": 1e3, "million": 1e6, "mn": 1e6, "mio": 1e6, "m": 1e6,
          "billion": 1e9, "bn": 1e9, "trillion": 1e12, "tn": 1e12}
_KOREAN_SCALES = {"십": 10, "백": 100, "천": 1e3, "만": 1e4, "억": 1e8, "조": 1e12}

_SPELLING = {spelling if len(spelling) == 1 else spelling.lower(): unit
             for unit, spellings in UNITS.items() for spelling in spellings}
_MONEY = {spelling.lower(): code for code, spellings in CURRENCIES.items() for spelling in spellings}


def _alternation(spellings) -> str:
    return "|".join(re.escape(s) for s in sorted(spellings, key=len, reverse=True))


_ALTERNATION = _alternation(_SPELLING)
_PLAIN = r"\d+(?:[.,]\d+)*(?!\d)"
_KOREAN_PART = r"\d+(?:[.,]\d+)*(?:[십백천]?[만억조]|[백천])"
# A number standing alone: not part of a code ("HIC15", "FT-2024-07", "ES-2re"); Korean glues
# a number to its word ("약3억"), and 제 makes it an ordinal ("제1조": article 1, not a trillion).
_NUMBER = rf"(?<![A-Za-z0-9_.,])(?<![A-Za-z0-9]-)(?:(?<!제){_KOREAN_PART}(?:\s?{_KOREAN_PART})*|{_PLAIN})"
# A unit ends where a Latin word would go on; a Korean particle may follow a unit ("438초 만에",
# "3.1 kN이었다"), but not every syllable after 초 or 분 is one ("초과": exceeding, "분의": a
# fraction, "분기": a quarter).
_UNIT_END = r"(?![A-Za-z0-9]|(?<=초)과|(?<=분)[의기])"
_CODES = [s for spellings in CURRENCIES.values() for s in spellings if not s.isalpha() or s.isupper()]
_AMOUNT = re.compile(
    rf"(?:(?P<currency>{_alternation(_CODES)})\s?)?(?P<number>{_NUMBER})"
    rf"(?:\s?(?P<scale>{_alternation(SCALES)})(?![A-Za-z]))?"
    rf"(?:\s?(?P<money>{_alternation(_MONEY)})(?![A-Za-z]))?"
    rf"(?:(?:\s?|-)(?P<unit>{_ALTERNATION}){_UNIT_END})?",  # "35-day": an adjective's unit
    re.IGNORECASE,
)
# A count or a frequency in words ("two weeks", "twice a year"): regex alternations that rag/asked.py
# and rag/quotes.py read as figures no amount is parsed from.
NUMBER_WORDS = (r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|"
                r"forty|fifty|hundred")
FREQUENCY_WORDS = r"once|twice|daily|weekly|fortnightly|monthly|quarterly|yearly|annually"
# A frequency in words is a figure in times a year: "tested quarterly" where the newer version says
# monthly states another figure for the test, and "every month" is "monthly".
FREQUENCY = "times a year"
_ADVERBS = {"daily": 365, "weekly": 52, "fortnightly": 26, "monthly": 12, "quarterly": 4, "half-yearly": 2,
            "six-monthly": 2, "annually": 1, "yearly": 1}
_PERIODS = {"day": 365, "week": 52, "fortnight": 26, "month": 12, "quarter": 4, "year": 1}  # "every month"
FREQUENCY_PATTERN = re.compile(
    rf"\b({'|'.join(_ADVERBS)})\b"
    rf"|\b(?:every|each|once\s+(?:a|per|every)|twice\s+(?:a|per))\s+({'|'.join(_PERIODS)})\b", re.IGNORECASE)
_NOUN_AFTER = re.compile(
    r"[ \t]+(?!(?:and|or|but|by|at|in|on|for|to|from|with|as|per|during|until|after|before|if|when|where"
    r"|while|throughout|thereafter|unless|between|under|over|is|are|was|were)\b)[A-Za-z]", re.IGNORECASE)
# A number after a document part's name labels the part ("Section 2: ...", "see Article 12"),
# as 제 does in Korean: no figure.
_PART_LABEL = re.compile(r"(?:\b(?:section|article|clause|chapter|paragraph|annex|appendix|schedule|exhibit|"
                         r"attachment|part|step|slide|page|table|figure)\s?|§\s?)$", re.IGNORECASE)
# A standard's number ("ISO/IEC 17025", "ISO 9001:2015", "BS EN 206") names the standard, no figure
_STANDARD = re.compile(r"\b(?:ISO|IEC|EN|BS|DIN|ASTM|ANSI|IEEE|NFPA|KS|JIS)(?:[/ ](?:ISO|IEC|EN))*\s?"
                       r"(?:\d[\d.-]*:)?$")
# "(mm)", "(% of revenue)", "| speed_kmh |": a unit named for the figures under it
_NAMED = re.compile(rf"[\[(]\s*({_ALTERNATION})(?:\s+(?:of|per)\s[^\])]*)?\s*[\])]"
                    rf"|(?:^|[\s_|])({_ALTERNATION})\s*(?:\||$)", re.IGNORECASE)
# A key's "_c" is degrees Celsius ("setpoint_c", "temp_c"); a word "C" is not ("Zone C", "Grade C").
CELSIUS_KEY = re.compile(r"(?<=[a-z])_c(?![A-Za-z0-9])")
_NAMED_MONEY = re.compile(rf"(?<![A-Za-z])({_alternation(_CODES)})(?![A-Za-z])")
# A snake_case header names its currency and scale as words of its own: "fee_eur_k", "retention_eur_m"
# (there "m" is millions, not metres).
_SNAKE_MONEY = re.compile(rf"(?:^|(?<=[\s_|]))({_alternation(c.lower() for c in CURRENCIES)})"
                          rf"(?:_({_alternation(SCALES)}))?(?=_|\s*\||\s*$)", re.IGNORECASE)
_NAMED_WON = re.compile(r"[(\[]\s*(?:단위\s*:\s*)?(?:[백천]만|[백천십]?억|천)?\s?원\s*[)\]]")
_NAMED_SCALE = re.compile(rf"(?:{_alternation(_MONEY)})\s?({_alternation(SCALES)})(?![A-Za-z])"
                          rf"|\b(thousands|millions|billions)\b|[(\[]\s*(?:단위\s*:\s*)?([백천]만|[백천십]?억)\s?원\s*[)\]]",
                          re.IGNORECASE)


@dataclass(frozen=True)
class Amount:
    """A figure: as written, its value (scale applied: "30m" is 30,000,000), its unit (a key of
    UNITS or CURRENCIES, None when it has none) and where it stands."""

    number: str
    value: float
    unit: str | None
    start: int
    end: int


def _unit(spelling: str | None) -> str | None:
    if not spelling:
        return None
    if len(spelling) == 1:
        return _SPELLING.get(spelling)
    return _SPELLING.get(spelling) or _SPELLING.get(spelling.lower())


def value(number: str) -> float:
    """"1,200" is 1200, "31,5" 31.5, "1,200.5" 1200.5, "3억 5천만" 350,000,000."""
    parts = re.findall(r"(\d+(?:[.,]\d+)*)([십백천]?)([만억조]?)", number)
    if any(small or large for _, small, large in parts):
        return sum(_plain(n) * _KOREAN_SCALES.get(small, 1) * _KOREAN_SCALES.get(large, 1)
                   for n, small, large in parts)
    return _plain(number)


def _plain(number: str) -> float:
    if number.count(".") > 1:  # "1.234.567" is thousands; "127.0.0.1" and "2.13.0" are no figures
        whole, _, cents = number.partition(",")
        if not all(len(group) == 3 for group in whole.split(".")[1:]):
            raise ValueError(f"not a figure: {number}")
        return float(whole.replace(".", "") + (f".{cents}" if cents else ""))
    if "," in number and ("." in number or re.search(r",\d{3}$", number)):
        return float(number.replace(",", ""))
    return float(number.replace(",", "."))


@lru_cache(maxsize=8192)
def amounts(text: str) -> tuple[Amount, ...]:
    """Every figure of the text with its value and unit; cached (read-only)."""
    found = []
    for match in _AMOUNT.finditer(text):
        spelled = match.group("currency") or match.group("money")
        currency = _MONEY.get(spelled.lower()) if spelled else None
        scale, unit = match.group("scale"), _unit(match.group("unit"))
        end = match.end()
        if scale and not currency and len(scale) <= 3:  # "30m": metres; "50M", "5k": codes
            scale, unit = None, "m" if scale == "m" else unit
            end = match.end() if unit else match.end("number")
        number = match.group("number")
        if not spelled and (_PART_LABEL.search(text, max(0, match.start() - 12), match.start())
                            or _STANDARD.search(text, max(0, match.start() - 24), match.start())):
            continue
        if _fiscal_tail(text, match.start(), number):
            continue
        try:
            worth = value(number) * (SCALES[scale.lower()] if scale else 1.0)
        except ValueError:  # an address or a version ("127.0.0.1", "2.13.0") states no figure
            continue
        found.append(Amount(number, worth, currency or unit, match.start(), end))
    for m in FREQUENCY_PATTERN.finditer(text):
        if m.group(1) and _NOUN_AFTER.match(text, m.end()):
            continue  # "the yearly standing charge", "monthly reports": a kind of thing, not how often
        if not any(a.start < m.end() and m.start() < a.end for a in found):
            times = 2.0 if m.group().lower().startswith("twice") else 1.0
            per_year = _ADVERBS[m.group(1).lower()] if m.group(1) else _PERIODS[m.group(2).lower()]
            found.append(Amount(m.group(), times * per_year, FREQUENCY, m.start(), m.end()))
    return tuple(sorted(found, key=lambda a: a.start))


# A fiscal year spans two ("2023/24", "2024–25"): the second is no figure of its own, and the span
# is read as its first year, as "in 2023" is.
_SPAN_START = re.compile(r"(?<!\d)((?:19|20)\d\d)\s?[/–]\s?$")


def _fiscal_tail(text: str, start: int, number: str) -> bool:
    opened = _SPAN_START.search(text, max(0, start - 7), start)
    return bool(opened) and len(number) == 2 and int(number) == (int(opened.group(1)) + 1) % 100


def figures(text: str) -> list[tuple[str, str | None, int]]:
    """(number as written, unit or None, where it starts) of each figure standing alone."""
    return [(a.number, a.unit, a.start) for a in amounts(text)]


def named_units(text: str) -> set[str]:
    """Units a text names for the figures near it: after a number, in brackets ("(mm)"), or as
    a header cell's last word ("speed_kmh", "Force kN")."""
    found = {a.unit for a in amounts(text) if a.unit}
    found |= {code.upper() for code, _ in _SNAKE_MONEY.findall(text)}
    for match in _NAMED.finditer(_SNAKE_MONEY.sub(" ", text)):
        found.add(_unit(match.group(1) or match.group(2)))
    found |= {_MONEY[code.lower()] for code in _NAMED_MONEY.findall(text)}
    if _NAMED_WON.search(text):
        found.add("KRW")
    if CELSIUS_KEY.search(text):
        found.add("°C")
    return found - {None}


def named_scales(text: str) -> set[float]:
    """Scales a table header or sentence names for its bare figures: "(EUR m)", "in millions",
    "(단위: 백만원)", "억원"."""
    found = set()
    for money, plural, korean in _NAMED_SCALE.findall(text):
        if money:
            found.add(SCALES[money.lower()])
        elif plural:
            found.add(SCALES[plural.lower().rstrip("s")])
        else:
            found.add(value(f"1{korean}"))
    return found | {SCALES[scale.lower()] for _, scale in _SNAKE_MONEY.findall(text) if scale}

# Comparison words: the figure before the word (English) or the first of the two before it
# (Korean) is at most (-1) or at least (+1) the other; "not" or "never" just before turns it
# (Korean negation follows the verb: its own entries), and a passive "exceeded by" swaps them.
_ENGLISH = {
    -1: ("within", "below", "under", "less than", "lower than", "smaller than", "shorter than", "fewer than",
         "beneath", "short of"),
    1: ("above", "over", "exceeded", "exceeds", "exceeding", "exceed", "more than", "greater than",
        "higher than", "larger than", "longer than", "beyond", "surpassed", "surpasses", "surpassing"),
}
_KOREAN = {-1: ("이내", "이하", "미만", "밑돌", "못 미치", "못미치", "넘지 않", "초과하지 않", "웃돌지 않"),
           1: ("초과", "웃돌", "상회", "넘었", "넘어", "넘는", "넘긴")}
_WORDS = {word: sign for table in (_ENGLISH, _KOREAN) for sign, words in table.items() for word in words}
_COMPARISON = re.compile(
    r"(?P<neg>(?:\b(?:not|never)|n't)\s+(?:\w+\s+)?)?(?<![A-Za-z])(?P<word>"
    + "|".join(re.escape(w) for w in sorted(_WORDS, key=len, reverse=True))
    + r")(?![A-Za-z])(?P<by>\s+by\b)?",
    re.IGNORECASE,
)
_TOLERANCE = re.compile(r"\s*\d+(?:[.,]\d+)*\s*\S*\s+of\b", re.IGNORECASE)  # "within 5 mm of the target"


# A figure stated as a bound: a rule's threshold ("a fee above EUR 100 thousand", "up to 3
# nights", "5억 원 초과"), with its side (+1 above, -1 below) and whether the bound itself counts.
# "Within" is left out: "within 45 days" is a deadline, and "within 30 days" would satisfy it.
_BOUND_BEFORE = [(re.compile(rf"(?:{words})\s*$", re.IGNORECASE), side, inclusive)
                 for words, side, inclusive in (
    (r"\babove|\bover|\bmore than|\bgreater than|\bhigher than|\bexceeding|\bin excess of", 1, False),
    (r"\bat least|\bno less than|\bnot less than|\bminimum of", 1, True),
    (r"\bbelow|\bunder|\bless than|\blower than|\bfewer than", -1, False),
    (r"\bup to|\bat most|\bno more than|\bnot more than|\bnot exceeding|\bmaximum of", -1, True))]
_BOUND_AFTER = [(re.compile(rf"^\s*(?:{words})"), side, inclusive) for words, side, inclusive in (
    ("초과", 1, False), ("이상", 1, True), ("미만", -1, False), ("이하", -1, True))]


def bounds(text: str) -> tuple[tuple[Amount, int, bool], ...]:
    """(figure, side, inclusive) of each figure of the text stated as a bound: "above EUR 100
    thousand" is (EUR 100,000, +1, False); "up to 3 nights" (3 nights, -1, True)."""
    found = []
    for amount in amounts(text):
        before, after = text[max(0, amount.start - 24):amount.start], text[amount.end:amount.end + 4]
        for pattern, side, inclusive in _BOUND_BEFORE:
            if pattern.search(before):
                found.append((amount, side, inclusive))
        for pattern, side, inclusive in _BOUND_AFTER:
            if pattern.match(after):
                found.append((amount, side, inclusive))
    return tuple(found)


def satisfies(value: float, side: int, bound: float, inclusive: bool) -> bool:
    """Whether a value meets a bound: 150 meets "above 100", 100 does not; 3 meets "up to 3"."""
    return (value - bound) * side > 0 or (inclusive and value == bound)


# "raised from 5 to 7": the change a verb just before "from" (Korean: just after "X에서 Y로") names
# must agree with the two figures' order.
_CHANGE = re.compile(
    r"\b(?:(?P<up>rais|increas|ris|rose|grow|grew|lift|extend|lengthen|expand|up\b)"
    r"|(?P<down>cut|reduc|lower|decreas|fell|fall|drop|shrank|shrunk|shorten|down\b))\w*\s+(?:\w+\s+)?$"
    r"|^\s*(?:(?P<kup>인상|증가|상향|늘|확대)|(?P<kdown>인하|감소|하향|줄|축소))", re.IGNORECASE)
_FROM = re.compile(r"\bfrom\b|에서", re.IGNORECASE)
_TO = re.compile(r"\bto\b|으로|로", re.IGNORECASE)


@lru_cache(maxsize=4096)
def comparisons_hold(segment: str) -> bool:
    """Whether each comparison the segment draws between two figures of one unit (or without
    units) agrees with their order: "142 mm, within the target of 120 mm" does not, nor "cut
    from 5 to 7 days"."""
    found = amounts(segment)
    for match in _COMPARISON.finditer(segment):
        word = match.group("word").lower()
        sign = _WORDS[word] * (-1 if match.group("neg") else 1)
        before = [f for f in found if f.start < match.start()]
        if word in _KOREAN[1] or word in _KOREAN[-1]:  # "142 mm로 기준 120 mm 이내": the two before it
            pair = (before[-2], before[-1]) if len(before) >= 2 else None
        elif _TOLERANCE.match(segment, match.end()):
            continue
        else:
            after = [f for f in found if f.start >= match.end()]
            pair = (before[-1], after[0]) if before and after else None
            if pair and match.group("by"):
                pair = pair[::-1]
        if not _ordered(pair, sign):
            return False
    return all(_ordered(pair, sign) for pair, sign in _changes(segment, found))


def _ordered(pair: tuple[Amount, Amount] | None, sign: int) -> bool:
    if pair is None or (pair[0].unit and pair[1].unit and pair[0].unit != pair[1].unit):
        return True
    return (pair[0].value - pair[1].value) * sign >= 0


def _changes(segment: str, found: tuple[Amount, ...]) -> list[tuple[tuple[Amount, Amount], int]]:
    """(from, to) of each "raised/cut from X to Y" ("X에서 Y로 인상"), with the sign the verb
    claims (-1: the first is below the second, as for comparison words)."""
    changes = []
    for start in _FROM.finditer(segment):
        english = start.group().lower() == "from"
        end = _TO.search(segment, start.end())
        if not end:
            continue
        firsts = [f for f in found if start.end() <= f.start < end.start()] if english \
            else [f for f in found if f.end <= start.start()][-1:]
        seconds = [f for f in found if end.end() <= f.start] if english \
            else [f for f in found if start.end() <= f.start < end.start()]
        near = segment[max(0, start.start() - 30):start.start()] if english else segment[end.end():][:12]
        verb = _CHANGE.search(near)
        if firsts and seconds and verb:
            changes.append(((firsts[-1], seconds[0]), -1 if verb.group("up") or verb.group("kup") else 1))
    return changes
