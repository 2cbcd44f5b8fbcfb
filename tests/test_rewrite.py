"""Question rewriting before retrieval, with scripted LLM replies (the real model's rewrites are
exercised by the chat and cross-language answer tests)."""

from __future__ import annotations

from conftest import ScriptedLLM

from rag.rewrite import QuestionRewriter, document_languages, document_shares, first_line, translation_target


def rewriter(*replies: str) -> QuestionRewriter:
    return QuestionRewriter(ScriptedLLM(replies=list(replies), prompts=[]), "{history} / {question}",
                            "{language}: {question}")


def test_a_question_is_translated_only_when_the_corpus_lacks_its_language():
    """Counted by documents: a Korean manual whose chunks list English commands is Korean, and a
    corpus with a quarter of its documents in Korean is not translated into for Korean questions."""
    manual = [("faq-ko.html", "데비안은 자유 운영 체제입니다."),
              ("faq-ko.html", "Run apt-get install foo --yes now."),
              ("faq-ko.html", "패키지는 apt 로 설치합니다.")]
    assert document_languages(manual) == {"faq-ko.html": "Korean"}
    assert document_shares(document_languages(manual)) == {"Korean": 1.0, "English": 0.0}
    assert translation_target("How do I install a package?", document_shares(document_languages(manual))) \
        == "Korean"
    mixed = [(f"report-{i}.md", "The sled test passed.") for i in range(3)] + [("summary-ko.txt",
                                                                                 "시험은 통과했다.")]
    assert document_shares(document_languages(mixed)) == {"Korean": 0.25, "English": 0.75}
    # 1 of 4 documents is enough
    assert translation_target("시험은 통과했나요?", document_shares(document_languages(mixed))) is None
    english = [(f"report-{i}.md", "The sled test passed.") for i in range(9)] + [("summary-ko.txt",
                                                                                   "시험은 통과했다.")]
    shares = document_shares(document_languages(english))
    assert translation_target("시험은 통과했나요?", shares) == "English"
    assert translation_target("Did it pass?", shares) is None
    assert translation_target("Did it pass?", document_shares({})) is None


def test_a_translation_in_the_wrong_script_or_an_echo_is_not_used():
    assert rewriter("Korean: 펌프 P-20은 몇 시간 작동했나요?").translate(
        "How long did P-20 run?", "Korean") == "펌프 P-20은 몇 시간 작동했나요?"
    assert rewriter("How long did P-20 run?").translate("How long did P-20 run?", "Korean") is None  # echoed
    assert rewriter("").translate("How long did P-20 run?", "Korean") is None
    # An answer instead of a translation is kept: it holds the question's words in the corpus's language.
    assert rewriter("데비안 프로젝트는 1993년에 시작되었습니다.").translate(
        "When was Debian started?", "Korean") == "데비안 프로젝트는 1993년에 시작되었습니다."
    # A Korean question about a file may hold more Latin letters than syllables.
    assert rewriter("/etc/kbd/config 파일은 무엇인가요?").translate("What is /etc/kbd/config?", "Korean") == \
        "/etc/kbd/config 파일은 무엇인가요?"
    # Only the first line: the model may go on with another example.
    assert rewriter("펌프 P-20은 몇 시간 작동했나요?\nQuestion: and P-30?").translate(
        "How long did P-20 run?", "Korean") == "펌프 P-20은 몇 시간 작동했나요?"


def test_a_follow_up_is_rewritten_only_with_history():
    llm = rewriter("Standalone question: What HIC15 did the passenger reach in A-12?")
    assert llm.standalone("And the passenger?", []) == "And the passenger?"
    assert llm.llm.prompts == []  # no history: no LLM call
    assert llm.standalone("And the passenger?",
                          [("What HIC15 did the driver reach in A-12?", "300 [1].")]) == \
        "What HIC15 did the passenger reach in A-12?"
    assert first_line('\n  "Translation: 질문?"  \nmore') == "질문?"


def test_a_rewrite_that_names_a_code_from_the_prompts_examples_is_not_used():
    history = [("What is the purpose of test SI-2024-03?", "It checks the B-pillar [1].")]
    leaking = rewriter("Which dummy sat in the driver seat in the test A-12?")
    assert leaking.standalone("Which dummy sat in the driver seat in that test?", history) == \
        "What is the purpose of test SI-2024-03? Which dummy sat in the driver seat in that test?"
    assert rewriter("Which dummy sat in the driver seat in SI-2024-03?").standalone(
        "Which dummy sat in the driver seat in that test?", history) == \
        "Which dummy sat in the driver seat in SI-2024-03?"


def test_history_is_fitted_into_the_rewriting_window_newest_turns_first():
    """An over-long turn (a refused pasted document) is left out, and the oldest turns go first
    when the window is full: the rewriting LLM is never asked for more than its window."""
    pasted = "Summarise this log: " + "error 42 at step 7; " * 2000
    history = [("What did test A-11 measure?", "Its HIC15 [1]."), ("What HIC15 did A-12 reach?", "300 [1]."),
               (pasted, "I cannot answer this from the documents.")]
    short = QuestionRewriter(ScriptedLLM(replies=["What HIC15 did the passenger reach in A-12?"], prompts=[]),
                             "{history} / {question}", "{language}: {question}", 3, len, 120)
    assert short.standalone("And the passenger?", history) == "What HIC15 did the passenger reach in A-12?"
    (prompt,) = short.llm.prompts
    assert len(prompt) <= 120 and "A-12" in prompt and "A-11" not in prompt and "error 42" not in prompt
    # Nothing fits: the question is used as asked, without an LLM call.
    none = QuestionRewriter(ScriptedLLM(replies=[], prompts=[]), "{history} / {question}",
                            "{language}: {question}", 3, len, 30)
    assert none.standalone("And the passenger?", history) == "And the passenger?" and none.llm.prompts == []
    assert (none.translate("운전석 더미의 HIC15는 A-12 시험에서 얼마였나요?", "English") is None
            and none.llm.prompts == [])
