"""The second hop of a two-document question (rag/hop.py): what a question asks for and through
what, the bridge in the kept chunks (a table row, a sentence; English and Korean), and, over a
real store of a project register, a staff directory, Korean test records and distractors, the
pipeline's second retrieval: a two-document question retrieves and cites both documents, a
one-document question takes no hop, and with the hop off the second document is never reached."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, ScriptedLLM, fresh_settings
from llama_index.core.schema import NodeWithScore, TextNode

from ingestion.pipeline import ingest
from rag.hop import Hop
from rag.hop_question import asked
from rag.pipeline import RagPipeline

OFFICE_Q = "In which office is the lead of project PRJ-2025-117 based?"
OFFICE_KO = "T-202 시험 책임자의 근무지는 어디입니까?"
REGISTER = """| Project | Client | Budget (EUR k) | Project lead |
|---|---|---|---|
| PRJ-2025-104 | Halvorsen Shipping | 220 | Clara Wendt |
| PRJ-2025-117 | Nordlys Energy | 145 | Tomas Ek |"""
STAFF = """| name | office | grade |
|---|---|---|
| Tomas Ek | Stavanger | Principal engineer |"""
SCHEDULE = """| 시험 번호 | 시험 항목 | 시험 책임자 |
|---|---|---|
| T-201 | 충돌 안전성 | 김서연 |
| T-202 | 배터리 열폭주 | 박지훈 |"""


def chunks(*texts: str) -> list[NodeWithScore]:
    return [NodeWithScore(node=TextNode(text=text, metadata={"doc": f"d{i}"}), score=1.0 - i / 10)
            for i, text in enumerate(texts)]


def test_what_a_question_asks_for_and_through_what():
    assert asked(OFFICE_Q).words == ("office",) and asked(OFFICE_Q).through
    years = asked("How many years of experience does the partner who signed the audit have?")
    assert years.words == ("years",) and years.figure and years.through
    # The thing asked is described directly: no other thing leads to it.
    assert not asked("What is the daily meal allowance under the travel policy?").through
    assert not asked("What is the 2025 day rate for a principal in Hamburg?").through
    # an auxiliary followed by the asker or a thing not described by another: no second thing
    assert not asked("If I need the on-call engineer overnight, what bleep do I use at Ashby?").through
    assert not asked("From what date does the current medical gas policy apply?").through
    korean = asked(OFFICE_KO)
    assert korean.words == ("근무지는",) and korean.through
    assert not asked("T-202 시험의 시험일은 언제입니까?").through  # nothing named as asked
    assert asked("How much does the lead of project PRJ-2025-117 charge?").words == ()
    # "who" and a verb ask for its doer, reached through the thing a relative clause describes
    owner = asked("Who owns the service that went down in the Sev1 outage?")
    assert owner.words == ("owner",) and owner.through
    assert asked("Who manages the office of the lead?").words == ("manager",)
    assert asked("Who is the lead of PRJ-1?").words == () and not asked("Who owns Tidewell?").through


def test_the_bridge_is_a_row_or_a_sentence_that_names_the_entity_but_not_the_fact():
    hop = Hop()
    assert hop.bridge(OFFICE_Q, chunks(REGISTER)).query == "Tomas Ek office"
    signed = "Internal audit 2024.\n\nReport dated 14 November 2024. Signed by Ingrid Valen, Partner."
    question = "How many years of experience does the partner who signed the 2024 audit have?"
    assert hop.bridge(question, chunks(signed)).entity == "Ingrid Valen"
    assert hop.bridge(OFFICE_KO, chunks(SCHEDULE)).entity == "박지훈"
    # The row the question names holds the asked column: one document answers.
    assert hop.bridge("What is the budget of the lead of project PRJ-2025-117?", chunks(REGISTER)) is None
    # The kept chunks already hold the entity beside the asked column: read there, no retrieval
    # (or, `read` off, left to the model).
    assert hop.bridge(OFFICE_Q, chunks(REGISTER, STAFF)).held == 1
    assert Hop(read=False).bridge(OFFICE_Q, chunks(REGISTER, STAFF)) is None
    # A figure leads on from a field named by two words of the question, and is matched as a figure.
    treaty = "cedent: Solvik Mutual\n\nperiod.inception: 2025-01-01\n\nprogramme_top_eur_m: 150"
    model = """| cedent | return_period_years | occurrence_loss_eur_m |
