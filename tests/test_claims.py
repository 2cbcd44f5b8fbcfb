"""Claims, not words: a chunk supports a figure only where it states that figure, in that unit,
for the thing the sentence gives it for (rag/claims.py), through the real matcher too."""

from __future__ import annotations

import pytest

from rag.claims import claims, claims_backed, claims_named
from rag.places import dates
from rag.units import amounts, comparisons_hold

BATTERY = """Title: Battery abuse tests BA-2025-03
Test Name: BA-2025-03

# Results

| Measurement | Module A | Module B | Limit |
|---|---|---|---|
| Peak casing temperature (°C) | 61 | 74 | 80 |
| Voltage drop (V) | 0.8 | 1.4 | 2.0 |
| Cycles to failure | 1,200 | 950 | - |"""

TREATY = """Title: Hafnia marine treaty renewal

The Hafnia marine treaty renews with a deductible of EUR 2.5m and a limit of EUR 40m. \
Brokerage stays at 7.5 percent. The new wording took effect on 2025-04-01.

- Claims notified after 30 days are excluded."""

MEMO = ("Memo of 1 October 2024. The review workshop, planned for 15 October 2024 in the kick-off, is "
        "postponed to 12 November 2024. The final report therefore moves from 20 December 2024 to 31 "
        "January 2025. The Busan office move is postponed from March 2025 to June 2025. Headcount: from "
        "10 to 20 staff.")

ERRATUM = """Erratum to the Quality Audit 2024, issued 2 December 2024.

- Section 3: the documentation score of ENG-22 should read 2.4, not 3.4."""

RESCHEDULED = ("1. Castlebrook generator load bank test\n\nThe load bank test previously set for 14 November "
               "2024 has been moved to Thursday 5 December 2024 (07:00-11:00).\n\n2. Ward Block tank "
               "replacement\n\nThe water outage planned for 23 November 2024 will now take place on "
               "Saturday 11 January 2025.")

OUTAGE = ("2. Ward Block cold water storage tank replacement\n\nFollowing the contractor's survey of the "
          "existing tank base, the outage duration has been revised from 8 hours to 10 hours (06:00-16:00).")

SECTION = "- Section 2: the number of engagements sampled should read 21."

PALLETS = ("2. Pallets\n\n2,380 pallets were lost across the depot network in 2024, at a replacement cost of "
           "EUR 14 each (EUR 33,320).")
HOTELS = "The nightly hotel cap is EUR 175 in all cities except London and Seoul, where it is EUR 230."

RULE = ("Every engagement with a fee above EUR 100 thousand needs a second partner review. "
        "Taxi fares up to EUR 40 are reimbursed without a receipt.")
KOREAN_RULE = "수수료 1억 원 초과 계약은 파트너 검토가 필요하다."

LAYERS = """| layer | retention_eur_m | limit_eur_m |
|---|---|---|
| 1 | 20 | 30 |
| 2 | 50 | 100 |"""

# A JSON record as the reader flattens it: each key path names its bare value's unit.
CONTRACT = """Title: contract-harbour-freight-2025

term.start: 2025-01-01
term.notice_period_days: 60
pricing.fuel_surcharge_pct: 3.5
insurance.cargo_limit_eur: 250000"""

# "label: value" lines under each site's heading; the converter joins a Markdown paragraph's lines.
SITES = """## Rotterdam yard

Address: Havenweg 12 Headcount: 140 Site lead: Anouk Visser

## Bremen yard

Address: Kaistrasse 7 Headcount: 65 Site lead: Jan Becker"""

# A plain-text file wrapped at a fixed width: the sentence goes on in the next line.
WRAPPED = """Revenue in 2024 was EUR 41.2 million. Retail clients account for 55% of
revenue, wholesale for 30% and public bodies for the remaining 15%."""

# A plain-text erratum: a title line over "Printed:"/"Correct:" fields; the header's title holds the
# period ("Q3 2024") that no line of this chunk repeats.
CORRECTION = """Title: q3-2024-trading-report-erratum

Correction 1 - Lisbon occupancy
Printed: 81.2%
Correct: 82.1%

Correction 2 - Busan F&B revenue
Printed: EUR 1.42m
Correct: EUR 1.24m
The printed figure included banquet deposits posted to September in error."""

BUDGET = "2025년 안전 예산은 3억 5천만 원으로 확정되었다. 신고 후 4시간 이내에 현장 점검을 시작한다."


