"""The premise check (rag/premise.py) on real sentences (not the sample corpus's): each kind of
false premise (antonym, swapped year, swapped code or name), in English and Korean, is refused
while its correctly premised twin holds; paraphrases and cross-language questions hold."""

from __future__ import annotations

import pytest

from llama_index.core.schema import QueryBundle

from rag.postprocessors import best_ranked
from rag.premise import PremiseCheck
from rag.settings import PremiseSettings, Settings

# Contexts as the pipeline shows them: a label line per chunk, then its units.
GEOLOGY = [
    "[1] precambrian-rocks.md: Acasta gneiss (Title: Precambrian rocks)\n"
    "The Acasta gneiss, in the Slave craton of northwestern Canada, is the oldest known rock to have "
    "metamorphosed, at about 4.03 billion years.\n"
    "It was dated in 1999 by uranium-lead dating of zircon grains.",
]
CLAIMS = [
    "[1] claims-review-2023.docx: Findings (Title: Claims review 2023; Branch: Busan)\n"
    "The review of the Busan branch listed three open claims: CL-2023-014, CL-2023-017 and CL-2023-020.\n"
    "Open claims decreased from 12 at the end of 2022 to 3 at the end of 2023.\n"
    "The retention stays at EUR 30m per event; Ingrid Solberg signs off every claim above EUR 250,000.",
    "[2] claims-register.csv (Title: claims-register)\n"
    "claim: CL-2023-014; status: Open; reserve_eur: 84,000; opened: 2023-05-11",
]
BRANCH_KO = [
    "[1] seoul-notes-ko.txt (Title: 서울 지점 메모)\n"
    "2024년 3월 회의에서 서울 지점의 보험료는 5% 인상되었다.\n"
    "가장 오래된 계약은 2019년에 체결되었고 계약 번호는 KR-2019-003이다.",
]

POLICY = [
    "[1] expenses-policy-v2.md: 5. Travel (Title: Expenses policy version 2)\n"
    "Version 2 raises the hotel caps in London and Leeds.\n"
    "The receipt threshold and the mileage rate are unchanged: 45p per mile.",
]

AUDIT = ["[1] kitchen-audits-q3.pdf: Results (Title: Kitchen audits Q3 2024)\n"
         "1. Site: Carlton; Audit date: 12 Aug 2024; Overall: 95.0; Result: Pass\n"
         "2. Site: Dunmore; Audit date: 20 Aug 2024; Overall: 71.2; Result: Fail"]