|---|---|---|
| Solvik Mutual | 100 | 112.4 |
| Solvik Mutual | 200 | 150.0 |"""
    question = "What return period does the top of Solvik Mutual's programme correspond to in the model?"
    figure = hop.bridge(question, chunks(treaty, model))
    assert (figure.entity, figure.held) == ("150", 1)
    assert Hop._fact(model, figure) == "return_period_years: 200; occurrence_loss_eur_m: 150.0"
    assert Hop(enabled=False).bridge(OFFICE_Q, chunks(REGISTER)) is None
    # A value's short name in brackets names its row: "the XPS" is the spectrometer's.
    equipment = """| asset_id | description | room | custodian |
|---|---|---|---|
| EQ-0412 | X-ray photoelectron spectrometer (XPS) | E0.02 | Ewan Fraser |
| EQ-0118 | Tensile test frame 50 kN | E1.07 | Ruth Okoye |"""
    xps = hop.bridge("What's the extension of whoever looks after the XPS instrument?", chunks(equipment))
    assert xps is not None and "X-ray photoelectron spectrometer" in xps.line, xps
    # A period the question and a title share is no link to another document.
    erratum = "ERRATUM - Q3 2024 BUSINESS REPORT\n\nTwo figures in that report were wrong."
    assert hop.bridge("What net revenue retention did we post for Q3 2024?", chunks(erratum)) is None


@pytest.fixture(scope="module")
def projects(base_settings, tmp_path_factory):
    """The fixture corpus in a fresh store. Three chunks kept, not five: in a corpus of nine
    one-chunk documents five kept hold half of it, the directory among them by chance; three
    stand for a real corpus, where the first round keeps the register and its like."""
    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("hop"), retrieval={"keep_k": 3})
    report = ingest([FIXTURES / "hop"], settings, progress=False)
    assert report.indexed == 9 and not report.failed
    return settings


def hop_off(settings):
    return settings.model_copy(update={"hop": settings.hop.model_copy(update={"enabled": False})})


def documents(answer) -> set[str]:
    return {source.doc for source in answer.sources}


def test_a_two_document_question_is_answered_and_cited_to_both(projects):
    """The register gives the lead, the directory their office: the answer quotes the lead's row
    of the directory and the register's row, each cited to its document, and no model is asked
    (its script is empty). With `read` off the model is asked instead."""
    llm = ScriptedLLM(replies=[], prompts=[])
    answer = RagPipeline(projects, llm=llm).answer(OFFICE_Q)
    assert answer.hop == "Tomas Ek" and "hop" in answer.timings_ms and not llm.prompts
    assert answer.answer.startswith("name: Tomas Ek; office: Stavanger [1]"), answer.answer
    cited = [ref.doc for segment in answer.segments for ref in segment.references]
    assert cited == ["staff-directory.csv", "project-register.md"], answer.segments
    settings = projects.model_copy(update={"hop": projects.hop.model_copy(update={"read": False})})
    asked_model = ScriptedLLM(replies=["1"] * 3, prompts=[])
    composed = RagPipeline(settings, llm=asked_model).answer(OFFICE_Q)
    assert composed.mode == "composed" and composed.hop == "Tomas Ek" and asked_model.prompts


def test_a_korean_two_document_question_reaches_both_and_hop_off_reaches_one(projects):
    """With the hop the researchers' list joins the test schedule among the sources and gives
    the workplace; with it off (the model's script declines) the list is never kept."""
    answer = RagPipeline(projects, llm=ScriptedLLM(replies=["0"] * 5, prompts=[])).answer(OFFICE_KO)
    assert answer.hop == "박지훈" and "광주" in answer.answer
    assert {"test-schedule-ko.md", "researchers-ko.csv"} <= documents(answer)
    for question, second in ((OFFICE_KO, "researchers-ko.csv"), (OFFICE_Q, "staff-directory.csv")):
        off = RagPipeline(hop_off(projects), llm=ScriptedLLM(replies=["0"] * 5, prompts=[])).answer(question)
        assert off.hop is None and second not in documents(off)


def test_a_one_document_question_takes_no_hop(projects):
    """The register alone answers: no second retrieval, and the check costs less than one."""
    pipeline = RagPipeline(projects, llm=ScriptedLLM(replies=["0"] * 10, prompts=[]))
    for question in ("What is the budget of project PRJ-2025-117?", "Which office does Tomas Ek work in?",
                     "T-202 시험의 시험일은 언제입니까?"):
        answer = pipeline.answer(question)
        assert answer.hop is None, question
        # (a cell answer returns before the hop's check)
        assert answer.timings_ms.get("hop", 0.0) < answer.timings_ms["retrieve"] / 2, answer.timings_ms


CAPEX = """| Code | Project | Property | Lead |
|---|---|---|---|
| CX-01 | Lobby refurbishment | Porto | Rui Matos |
| CX-05 | Conference AV upgrade | Porto | Ana Kowal |"""
DIRECTORY = """| name | property | job_title |
|---|---|---|
| Rui Matos | Head Office | Projects Engineer |
| Ana Kowal | Porto | Conference Sales Manager |"""


def test_where_asks_a_place_the_row_naming_most_leads_and_a_role_is_a_title():
    """"Where is the person leading the Porto lobby refurbishment based?": the register's Property is
    the Porto the question gives, not the asked place, so its Lead bridges to the directory's
    property; of two Porto rows, the one naming the project leads; "role" names job_title."""
    where = "Where is the person leading the Porto lobby refurbishment based?"
    assert asked(where).words == ("where",) and asked(where).through
    assert not asked("Where is the Porto hotel?").through
    bridge = Hop().bridge(where, chunks(CAPEX))
    assert bridge.entity == "Rui Matos"
    assert Hop._fact(DIRECTORY, bridge) == "name: Rui Matos; property: Head Office"
    role = "What role does the lead of the Porto conference AV upgrade hold?"
    bridge = Hop().bridge(role, chunks(CAPEX))
    assert bridge.entity == "Ana Kowal"
    assert Hop._fact(DIRECTORY, bridge) == "name: Ana Kowal; job_title: Conference Sales Manager"
    assert asked("What's the job title of whoever leads the lobby refurbishment?").words == ("job", "title")
    assert not asked("What was Porto's occupancy in Q3 2024?").through  # a possessive, not "is"


INCIDENTS = """| incident_ref | date | vehicle_id | staff_id |
|---|---|---|---|
| INC-24-017 | 2024-11-26 | TRK-0421 | ST-1081 |"""
DRIVERS = """| staff_id | name | site |
|---|---|---|
| ST-1081 | Dean Holt | Leeds |"""
FLEET = """| vehicle_id | registration | fuel |
|---|---|---|
| TRK-0421 | YK21 LRZ | HVO |"""


def test_a_row_naming_no_relation_leads_by_the_code_whose_row_holds_the_fact():
    """"The truck involved in INC-24-017" names no column of the incident's row (vehicle_id): its
    codes are guesses, and the one leading to a row with the asked column ("registration plate"
    names registration whole) is the entity; the staff code, whose row has none, is not."""
    plate = "What's the registration plate of the truck involved in incident INC-24-017?"
    bridge = Hop().bridge(plate, chunks(INCIDENTS))
    assert bridge.guessed == ("TRK-0421", "ST-1081")
    read = Hop().bridge(plate, chunks(INCIDENTS, DRIVERS, FLEET))
    assert (read.entity, read.held) == ("TRK-0421", 2)
    assert Hop._fact(FLEET, read) == "vehicle_id: TRK-0421; registration: YK21 LRZ"


def test_the_sentence_naming_the_thing_reached_through_leads():
    """Of two sentences sharing the question's words, the one naming "our contract manager" (the
    thing the phone number is reached through) gives the entity, not the parties' names."""
    phone = "What's the phone number of our contract manager for the Caledon pump maintenance agreement?"
    assert asked(phone).via == ("contract", "manager")
    contract = ("This agreement is made between Braemoor Water Ltd and Caledon Pump Services Ltd.\n\n"
                "The Customer's contract manager is Iain Ross, Contracts Manager.")
    assert Hop().bridge(phone, chunks(contract)).entity == "Iain Ross"


def test_a_capitalised_function_word_is_no_entity():
    """A heading's underline joined to the next sentence ("Summary ------- In the early hours")
    leaves "In" capitalised mid-line: no name; the freezer's code is the sentence's entity."""
    memo = ("Summary ------- In the early hours of 7 December 2024 the -80 °C freezer GHE-FRZ-01 lost "
            "cooling.")
    bridge = Hop().bridge("Which client samples were lost when the Ghent -80 °C freezer failed in December "
                          "2024?", chunks(memo))
    assert bridge is not None and bridge.entity == "GHE-FRZ-01"


def test_the_row_a_bridge_leads_to_beats_a_row_the_question_seems_to_name():
    """"our contract manager" names the directory's Contracts Manager row, but the contract says
    who the contract manager is: the bridge's row is read, not the look-alike."""
    phone = "What's the phone number of our contract manager for the Caledon pump maintenance agreement?"
    contract = "The Customer's contract manager is Iain Ross, Procurement Lead."
    directory = """| name | job_title | phone |
|---|---|---|
| Gordon Keir | Contracts Manager | 01382 74000 |
| Iain Ross | Procurement Lead | 01463 720190 |"""
    bridge = Hop().bridge(phone, chunks(contract, directory))
    assert (bridge.entity, bridge.held) == ("Iain Ross", 1)
    assert Hop._fact(directory, bridge) == "name: Iain Ross; phone: 01463 720190"


LOG = """| incident_id | location | reported_by | description |
|---|---|---|---|
| INC-24-009 | Wall section 3 | E1012 | Quick hitch failure on excavator EX-07; bucket detached |
| INC-24-013 | Avonmouth - outfall structure | E1040 | Operative trapped fingertip |"""
PEOPLE = """| staff_id | name | job_title | office |
|---|---|---|---|
| E1012 | Owen Tranter | Head of Safety | Bristol |
| E1040 | Lewis Okafor | Site Manager | Bristol |
| E1061 | Priya Shah | Engineer | Bristol |"""


def test_an_earlier_clause_and_a_value_the_question_mostly_names_lead_to_the_fact():
    """"Who logged the fingertip injury ..., and what's their job title": the title is reached
    through the row whose values the question mostly names (no column of it is named: its codes
    are guesses); the fact's row says whom its code names. A code inside a description ("on
    excavator EX-07") is a guess too, after the header's codes; a title is no sentence to bridge."""
    who = "Who logged the fingertip injury at the Avonmouth outfall, and what's their job title?"
    assert asked(who).words == ("job", "title") and asked(who).through
    bridge = Hop().bridge(who, chunks(LOG))
    assert "E1040" in bridge.guessed and "E1012" not in bridge.guessed
    read = Hop().bridge(who, chunks(LOG, PEOPLE))
    assert (read.entity, read.held) == ("E1040", 1)
    assert Hop._fact(PEOPLE, read) == "staff_id: E1040; name: Lewis Okafor; job_title: Site Manager"
    memo = "Subject: Excavator quick hitch failure - Avonmouth (HM-2301), log ref INC-24-009"
    year = "What year was the excavator in the April quick-hitch failure manufactured?"
    assert "EX-07" in [b.entity for b in Hop().bridge(year, chunks(memo, LOG)).tries()]
    # a row the question only mostly names holds the answer in the column its period names: no
    # figure of it leads on
    kpi = """| KPI | Q1 2024/25 | Q2 2024/25 |
|---|---|---|
| P1 bursts attended within target (%) | 95 | 96 |"""
    share = "What share of P1 bursts did we reach within target in Q1 2024/25?"
    assert Hop().bridge(share, chunks(kpi)) is None
    title = "Static Load Testing of Preliminary Piles - Feijenoord Quay Renewal (HM-2307)"
    assert Hop().bridge("What's the email address of the project manager on the Feijenoord quay job?",
                        chunks(title)) is None


BOARD = """| Project | Site | Milestone | Provisional date | Lead |
|---|---|---|---|---|
| SCADA upgrade | GMH | Cutover to new SCADA | 19 May 2025 | Park Soo-yeon |

- Park Soo-yeon will lead the Gimhae SCADA cutover, supported by Daeseong Engineering."""
ROSTER = """| Staff_ID | Name | Role | Site_Code | Start_Dt |
|---|---|---|---|---|
| S021 | Kim Ji-hoon | Plant Manager | GMH | 2018-07-02 |
| S023 | Park Soo-yeon | Process Engineer | GMH | 2020-03-16 |"""


def test_when_asks_the_date_of_the_thing_reached_through_not_of_the_described_row():
    """"When did the person leading the Gimhae (GMH) SCADA cutover join": the cutover's own row has a
    date, which is not asked; the lead's roster row's is, though that row shares the site code."""
    when = "When did the person leading the Gimhae (GMH) SCADA cutover join the company?"
    assert asked(when).words == ("when",) and asked(when).through
    bridge = Hop().bridge(when, chunks(BOARD))
    assert bridge.entity == "Park Soo-yeon" and bridge.held is None
    assert Hop._fact(ROSTER, bridge) == "Name: Park Soo-yeon; Start_Dt: 2020-03-16"
    assert Hop._fact(BOARD, bridge) is None


def test_a_name_no_candidate_holds_is_fetched_by_itself_before_a_premise_refusal(base_settings,
                                                                                  tmp_path_factory):
    """The fuel table is the one candidate the question's words retrieve; the depot manager's name
    is only in the contacts note, fetched by the name alone, which then leads the evidence: not
    "the documents say nothing about Tomasz Wielgus". A name no document holds is still refused."""
    folder = tmp_path_factory.mktemp("anchor-docs")
    (folder / "fuel_energy_2023.md").write_text(
        "# Fuel and energy 2023\n\nDiesel used by each depot in 2023, in litres, from fuel card records.\n\n"
        "| Depot | Diesel (L) | Electricity (kWh) |\n|---|---|---|\n| Leeds Depot | 1,197,010 | 2,480,000 |\n"
        "| Glasgow Eurocentral | 1,008,320 | 2,110,500 |\n", encoding="utf-8")
    (folder / "depot_contacts.txt").write_text(
        "Depot management contacts\n\nLeeds Depot - Depot Manager: Tomasz Wielgus - ext. 4101\n"
        "Glasgow Eurocentral - Depot Manager: Morag Henderson - ext. 4501\n", encoding="utf-8")
    (folder / "yard_rules.md").write_text(
        "# Yard rules\n\nThe yard speed limit is 15 km/h; forklifts keep to 8 km/h inside buildings.\n",
        encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("anchor"), retrieval={"keep_k": 2})
    assert ingest([folder], settings, progress=False).indexed == 3
    llm = ScriptedLLM(replies=["Tomasz Wielgus manages Leeds Depot [1]."] * 4, prompts=[])
    pipeline = RagPipeline(settings, llm=llm)
    question = "How much diesel in litres did the depot of Tomasz Wielgus use in 2023 by fuel card records?"
    answer = pipeline.answer(question, retrieve_k=1)
    assert answer.refused_by != "premise" and answer.sources[0].doc == "depot_contacts.txt", answer.answer
    absent = pipeline.answer(question.replace("Tomasz Wielgus", "Ingrid Solberg"), retrieve_k=1)
    assert absent.refused_by == "premise" and "Ingrid Solberg" in absent.answer
