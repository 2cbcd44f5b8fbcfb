"""Question rewriting before retrieval, with scripted LLM replies (the real model's rewrites are
exercised by the chat and cross-language answer tests)."""

from __future__ import annotations

from conftest import ScriptedLLM

from rag.rewrite import QuestionRewriter, corpus_language, first_line


def rewriter(*replies: str) -> QuestionRewriter:
    return QuestionRewriter(ScriptedLLM(replies=list(replies), prompts=[]), "{history} / {question}", "{language}: {question}")


def test_the_corpus_language_is_the_script_most_chunks_are_written_in():
    assert corpus_language(["데비안은 자유 운영 체제입니다.", "패키지는 apt 로 설치합니다.", "The FAQ."]) == "Korean"
    assert corpus_language(["The FAQ.", "Install it with apt-get.", "데비안"]) == "English"
    assert corpus_language([]) is None


def test_a_translation_in_the_wrong_script_or_an_echo_is_not_used():
    assert rewriter("Korean: 펌프 P-20은 몇 시간 작동했나요?").translate("How long did P-20 run?", "Korean") == "펌프 P-20은 몇 시간 작동했나요?"
    assert rewriter("How long did P-20 run?").translate("How long did P-20 run?", "Korean") is None  # echoed
    assert rewriter("").translate("How long did P-20 run?", "Korean") is None
    # An answer instead of a translation is kept: it holds the question's words in the corpus's language.
    assert rewriter("데비안 프로젝트는 1993년에 시작되었습니다.").translate("When was Debian started?", "Korean") == \
        "데비안 프로젝트는 1993년에 시작되었습니다."
    # A Korean question about a file may hold more Latin letters than syllables.
    assert rewriter("/etc/kbd/config 파일은 무엇인가요?").translate("What is /etc/kbd/config?", "Korean") == \
        "/etc/kbd/config 파일은 무엇인가요?"
    # Only the first line: the model may go on with another example.
    assert rewriter("펌프 P-20은 몇 시간 작동했나요?\nQuestion: and P-30?").translate("How long did P-20 run?", "Korean") == \
        "펌프 P-20은 몇 시간 작동했나요?"


def test_a_follow_up_is_rewritten_only_with_history():
    llm = rewriter("Standalone question: What HIC15 did the passenger reach in A-12?")
    assert llm.standalone("And the passenger?", []) == "And the passenger?"
    assert llm.llm.prompts == []  # no history: no LLM call
    assert llm.standalone("And the passenger?", [("What HIC15 did the driver reach in A-12?", "300 [1].")]) == \
        "What HIC15 did the passenger reach in A-12?"
    assert first_line('\n  "Translation: 질문?"  \nmore') == "질문?"


def test_a_rewrite_that_names_a_code_from_the_prompts_examples_is_not_used():
    history = [("What is the purpose of test SI-2024-03?", "It checks the B-pillar [1].")]
    leaking = rewriter("Which dummy sat in the driver seat in the test A-12?")
    assert leaking.standalone("Which dummy sat in the driver seat in that test?", history) == \
        "What is the purpose of test SI-2024-03? Which dummy sat in the driver seat in that test?"
    assert rewriter("Which dummy sat in the driver seat in SI-2024-03?").standalone(
        "Which dummy sat in the driver seat in that test?", history) == "Which dummy sat in the driver seat in SI-2024-03?"