FALSE_PREMISES = [  # (kind, question, evidence, words the refusal names)
    ("antonym", "What is the youngest known rock to have metamorphosed?", GEOLOGY, ["oldest", "youngest"]),
    ("antonym", "By how much did open claims increase in 2023?", CLAIMS, ["decreased"]),
    ("year", "When was the Acasta gneiss dated in 2005?", GEOLOGY, ["2005"]),
    ("year", "How many open claims did the 2021 review of the Busan branch list?", CLAIMS, ["2021"]),
    ("code", "What reserve does claim CL-2023-015 carry?", CLAIMS, ["CL-2023-015"]),
    ("name", "Who signs off claims of the Bergen branch above EUR 250,000?", CLAIMS, ["Bergen"]),
    ("figure", "Why is the retention EUR 300m per event?", CLAIMS, ["300"]),
    ("antonym-ko", "서울 지점의 보험료는 얼마나 인하되었나요?", BRANCH_KO, ["인상", "인하"]),
    ("antonym-ko", "가장 최근 계약은 언제 체결되었나요?", BRANCH_KO, ["가장 오래된", "가장 최근"]),
    ("year-ko", "2022년 회의에서 서울 지점의 보험료는 얼마나 올랐나요?", BRANCH_KO, ["2022"]),
    ("code-ko", "계약 번호 KR-2019-004는 언제 체결되었나요?", BRANCH_KO, ["KR-2019-004"]),
    ("antonym", "Version 2 cut the mileage rate. What is the reduced rate per mile now?", POLICY,
     ["unchanged"]),
    ("antonym", "Why did Carlton fail its Q3 2024 kitchen audit?", AUDIT, ["pass", "fail"]),  # a result cell
]
TWINS = [
    "What is the oldest known rock to have metamorphosed?",
    "By how much did open claims decrease in 2023?",
    "When was the Acasta gneiss dated?",
    "How many open claims did the 2023 review of the Busan branch list?",
    "What reserve does claim CL-2023-014 carry?",
    "Who signs off claims of the Busan branch above EUR 250,000?",
    "Why is the retention EUR 30m per event?",
    "서울 지점의 보험료는 얼마나 인상되었나요?",
    "가장 오래된 계약은 언제 체결되었나요?",
    "2024년 회의에서 서울 지점의 보험료는 얼마나 올랐나요?",
    "계약 번호 KR-2019-003은 언제 체결되었나요?",
    "Version 2 raised the hotel caps. What is the new cap in London?",
    "Why did Carlton pass its Q3 2024 kitchen audit?",
]
PARAPHRASES = [  # answerable, worded otherwise than the evidence
    ("Which rock is the most ancient one known to have been metamorphosed?", GEOLOGY),
    ("How old is the earliest metamorphosed rock that has been found?", GEOLOGY),
    ("Where in Canada is the Acasta gneiss found?", GEOLOGY),
    ("How far did the number of open claims fall over 2023?", CLAIMS),
    ("Which claims were still open after the review?", CLAIMS),
    ("Who has to approve the largest claims?", CLAIMS),
    ("Did open claims rise in 2023?", CLAIMS),  # asks, does not presume
    ("Are claims above EUR 100,000 signed off by someone?", CLAIMS),
    ("What was the retention per event last year?", CLAIMS),
    ("When was CL-2023-014 opened, in May?", CLAIMS),
    ("보험료 인상률은 몇 퍼센트였나요?", BRANCH_KO),
    ("제일 먼저 맺은 계약은 몇 년도에 체결됐나요?", BRANCH_KO),
]
CROSS_LANGUAGE = [  # the other script: only codes, figures and a Korean question's Latin names count
    ("Acasta gneiss는 몇 년에 연대가 측정되었나요?", GEOLOGY),
    ("가장 최근에 열린 CL-2023-014 청구는 언제 열렸나요?", CLAIMS),
    ("How much did the Seoul branch raise its premium in the March 2024 meeting?", BRANCH_KO),
    ("When was the newest contract, KR-2019-003, signed?", BRANCH_KO),
]


OFFICES = [
    "[1] partner-review.pptx, slide 2: Office figures (Title: Partner review)\n"
    "Office: Lyon; Headcount: 16; Utilisation: 78%; Revenue (EUR thousand): 2,940\n"
    "Office: Porto; Headcount: 12; Utilisation: 71%; Revenue (EUR thousand): 2,115\n"
    "Office: Turku; Headcount: 9; Utilisation: 74%; Revenue (EUR thousand): 1,380",
    "[2] offices-ko.md (Title: 사무소 현황)\n"
    "| 사무소 | 인원 | 가동률 |\n|---|---|---|\n| 부산 | 14 | 71% |\n| 대구 | 8 | 77% |",
]


@pytest.fixture(scope="module")
def check() -> PremiseCheck:
    return PremiseCheck.from_settings(Settings())


@pytest.mark.parametrize(("kind", "question", "evidence", "named"), FALSE_PREMISES,
                         ids=[f"{kind}-{i}" for i, (kind, *_rest) in enumerate(FALSE_PREMISES)])
def test_false_premise_refused_and_named(check, kind, question, evidence, named):
    verdict = check.check(question, evidence)
    assert not verdict.holds and verdict.status == ("contradicted" if "antonym" in kind else "absent")
    assert all(word in verdict.message for word in named), verdict.message
    if verdict.status == "contradicted":  # it rests on the sentence that says the opposite
        assert verdict.evidence and verdict.evidence in "\n".join(evidence)


@pytest.mark.parametrize(("question", "false"), zip(TWINS, FALSE_PREMISES),
                         ids=[f[0] for f in FALSE_PREMISES])
def test_correctly_premised_twin_holds(check, question, false):
    verdict = check.check(question, false[2])
    assert verdict.holds and verdict.status == "stated", verdict.message