NUMBERED_ERRATUM = """ERRATUM - Q3 2024 BUSINESS REPORT

2. Net revenue retention (trailing 12 months) for Q3 2024

   Stated in the report: 108%
   Corrected NRR figure: 106%
"""
RETENTION = "Database backups: kept on a rolling 35-day basis, then permanently deleted."


@pytest.mark.parametrize(("segment", "chunk", "backed"), [
    # the right figure with its own words, in the spellings documents use
    ("Module B's peak casing temperature was 74 °C.", BATTERY, True),
    ("The deductible of the Hafnia treaty is EUR 2.5 million.", TREATY, True),
    ("The Hafnia treaty's limit is 40,000,000 EUR.", TREATY, True),
    ("Brokerage stays at 7.5%.", TREATY, True),
    # a bare "cell 14" in a sentence that also gives "3 mm" is no rival length
    ("The nail in the Orion pack's penetration test was 3 mm.",
     "A steel nail of 3 mm diameter was driven through cell 14 of the Orion battery pack at 80 mm/s.", True),
    # the model's citation marks are no figures of the claim
    ("Brokerage stays at 7.5% [1].", TREATY, True),
    ("The Hafnia treaty's limit is EUR 40m [2, 3].", TREATY, True),
    ("The new wording took effect on 1 April 2025.", TREATY, True),
    ("The new wording has applied since April 2025.", TREATY, True),
    ("Claims notified after 30 days are excluded.", TREATY, True),
    # a paraphrase of the noun: "voltage drop of module A" for the row "Voltage drop (V)"
    ("The voltage drop of module A was 0.8 V.", BATTERY, True),
    ("Module A lasted 1200 cycles before failure.", BATTERY, True),
    # a changed figure ("2.5" is not "25"; a day off is another date)
    ("The deductible of the Hafnia treaty is EUR 25 million.", TREATY, False),
    ("The Hafnia treaty's limit is EUR 4m.", TREATY, False),
    ("The new wording took effect on 2 April 2025.", TREATY, False),
    # a changed unit, an added unit
    ("Module B's peak casing temperature was 74 V.", BATTERY, False),
    ("The brokerage is EUR 7.5m.", TREATY, False),
    ("Module A lasted 1,200 hours before failure.", BATTERY, False),
    # a figure the chunk gives for another thing: another row, another column, another noun
    ("Module A's voltage drop was 61.", BATTERY, False),
    ("Module A's peak casing temperature was 74 °C.", BATTERY, False),
    ("The peak casing temperature of module B reached 80 °C.", BATTERY, False),
    ("The Hafnia treaty's deductible is EUR 40m.", TREATY, False),
    # a change: the new side is the thing's figure; the old one only as a former value
    ("The final report is due on 31 January 2025.", MEMO, True),
    ("The final report is due on 20 December 2024.", MEMO, False),
    ("The final report was moved from 20 December 2024 to 31 January 2025.", MEMO, True),
    ("The Busan office moves in June 2025.", MEMO, True),
    ("The Busan office moves in March 2025.", MEMO, False),
    ("The documentation score of ENG-22 in the 2024 audit was 2.4.", ERRATUM, True),
    ("The documentation score of ENG-22 in the 2024 audit was 3.4.", ERRATUM, False),
    # "Section 2" labels a part: it gives the engagements no rival figure of 2
    ("The audit sample consisted of 21 engagements.", SECTION, True),
    ("The audit sample consisted of 2 engagements.", SECTION, False),
    # a clause that refers back ("where it is") measures the sentence's thing
    ("The nightly hotel cap in Seoul is EUR 230.", HOTELS, True),
    ("The nightly hotel cap in Seoul is EUR 175.", HOTELS, False),
    # a figure that ends its clause takes no word of the next: the cost is the EUR 14's
    ("The number of pallets lost across the depot network in 2024 was 2,380, at a replacement cost of "
     "EUR 14 each.", PALLETS, True),
    ("The number of pallets lost across the depot network in 2024 was 2,380, at a replacement cost of "
     "EUR 33 each.", PALLETS, False),
    # a case that meets a rule's bound is stated by the rule; one that misses it is not
    ("Yes, a project billed at EUR 150 thousand needs a second partner review.", RULE, True),
    ("A project billed at EUR 50 thousand needs a second partner review.", RULE, False),
    ("An engagement with a fee above EUR 150 thousand needs a second partner review.", RULE, False),
    ("A taxi fare of EUR 35 is reimbursed without a receipt.", RULE, True),
    ("A taxi fare of EUR 55 is reimbursed without a receipt.", RULE, False),
    ("The retention is EUR 150 thousand.", RULE, False),  # the bound is another thing's
    ("수수료가 2억 원인 계약은 파트너 검토가 필요하다.", KOREAN_RULE, True),
    ("수수료가 5천만 원인 계약은 파트너 검토가 필요하다.", KOREAN_RULE, False),
    # a snake_case header names currency and scale ("_eur_m": EUR millions, not metres)
    ("The retention of layer 2 is EUR 50 million.", LAYERS, True),
    ("The retention of layer 2 is 50 m.", LAYERS, False),
    # a key path's unit ("_days", "_pct", "_eur") is its bare value's; another unit is a change
    ("We must give 60 days of notice to end the harbour freight contract.", CONTRACT, True),
    ("We must give 60 hours of notice to end the harbour freight contract.", CONTRACT, False),
    ("The fuel surcharge is 3.5%.", CONTRACT, True),
    ("Cargo is insured up to EUR 250,000.", CONTRACT, True),
    # a section's heading names what its fields give: Bremen's headcount is not Rotterdam's
    ("The Bremen yard has a headcount of 65.", SITES, True),
    ("The Bremen yard has a headcount of 140.", SITES, False),
    # a sentence wrapped across two lines still owns its words ("55% of / revenue"), here named
    # in other words than the chunk's ("shop customers" for retail clients)
    ("Shop customers account for 55% of revenue.", WRAPPED, True),
    # an erratum's title names the fields under it; the header's year is the period of its figures
    ("Busan made EUR 1.24 million in F&B revenue in Q3 2024, as corrected in the erratum.", CORRECTION, True),
    ("Busan made EUR 1.24 million in F&B revenue in Q3 2023.", CORRECTION, False),
    ("Busan made EUR 1.42 million in F&B revenue in Q3 2024.", CORRECTION, False),
    # a numbered title a blank line above its fields names them; "Stated in the report" is the former side
    ("Net revenue retention for Q3 2024 was 106%.", NUMBERED_ERRATUM, True),
    ("Net revenue retention for Q3 2024 was 108%.", NUMBERED_ERRATUM, False),
    # "a 35-day basis" is 35 days, written as an adjective
    ("We keep database backups for 35 days.", RETENTION, True),
    ("We keep database backups for 35 hours.", RETENTION, False),
    # "the January surveillance visit" names the visit: no month is claimed beside the date
    ("The UKAS accreditation is good until 30 November 2027 after the January surveillance visit.",
     "The laboratory's UKAS accreditation was renewed until 30 November 2027 after the January "
     "surveillance visit.", True),
    ("The UKAS accreditation is good until 30 November 2028.",
     "The laboratory's UKAS accreditation was renewed until 30 November 2027.", False),
    # a change written with its verb between the sides: the new date is the test's, the old is former;
    # the weekday is the date's word, not the test's name
    ("The Castlebrook load bank test is happening on Thursday 5 December 2024.", RESCHEDULED, True),
    ("The Castlebrook load bank test is happening on 14 November 2024.", RESCHEDULED, False),
    ("The Ward Block water outage is on Saturday 11 January 2025.", RESCHEDULED, True),
    ("The Ward Block water outage is on 23 November 2024.", RESCHEDULED, False),
    # a time of day claims nothing: its hours would each be held against the tank's other figures
    ("The Ward Block is without water for 10 hours (06:00-16:00) when they swap the tank.", OUTAGE, True),
    ("The Ward Block is without water for 8 hours (06:00-16:00) when they swap the tank.", OUTAGE, False),
    ("The annual load bank test at Castlebrook is on Thursday 5 December 2024.",
     "Castlebrook: the annual load bank test is booked for 5 December 2024 with Voltex.", True),
])
def test_a_chunk_backs_a_figure_only_as_it_states_it(segment, chunk, backed):
    assert claims_backed(segment, chunk) is backed


