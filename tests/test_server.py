"""The UI's defences that need no running server: text-only rendering of documents and
questions, the login throttle, password length, the queue's answer line, the follow-up history."""

from __future__ import annotations

import gradio as gr
from conftest import cli_input, fresh_settings
from markdown_it import MarkdownIt

from app.render import escape, render_answer, unescape

HOSTILE = ("See ![logo](http://127.0.0.1:9999/beacon.png?who=viewer) and [portal](http://x/login), "
           "<img src=x onerror=alert(1)> *not bold* `code` | a | b |\n\n"
           "# not a heading\n1. not a list &amp; \\ $$x$$")


def test_document_markdown_is_rendered_as_its_own_text():
    """CommonMark renders the escaped text to no element at all, only to the text itself."""
    answer = {"answerable": True, "answer": HOSTILE, "scorer": "bi-encoder",
              "segments": [{"text": HOSTILE, "supported": True, "references": [{"ref": 1, "score": 0.9}]}],
              "sources": [{"ref": 1, "doc": "[x](http://x).md", "page": None, "slide": None, "section": "![s](http://s)",
                           "text": HOSTILE, "score": 0.9}]}
    page = MarkdownIt("commonmark").render(render_answer(answer, markdown=True))
    assert "<img" not in page and "<a " not in page and "<h1" not in page and "<code" not in page
    assert escape(HOSTILE, False) == HOSTILE and unescape(escape(HOSTILE, True)) == HOSTILE
    [line] = MarkdownIt("commonmark").render(escape("a <b>*c*</b> ![d](e)", True)).splitlines()
    assert line == "<p>a &lt;b&gt;*c*&lt;/b&gt; ![d](e)</p>"


def test_a_question_is_shown_as_typed_and_handed_back_as_typed():
    from app.ask import text_questions

    chatbot = text_questions(gr.Chatbot())
    history = [{"role": "user", "content": "Why? ![me](http://127.0.0.1:9999/beacon.png?who=asker)"},
               {"role": "assistant", "content": "*(refs: [1] 0.90)*"}]
    shown = chatbot.postprocess(history)
    question, reply = (message.content[0].text for message in shown.root)
    assert "<img" not in MarkdownIt("commonmark").render(question) and reply == "*(refs: [1] 0.90)*"
    back = chatbot.preprocess(shown)
    assert [m["content"][0]["text"] for m in back] == [history[0]["content"], history[1]["content"]]


def test_failed_logins_lock_a_key_for_a_while():
    from app.server import LoginThrottle

    throttle = LoginThrottle(failures=3, lockout_s=60)
    alice, here, there = "user 'alice'", "address 10.0.0.1", "address 10.0.0.2"
    assert throttle.failed([alice, here], 0) == [] and throttle.failed([alice, there], 1) == []
    assert throttle.locked_for([alice, here], 2) == 0
    assert throttle.failed([alice, here], 2) == [alice]  # the third failure for alice, the second here
    assert throttle.locked_for([alice], 3) == 59 and throttle.locked_for([here], 3) == 0
    assert throttle.locked_for([alice], 62) == 0  # unlocked, and counting from zero again
    assert throttle.failed([alice], 63) == []
    throttle.failed([here], 100)
    throttle.succeeded([here])  # a success forgets the failures
    assert throttle.failed([here], 101) == [] and throttle.failed([here], 102) == []
    assert throttle.failed([here], 170) == []  # failures older than lockout_s no longer count


def test_hash_password_refuses_short_passwords(monkeypatch, base_settings, tmp_path):
    settings = fresh_settings(base_settings, tmp_path / "storage")
    short = cli_input(monkeypatch, settings, "tunnel-7\ntunnel-7\n", "hash-password")
    assert short.exit_code == 2 and "use at least 12" in short.output and "pbkdf2" not in short.output
    good = cli_input(monkeypatch, settings, "tunnel-seven-7\ntunnel-seven-7\n", "hash-password")
    assert good.exit_code == 0 and good.output.strip().splitlines()[-1].startswith("pbkdf2_sha256$")


def test_a_question_refused_before_it_was_asked_is_no_follow_up_context(pipeline):
    """A 40,000-character question refused as too long must not ride along as history: it would
    overflow the rewriter's window on every next question."""
    from app.ask import CANNOT_ANSWER, Conversation, chat_handler, questions

    [(refusal, _, answer, turns)] = chat_handler(pipeline)("x" * 40_000, [], None, "")
    assert refusal.startswith(CANNOT_ANSWER) and answer is None and turns == gr.skip()  # no turn kept
    chat = [{"role": "user", "content": "x" * 40_000}, {"role": "assistant", "content": refusal}]
    ran = {"question": "Where was FT-2024-07 run?", "standalone_question": None,
           "answer": "At Aldenhoven [1]."}
    turns = Conversation().answered(questions(chat), ran)
    chat += [{"role": "user", "content": ran["question"]}, {"role": "assistant", "content": "..."}]
    assert turns.history(chat) == [("Where was FT-2024-07 run?", "At Aldenhoven [1].")]


def test_every_answer_waits_in_one_line_and_rest_routes_keep_to_it(pipeline):
    """The browser's chat and the /chat endpoint share the model: one line, `[ui] concurrency`
    long (1 for the embedded model), and no route around the queue."""
    from app.server import ANSWERS
    from app.ui import build_ui, queued

    demo = queued(build_ui(pipeline), pipeline.settings)
    answering = [fn for fn in demo.fns.values() if fn.concurrency_id == ANSWERS]
    assert ({fn.api_name for fn in answering} >= {"chat", "_submit_fn"}
            and {fn.concurrency_limit for fn in answering} == {1})
    assert demo.api_open is False