@pytest.mark.parametrize(("question", "evidence"), PARAPHRASES + CROSS_LANGUAGE)
def test_paraphrase_and_cross_language_hold(check, question, evidence):
    verdict = check.check(question, evidence)
    assert verdict.holds, verdict.message


@pytest.mark.parametrize(("question", "top"), [
    ("Why did Porto have the highest utilisation of all offices?", "Lyon"),
    ("Why does Porto have the lowest revenue?", "Turku"),
    ("부산 사무소의 가동률이 가장 높은 이유는 무엇인가요?", "대구"),
])
def test_a_row_outranked_in_its_column_is_contradicted(check, question, top):
    verdict = check.check(question, OFFICES)
    assert verdict.status == "contradicted" and top in verdict.message and top in verdict.evidence


@pytest.mark.parametrize("question", [
    "Why did Lyon have the highest utilisation of all offices?",
    "Why does Turku have the lowest revenue?",
    "Which office had the highest utilisation?",
    "Which office had the lowest headcount?",
    "대구 사무소의 가동률이 가장 높은 이유는 무엇인가요?",
])
def test_the_top_row_or_an_open_question_holds(check, question):
    assert check.check(question, OFFICES).holds


def test_units_numbered_for_the_model_to_pick_read_the_same(check):
    """Where the model picks units (rag/compose.py) each is numbered under its chunk's label."""
    numbered = ["From partner-review.pptx, slide 2: Office figures (Title: Partner review)\n"
                + "\n".join(f"{i}. {row}" for i, row in enumerate(OFFICES[0].splitlines()[1:], start=4)),
                "From precambrian-rocks.md (Title: Precambrian rocks)\n7. " + GEOLOGY[0].splitlines()[1]]
    assert "Lyon" in check.check("Why did Porto have the highest utilisation?", numbered).message
    assert "oldest" in check.check("What is the youngest known rock to have metamorphosed?", numbered).message
    assert check.check("Why did Lyon have the highest utilisation of all offices?", numbered).holds


def test_across_scripts_a_code_still_counts(check):
    assert check.check("CL-2023-099 청구의 준비금은 얼마인가요?", CLAIMS).status == "absent"
    assert check.check("What is contract KR-2019-007 about?", BRANCH_KO).status == "absent"


def test_messages_in_the_question_language(check):
    assert check.check("What is the youngest known rock to have metamorphosed?", GEOLOGY).message == (
        "The documents give the oldest known rock, not the youngest.")
    assert check.check("2021년 감사에서 미결 청구는 몇 건이었나요?", CLAIMS).message == (
        "문서에는 2021에 대한 내용이 없습니다.")
    assert check.check("가장 최근 계약은 언제 체결되었나요?", BRANCH_KO).message == (
        "문서에는 가장 최근 계약이 아니라 가장 오래된 계약에 대한 내용이 있습니다.")


def test_switched_off_by_settings():
    """`[premise] enabled = false` lets every false premise through; each rule alone too."""
    off = PremiseCheck.from_settings(Settings(premise=PremiseSettings(enabled=False)))
    assert all(off.check(question, evidence).holds for _kind, question, evidence, _named in FALSE_PREMISES)
    no_entities = PremiseCheck.from_settings(Settings(premise=PremiseSettings(entities=False)))
    assert no_entities.check("What reserve does claim CL-2023-015 carry?", CLAIMS).holds
    assert not no_entities.check("What is the youngest known rock to have metamorphosed?", GEOLOGY).holds
    no_qualifiers = PremiseCheck.from_settings(Settings(premise=PremiseSettings(qualifiers=False)))
    assert no_qualifiers.check("What is the youngest known rock to have metamorphosed?", GEOLOGY).holds
    assert not no_qualifiers.check("What reserve does claim CL-2023-015 carry?", CLAIMS).holds


def test_no_evidence_is_no_verdict(check):
    """Without evidence the retrieval gate refuses; the premise check has nothing to judge."""
    assert check.check("What is the youngest rock?", []).holds