def test_a_source_named_beside_a_figure_is_not_what_it_measures():
    """"according to the corrected report" says where the figure is, not what it measures: the
    claim keeps the words of its thing, so a rival naming the thing meets it."""
    (occupancy,) = [c for c in claims("Kraków's occupancy in Q3 was 78.6% according to the corrected "
                                      "report.") if c.amount and c.amount.unit == "%"]
    assert {word for word, _ in occupancy.words} >= {"occup"}
    assert not {word for word, _ in occupancy.words} & {"accor", "corr", "repor"}


TRIANGLE = """Title: Open claims triangle, marine cargo

| Accident year | 12 months | 24 months | 36 months |
|---|---|---|---|
| 2022 | 40 | 12 | 3 |
| 2023 | 55 | 17 | |

| Return period | Occurrence loss (EUR m) | Events |
|---|---|---|
| 50-year | 180 | 9 |
| 100-year | 250 | 14 |"""


@pytest.mark.parametrize(("segment", "backed"), [
    ("For accident year 2022, 12 claims were open at 24 months.", True),
    ("At 12 months, accident year 2023 had 55 open claims.", True),
    ("For accident year 2023, 12 claims were open at 24 months.", False),  # 2022's cell
    ("For accident year 2022, 40 claims were open at 24 months.", False),  # the 12-month cell
    ("The 100-year occurrence loss is EUR 250 million.", True),  # a bare cell under "(EUR m)"
    ("The 50-year occurrence loss is EUR 250m.", False),  # another row, named by its code
    ("The 100-year occurrence loss is EUR 250.", False),  # the header's millions dropped
])
def test_a_cell_stands_in_the_row_and_column_the_sentence_names(segment, backed):
    assert claims_backed(segment, TRIANGLE) is backed