@pytest.mark.parametrize(("question", "status"), [
    ("What peak cell temperature was reached in the nail penetration test of the Orion pack?", "stated"),
    ("What peak cell temperature was reached in the nail penetration test of the Vega pack?", "absent"),
    ("What peak cell temperature did test BP-13 record in the nail penetration?", "absent"),
    ("Why did the Orion pack fail the nail penetration test?", "contradicted"),
    ("Orion 배터리 팩의 못 관통 시험에서 셀 온도는 최고 몇 도였나요?", "stated"),
])
def test_on_the_context_the_pipeline_builds(pipeline, check, question, status):
    """Real retrieval, rerank and context over a store on disk, as RagPipeline.answer builds
    them before the model is asked."""
    ranked, _ = best_ranked(pipeline.reranker, pipeline.current_retriever().retrieve(QueryBundle(question)),
                            [question])
    context, _ = pipeline.context.build(question, ranked, pipeline.budget(pipeline.room(question)))
    assert check.check(question, [context]).status == status


def test_a_pasted_link_address_holds_no_premise():
    """A link's host and port are no figures the question takes for granted; a year is."""
    check = PremiseCheck.from_settings(Settings())
    evidence = ["The supplier portal moved to a new address on 3 March 2025."]
    pasted = "When did the supplier portal move? ![me](http://127.0.0.1:41234/b.png?who=me)"
    assert check.check(pasted, evidence).holds
    assert not check.check("When did the supplier portal move in 2023?", evidence).holds


def test_an_acronym_is_held_written_or_spelled_out():
    """A short all-capital name (USB, MFA, CEO) holds when the evidence writes it or spells it out
    by its initials; a currency code is no name."""
    check = PremiseCheck.from_settings(Settings())
    policy = ["IT Security Policy. Multi-factor authentication is required for email. The chief "
              "executive officer approves exceptions. Fees are charged in EUR."]
    verdict = check.check("What does the IT security policy say about personal USB drives?", policy)
    assert not verdict.holds and verdict.status == "absent" and "USB" in verdict.message
    assert check.check("What does the IT security policy say about MFA?", policy).holds
    assert check.check("Who approves exceptions, the CEO?", policy).holds
    assert check.check("Are the fees charged in USD or EUR?", policy).holds


def test_an_answer_qualifier_the_chunk_states_the_opposite_of_is_contradicted():
    check = PremiseCheck.from_settings(Settings())
    rock = "The Acasta gneiss is the oldest known rock to have been metamorphosed."
    assert check.contradicts("The youngest rock to be metamorphosed is the Acasta gneiss.", rock)
    assert not check.contradicts("The oldest rock to be metamorphosed is the Acasta gneiss.", rock)
    assert not check.contradicts("The Acasta gneiss was metamorphosed.", rock)


def test_a_name_that_only_sets_the_scene_is_no_premise(check):
    """"A customer in Graz" is the asker's circumstance; the asked sentence's own names still
    count."""
    evidence = ["## 4. Use of private cars\n\nEmployees who use their own car for a business trip receive a "
                "mileage allowance of EUR 0.42 per kilometre."]
    scene = "I'm taking my own car to visit a customer in Graz next week. What will I be paid back per km?"
    assert check.check(scene, evidence).holds
    asked = check.check("I'm driving next week. What is paid per km for a trip to Graz?", evidence)
    assert not asked.holds and asked.status == "absent" and "Graz" in asked.message


ASSETS = ("| asset_id | description | plant | commissioned |\n|---|---|---|---|\n"
          "| PMP-188 | Hydraulic test bench 400 bar | Brno | 2023-11-02 |\n"
          "| PMP-010 | Hydraulic test bench 250 bar | Linz | 2022-01-10 |\n"
          "| PMP-044 | Centrifugal pump | Linz | 2021-03-01 |")


@pytest.mark.parametrize(("question", "holds"), [
    ("When was the 400 bar hydraulic test bench at the Linz plant commissioned?", False),  # it is Brno's
    ("When was the 400 bar hydraulic test bench at the Brno plant commissioned?", True),
    ("When was the 400 bar hydraulic test bench commissioned?", True),
    ("Is the 400 bar hydraulic test bench at Linz?", True),  # a yes/no question: "no" answers it
    ("When was the Linz centrifugal pump commissioned?", True),
])
def test_a_row_the_question_gives_another_rows_value_is_contradicted(check, question, holds):
    verdict = check.check(question, [ASSETS])
    assert verdict.holds is holds, verdict.message
    if not holds:
        assert verdict.status == "contradicted" and verdict.message == (
            "The documents give Brno as the plant of Hydraulic test bench 400 bar, not Linz.")


TRAVEL = [
    "[1] travel-expenses-policy.docx: Mileage and taxis (Title: Travel and expenses policy)\n"
    "If you use your own car on company business, mileage is paid at EUR 0.36 per km.\n"
    "Taxis and ride-hailing are reimbursed when public transport is not practical.\n"
    "The daily allowance covers meals: EUR 45 per day in Europe.",
]


@pytest.mark.parametrize(("question", "holds"), [
    # the policy speaks of a car only as your own: a rental car is a kind it does not cover
    ("What's the daily limit for a rental car on a business trip?", False),
    ("What mileage is paid when I use my own car?", True),
    ("How much is paid per km if I drive my car for work?", True),  # no other kind named
    ("What is the largest daily allowance in Europe?", True),  # a superlative is no kind
    ("How often do I have to renew mileage claims?", True),  # a verb after "to" is no kind
    # the asker's own circumstance set before the asked clause is no premise of it
    ("I've just started driving a rental car for a client - how much is paid per km?", True),
    ("For a rental car, how much is paid per km?", False),  # a condition the question asks under
])
def test_a_kind_the_evidence_never_qualifies_its_noun_with_is_absent(check, question, holds):
    verdict = check.check(question, TRAVEL)
    assert verdict.holds is holds, verdict
    if not holds:
        assert verdict.message == "The documents say nothing about rental car."


def test_a_short_form_of_an_evidence_word_names_no_other_kind(check):
    """"inter-lab comparison" is the report's inter-laboratory comparison, not another kind."""
    report = ["[1] interlab-report.md: Results (Title: Inter-laboratory comparison report IL-2024-02)\n"
              "In the inter-laboratory comparison, Ghent's assay z-score was 1.4."]
    question = "What assay z-score did Ghent get in the IL-2024-02 inter-lab comparison?"
    assert check.check(question, report).holds
    # an abbreviation: "the ops committee" is the minutes' Operations Committee; "the audit
    # committee" is still a kind they do not cover
    minutes = ["[1] minutes-2024-10.md: Next meeting (Title: Operations Committee minutes, October 2024)\n"
               "The next meeting of the operations committee is on 21 November 2024 at 10:00."]
    assert check.check("When's the next ops committee meeting after the October one?", minutes).holds
    verdict = check.check("When's the next audit committee meeting after the October one?", minutes)
    assert not verdict.holds and verdict.status == "absent"


def test_before_a_clause_is_a_time_conjunction_not_a_premise(check):
    """"before waiting charges start" is no claim that they start before anything: the evidence
    saying they are charged after the free time is the same fact."""
    rates = ["[1] rate-card.json: waiting (Title: rate-card)\n"
             "Waiting is charged at GBP 52 per hour after 90 minutes of free waiting."]
    assert check.check("How much free waiting time is there before waiting charges start?", rates).holds
    assert not check.check("What was charged per hour before the free waiting?", rates).holds


def test_before_or_after_relates_the_thing_it_follows(check):
    """"the re-inspection after the Q3 audit" relates the re-inspection to the audit: a sentence of
    a fridge logged warm before the audit says nothing of it; one that puts the re-inspection
    before the audit contradicts it."""
    findings = ["[1] food-audit-q3.pdf: Key findings (Title: Food safety audit Q3 2024)\n"
                "At Carlton the walk-in fridge was logged above 8 C on three mornings before the audit.\n"
                "A re-inspection of Carlton is set for 18 November 2024."]
    assert check.check("When was Carlton's re-inspection after the Q3 audit held?", findings).holds
    earlier = ["[1] food-audit-q3.pdf: Key findings (Title: Food safety audit Q3 2024)\n"
               "At Carlton a re-inspection was held before the audit, on 2 August 2024."]
    assert not check.check("When was Carlton's re-inspection after the Q3 audit held?", earlier).holds


def test_function_words_name_no_kind(check):
    """"how long after first contact": "after" follows a figure in the evidence, but "long after"
    is no kind of thing."""
    crash = ["[1] FT-2024-07.pptx: Restraints (Title: FT-2024-07)\n"
             "The driver airbag deployed 14 ms after first contact."]
    assert check.check("How long after first contact did the driver airbag deploy?", crash).holds