@pytest.mark.parametrize(("segment", "chunk", "backed"), [
    ("The 2025 safety budget was set at KRW 350 million.", BUDGET, True),  # 3억 5천만 원
    ("The 2025 safety budget was set at KRW 35 million.", BUDGET, False),
    ("2025년 안전 예산은 350,000,000원이다.", BUDGET, True),
    ("2025년 안전 예산은 3억 원이다.", BUDGET, False),
    ("현장 점검은 신고 후 4시간 이내에 시작한다.", BUDGET, True),
    ("현장 점검은 신고 후 4분 이내에 시작한다.", BUDGET, False),  # a changed unit
    ("모듈 B의 전압 강하는 1.4 V였다.", BATTERY, True),  # across scripts the figure decides
    ("모듈 B의 전압 강하는 1.4 mm였다.", BATTERY, False),
    ("Article 1 says Korea is a democratic republic.", "제1조 ① 대한민국은 민주공화국이다.", True),  # not 1조
])
def test_korean_amounts_and_units(segment, chunk, backed):
    assert claims_backed(segment, chunk) is backed


@pytest.mark.parametrize(("segment", "holds"), [
    ("The deductible was raised from EUR 2m to EUR 2.5m.", True),
    ("The deductible was cut from EUR 2m to EUR 2.5m.", False),
    ("The notice period was shortened from 45 to 30 days.", True),
    ("점검 시작은 3시간으로 목표 4시간 이내였다.", True),
    ("점검 시작은 5시간으로 목표 4시간 이내였다.", False),
    ("보험료는 2억 원에서 3억 원으로 인상되었다.", True),
    ("보험료는 3억 원에서 2억 원으로 인상되었다.", False),
])
def test_a_change_or_comparison_agrees_with_its_figures(segment, holds):
    assert comparisons_hold(segment) is holds


def test_the_claims_of_a_sentence_are_its_figures_and_dates_with_their_nearest_words():
    figure, date = claims("Since 1 April 2025 the Hafnia limit is EUR 40m.")
    assert (figure.amount.value, figure.amount.unit) == (40e6, "EUR")
    assert figure.words[0] == ("limit", 1.0)  # the noun it qualifies weighs most
    assert date.date == (2025, 4, 1) and date.amount is None
    assert [a.value for a in amounts("EUR 30m, EUR 30 million, 30,000,000 EUR")] == [30e6] * 3
    assert [d for d, _, _ in dates("2024년 8월 12일, 12 Aug 2024, August 12, 2024")] == [(2024, 8, 12)] * 3
    assert claims("Test FT-2024-07 used the HIC15 criterion.") == ()  # codes claim no figure