def test_a_preposition_names_no_kind(check):
    """"charge per month": "per" is no noun, whatever words stand before it in the evidence."""
    prices = ["[1] price-book.json: add_ons (Title: price-book)\n"
              "add_ons.premium_support.price_per_month: 900\nadd_ons.extra_api_calls.price_per_block: 75"]
    assert check.check("What do we charge per month for an extra block of API calls?", prices).holds


def test_a_noun_the_evidence_also_gives_unqualified_names_no_other_kind(check):
    """Where the evidence also speaks of "the car" as such, a rental car may be one of them."""
    plain = [TRAVEL[0] + "\nThe car must be returned with a full tank."]
    assert check.check("What's the daily limit for a rental car on a business trip?", plain).holds


def test_a_noun_heading_a_table_column_names_no_other_kind(check):
    """A directory's "Extension" column stands after the previous header, "Name": no kind of
    extension, so a "phone extension" is one the directory gives."""
    directory = ["[1] staff-directory.csv (Title: staff-directory)\n"
                 "| Staff ID | Name | Extension | Email |\n|---|---|---|---|\n"
                 "| S010 | Priya Raman | 4122 | priya.raman@kvi.example |"]
    assert check.check("What's Priya Raman's phone extension?", directory).holds


@pytest.mark.parametrize(("question", "holds"), [
    ("How many new customers did we sign between July and September 2024?", True),  # Q3
    ("How many new customers did we sign in August 2024?", True),
    ("How many new customers did we sign in December 2024?", False),  # Q4: not what the report covers
])
def test_a_month_is_held_by_its_quarter(check, question, holds):
    report = ["[1] q3-report.md: Customers (Title: Q3 2024 Business Report)\n"
              "We signed 31 new customers in Q3 2024 and closed the quarter with 412 active customers."]
    verdict = check.check(question, report)
    assert verdict.holds is holds, verdict


def test_the_asker_and_a_possessive_name_nothing(check):
    """"If I'm driving ...": "I'm" is no name; "our pump agreement": "our" is no kind of pump."""
    fleet = ["[1] fleet-policy.md: Speed (Title: Fleet policy)\n"
             "Company vans are limited to 60 mph on motorways."]
    assert check.check("If I'm driving one of the company vans on the motorway, what's the top speed?",
                       fleet).holds
    contract = ["[1] contract.docx: Liability (Title: Maintenance agreement)\nCaledon's total liability "
                "under the maintenance agreement for booster pumps is capped at GBP 2 million."]
    assert check.check("What's the cap on Caledon's liability under our pump maintenance agreement?",
                       contract).holds


def test_a_time_limit_asked_before_an_event_presumes_nothing(check):
    """"The cut-off ... before the year-end" asks a date; the policy's "after this date" is no
    contradiction of it."""
    policy = ["[1] finance-memo.md: Year-end (Title: Year-end close 2024/25)\n"
              "Purchase orders for goods must be raised by 27 June 2025. Orders for goods raised after "
              "this date are processed in the new financial year."]
    assert check.check("What's the cut-off for raising purchase orders for goods before the year-end?",
                       policy).holds


def test_a_change_the_memo_says_did_not_happen_is_contradicted_before_an_absent_month(check):
    """"Why was the launch event pushed back to February?" where the memo's table says the launch
    date is unchanged: the contradiction is the verdict, though February is in no evidence."""
    memo = ["[1] timeline-memo.md: Revised dates (Title: Aerolith timeline revision)\n"
            "| Milestone | Previous date | Revised date |\n|---|---|---|\n"
            "| Incorporation | 2 December 2024 | 13 January 2025 |\n"
            "| Public launch event | 15 January 2025 | 15 January 2025 (unchanged) |"]
    verdict = check.check("Why was the Aerolith launch event pushed back to February?", memo)
    assert verdict.status == "contradicted" and "unchanged" in verdict.message, verdict


def test_an_acronyms_plural_is_the_acronym(check):
    fees = ["[1] fee-schedule.json (Title: Licence fee schedule)\ndiscounts.sme.discount_pct: 20"]
    assert check.check("How big a discount do SMEs get off our standard fees?", fees).holds