def test_the_matcher_backs_the_right_cell_and_not_its_neighbour(base_settings):
    """Through the learned support model with the packaged encoder and the matcher as the
    pipeline builds it: the right cell is supported, the same sentence with the other module's
    figure is not, though every word and the figure are in the chunk."""
    from rag.models import build_embedding
    from rag.references import ReferenceMatcher
    from rag.scoring import bi_encoder
    from rag.support import support_scorer

    scorer = support_scorer(base_settings, bi_encoder(base_settings, build_embedding(base_settings)))
    matcher = ReferenceMatcher.from_settings(base_settings, scorer)
    right = "In BA-2025-03 the peak casing temperature of module B was 74 °C."
    swapped = "In BA-2025-03 the peak casing temperature of module A was 74 °C."
    segments = matcher.match([right, swapped], [BATTERY])
    assert [(s.text, s.supported) for s in segments] == [(right, True), (swapped, False)]


def test_the_matcher_backs_a_figure_its_chunk_states_for_the_thing_in_other_words(base_settings):
    """A paraphrase of a key path ("60 days of notice" of "term.notice_period_days: 60") shares
    few words with its chunk, so the support model alone scores it low; the chunk stating the
    figure for the thing backs it (rag/claims.py `claims_named`), and another figure is not."""
    from rag.claims import claims_named
    from rag.models import build_embedding
    from rag.references import ReferenceMatcher
    from rag.scoring import bi_encoder
    from rag.support import support_scorer

    scorer = support_scorer(base_settings, bi_encoder(base_settings, build_embedding(base_settings)))
    matcher = ReferenceMatcher.from_settings(base_settings, scorer)
    right = "We have to give 60 days of notice before ending the harbour freight agreement."
    changed = "We have to give 90 days of notice before ending the harbour freight agreement."
    other = "There is a fuel surcharge, and we pay it on every invoice."  # no figure: no claim to back
    assert claims_named(right, CONTRACT) and not claims_named(changed, CONTRACT)
    assert not claims_named(other, CONTRACT)
    # another contract's name: this chunk states no figure of it
    assert not claims_named("The Seafarer contract gives 60 days of notice.", CONTRACT)
    segments = matcher.match([right, changed], [CONTRACT])
    assert [(s.text, s.supported) for s in segments] == [(right, True), (changed, False)]


def test_a_code_the_question_put_beside_a_name_is_not_held_against_the_answer(base_settings):
    """The question is asked "at Avonmouth (AVM)" (rag/codes.py); the model says the code back;
    the table gives the depot by name: the sentence is scored as if the code were not there."""
    from rag.models import build_embedding
    from rag.scoring import bi_encoder
    from rag.support import support_scorer

    scorer = support_scorer(base_settings, bi_encoder(base_settings, build_embedding(base_settings)))
    table = ("Diesel consumption by depot, litres, 2023\n\n| Depot | Q1 (L) | Q2 (L) | Q3 (L) |\n"
             "|---|---|---|---|\n| Leeds Depot | 301420 | 296880 | 288150 |\n"
             "| Avonmouth Depot | 276340 | 271905 | 265210 |")
    plain = "Avonmouth used 265,210 litres of diesel in Q3 2023."
    coded, held = scorer([(plain.replace("Avonmouth", "Avonmouth (AVM)"), table), (plain, table)])
    assert coded == held > 0


def test_a_korean_quarter_is_an_ordinal_not_minutes():
    assert claims_backed("2024년 3분기 서울 사무소의 가동률은 74%입니다.",
                         "# Office figures Q3 2024\n\n| Office | Utilisation |\n|---|---|\n| Seoul | 74% |")
    assert [a.unit for a in amounts("3분기, 3분 동안")] == [None, "min"]


def test_an_address_or_a_version_is_no_figure_and_dotted_thousands_are():
    text = "Served at 127.0.0.1 on torch 2.13.0; the fund holds 1.234.567 EUR and 1.234.567,5 kg."
    assert [(a.number, a.value, a.unit) for a in amounts(text)] == [
        ("1.234.567", 1234567.0, "EUR"), ("1.234.567,5", 1234567.5, "kg")]
    assert claims_backed("The portal moved on 3 March.",
                         "The portal moved on 3 March. See http://127.0.0.1:8000/login.")


def test_a_document_name_the_model_cites_is_no_claim():
    """"as stated in memo_schedule_2025-03.md": the file's date is no date the sentence claims."""
    chunk = "The supplier day at the Brno plant moves from 26 March 2025 to Wednesday 9 April 2025."
    assert claims_backed("The supplier day in Brno is on 9 April 2025, as stated in "
                         "memo_schedule_2025-03.md.", chunk)
    assert claims_backed("The supplier day in Brno is on 9 April 2025 (schedule memo 2025-03.md).", chunk)
    assert not claims_backed("The supplier day in Brno is on 9 April 2025, moved in March 2024.", chunk)


def test_a_plain_text_title_names_the_fields_under_it():
    """"Correction 2 - Busan F&B revenue" over "Correct: EUR 1.24m": the field states Busan's F&B
    revenue, so a paraphrase of it is backed in other words (the positive claim rule)."""
    assert claims_named("Busan made EUR 1.24 million in F&B revenue in Q3 2024.", CORRECTION)
    assert not claims_named("Busan made EUR 82.1 million in F&B revenue in Q3 2024.", CORRECTION)


ERRATUM_PROSE = """Title: erratum-annual-report-2023-24

Following an internal audit, two figures of the Annual Performance Report 2023/24 were
found to be incorrect.

1. Leakage. The report states 38.4 Ml/d. This is wrong because night-flow data were
double-counted. The corrected figure is 41.7 Ml/d.

2. Written customer complaints. The report states 1,284. Complaints received through
the web chat channel were omitted. The corrected figure is 1,348."""


def test_an_erratum_in_prose_backs_the_corrected_figure_under_its_item_label():
    """A hard-wrapped numbered item: its label ("Written customer complaints") names what the
    corrected figure measures, and "The report states ..." is the value it replaces."""
    assert claims_named("The number of written complaints in 2023/24 was 1,348.", ERRATUM_PROSE)
    assert claims_backed("Leakage in 2023/24 was 41.7 Ml/d.", ERRATUM_PROSE)
    assert not claims_backed("We received 1,284 written complaints in 2023/24.", ERRATUM_PROSE)
    assert not claims_backed("Leakage in 2023/24 was 38.4 Ml/d.", ERRATUM_PROSE)


def test_a_fiscal_year_is_one_period_and_the_asker_is_no_name():
    found = amounts("In 2023/24 and 2024–25 we billed 48.2 per year.")
    assert [a.number for a in found] == ["2023", "2024", "48.2"]
    assert [a.number for a in amounts("From 2024/12 on")] == ["2024", "12"]  # not the year after
    chunk = "Title: Tariff 2024/25\n\nhousehold.metered.water.standing_charge_per_year: 48.2"
    assert claims_named("The water standing charge under the 2024/25 tariff is 48.2 pounds per year.", chunk)
    assert claims_named("The yearly water standing charge I'm billed is 48.2.", chunk)


PUBLISHED = """ERRATUM

Report:    Q2 2025 Depot Report
Published: 14 July 2025

1. Hull - pallets despatched (section 2 table and section 3 narrative)

   Published:  48,300
   Correct:    43,800

2. Goole - average unload time (section 2 table and
   section 4)

   Published:  41 minutes
   Correct:    47 minutes"""


def test_a_published_and_correct_field_pair_backs_only_the_correct_value():
    """"Published:" is the old side only beside "Correct:"; alone it dates the document. The
    title over the pair keeps its words though its note makes it long or wraps it."""
    assert claims_named("Hull despatched 43,800 pallets.", PUBLISHED)
    assert not claims_backed("Hull despatched 48,300 pallets.", PUBLISHED)
    assert claims_named("The average unload time at Goole was 47 minutes.", PUBLISHED)
    assert not claims_backed("The average unload time at Goole was 41 minutes.", PUBLISHED)
    assert claims_backed("The report was published on 14 July 2025.", PUBLISHED)


QUARTERS = """# Key performance indicators, 2024 by quarter

| KPI | Q1 2024 | Q2 2024 | Q3 2024 | Q4 2024 |
|---|---|---|---|---|
| Revenue (GBP m) | 11.8 | 12.4 | 12.9 | 13.6 |
| Claims ratio (% of revenue) | 0.42 | 0.38 | 0.35 | 0.47 |"""


@pytest.mark.parametrize(("segment", "backed"), [
    ("The claims ratio for Q3 2024 was 0.35% of revenue.", True),  # "(% of revenue)" names the unit
    ("The claims ratio for Q3 2024 was 0.38% of revenue.", False),  # Q2's cell
    ("Revenue in Q2 2024 was GBP 12.4m.", True),
    ("Revenue in Q2 2024 was GBP 12.9m.", False),  # Q3's cell
])
def test_a_cell_under_a_period_column_backs_only_that_period(segment, backed):
    assert claims_backed(segment, QUARTERS) is backed


SAFETY = ("Title: Annual Safety Report 2024\n\n"  # "report" is every place's word: the title's
          "In 2024 we recorded 18 incidents across the Leeds and Rotterdam sites, compared with 24 in "
          "2023.\n\nEmployees and drivers reported 214 near misses during the year, up from 163 in 2023.")
REVENUE = "Kraków F&B revenue was EUR 2.1m. Busan F&B revenue was EUR 1.24m."


@pytest.mark.parametrize(("segment", "backed"), [
    # the sites are where, not what: the sentence naming only them measures incidents
    ("The number of near misses reported at Leeds and Rotterdam in 2024 was 214.", True),
    ("The number of near misses reported at Leeds and Rotterdam in 2024 was 18.", False),
    ("Kraków F&B revenue was EUR 1.24m.", False),  # a name still tells one row from another
    ("Busan F&B revenue was EUR 1.24m.", True),
])
def test_a_place_holding_only_the_sentences_names_measures_another_thing(segment, backed):
    assert claims_backed(segment, SAFETY if "near misses" in segment else REVENUE) is backed


def test_a_code_names_the_row_itself_and_a_title_word_still_names_a_figure():
    """"ENG-2024-022" is the row, not where it is; "audit" of the title names the cell's figure
    as it did before place names were told apart."""
    chunk = ("Title: Internal Quality Audit 2024\n\n| Engagement | Documentation | Peer review |\n"
             "|---|---|---|\n| ENG-2024-014 | 4.2 | 4.5 |\n| ENG-2024-022 | 3.4 | 2.1 |")
    assert claims_named("The documentation score of ENG-2024-022 in the 2024 quality audit was 3.4.", chunk)


ACCESS = """Title: SOP-QA-012 Electronic data review

## 4. Access control

4.1 Every user has an individual account. Shared log-ins are not permitted on GxP systems.

4.2 User accounts are disabled after five consecutive failed login attempts and are re-enabled by
the system administrator only after the user's identity is confirmed."""


def test_the_questions_own_words_said_back_do_not_count_against_the_answer(base_settings):
    """A small model says the colloquial question back ("the number of wrong password tries before
    someone gets locked out ... is five consecutive failed login attempts"): read with its question,
    the sentence is backed by the chunk that states it; without, those words, which no document
    holds, sink it below the threshold. A changed count is not backed either way."""
    from rag.models import build_embedding
    from rag.references import ReferenceMatcher
    from rag.scoring import bi_encoder
    from rag.support import support_scorer
    from rag.text import restated

    question = "How many wrong password tries before someone gets locked out of one of our GxP systems?"
    right = ("The number of wrong password tries before someone gets locked out of one of our GxP systems "
             "is five consecutive failed login attempts.")
    changed = right.replace("five", "three")
    assert restated(right, question) == "The number of is five consecutive failed login attempts."
    scorer = support_scorer(base_settings, bi_encoder(base_settings, build_embedding(base_settings)))
    matcher = ReferenceMatcher.from_settings(base_settings, scorer)
    assert not matcher.match([right], [ACCESS])[0].supported
    assert matcher.match([right], [ACCESS], question=question)[0].supported
    assert not matcher.match([changed], [ACCESS], question=question)[0].supported


def test_a_weekday_is_the_dates_word_not_a_name_of_the_thing():
    """"on Thursday 5 December 2024": the weekday is part of the date (its span), and no name the
    chunk must hold, so a source giving the date without its weekday names the test."""
    assert dates("moved to Thursday 5 December 2024.") == [((2024, 12, 5), 9, 33)]
    chunk = "Castlebrook: the annual load bank test is booked for 5 December 2024 with Voltex."
    assert claims_named("The Castlebrook load bank test is on Thursday 5 December 2024.", chunk)


@pytest.mark.parametrize("segment, backed", [
    ("The medical gas alarms must be tested monthly.", True),
    ("The medical gas alarms must be tested every month.", True),  # "every month" is monthly
    ("The medical gas alarms must be tested quarterly.", False),  # another frequency for the test
    ("6.1 Medical gas alarm systems must be tested monthly.", True),  # the quoted clause's number
])
def test_a_frequency_in_words_is_a_figure_and_a_clause_number_none(segment, backed):
    chunk = ("6.1 Medical gas alarm systems (area and plant alarms) must be tested monthly and the results "
             "recorded in the MGPS logbook.")
    assert claims_backed(segment, chunk) is backed
