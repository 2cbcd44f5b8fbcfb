"""The UI's security in Chromium (helpers of tests/test_browser.py): document Markdown and a
question's Markdown shown as text, with a real loopback server counting beacon hits; who is
logged in and logging out; a server restart under an open tab."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import BATTERY_Q, FIXTURES, fresh_settings, free_port
from test_browser import ask, browser, replies, serving, shot, sources  # noqa: F401  (browser: a fixture)

pytestmark = pytest.mark.slow

PASSWORD = "alice-tunnel-7-long"


@pytest.fixture(scope="module")
def beacon() -> Iterator[dict]:
    """A loopback HTTP server that records every request it gets (a tracking beacon's view)."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.end_headers()

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield {"url": f"http://127.0.0.1:{httpd.server_address[1]}", "hits": hits}
    httpd.shutdown()


@pytest.fixture(scope="module")
def secured(base_settings, beacon, tmp_path_factory):
    """`ragqa serve` with a login, over battery.md and a notice whose text holds Markdown that
    points at the beacon."""
    from app.auth import hash_password
    from ingestion.pipeline import ingest

    docs = tmp_path_factory.mktemp("beacon-docs")
    shutil.copy(FIXTURES / "battery.md", docs / "battery.md")
    (docs / "portal-notice.txt").write_text(
        f"Portal notice: the supplier portal moved to the new server on 3 March. "
        f"![logo]({beacon['url']}/beacon.png?who=viewer) Log in at [portal]({beacon['url']}/login) "
        f"or {beacon['url']}/bare or www.example.com, or write to help@example.com. "
        f'<img src="{beacon["url"]}/html.png">\n', encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("beacon-storage"))
    assert ingest([docs], settings, progress=False).indexed == 2
    users = json.dumps([f"alice:{hash_password(PASSWORD, iterations=1000)}"])
    env = dict(os.environ, RAGQA_STORAGE_DIR=str(settings.storage_dir),
               RAGQA_MODELS_DIR=str(settings.models_dir), RAGQA_UI__USERS=users)
    with serving(env, tmp_path_factory.mktemp("beacon-log") / "serve.log") as served:
        yield served


def log_in(page, url: str) -> None:
    page.goto(url)
    page.get_by_label("username").fill("alice")
    page.get_by_label("password").fill(PASSWORD)
    page.get_by_role("button", name="Login").click()
    page.locator("#question textarea").wait_for(timeout=60_000)


def test_markdown_in_documents_and_questions_is_shown_as_text(browser, secured, beacon):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    log_in(page, secured["url"])
    question = f"When did the supplier portal move? ![me]({beacon['url']}/beacon.png?who=asker)"
    ask(page, question)
    chip = page.locator("#chips label").filter(has_text="portal-notice.txt").first
    chip.wait_for(timeout=30_000)
    page.wait_for_timeout(1000)  # the panels of the finished answer settle
    chip.click()
    evidence = page.locator("#evidence")
    evidence.get_by_text("Portal notice").first.wait_for(timeout=30_000)
    page.wait_for_timeout(1500)
    shot(page, "security-01-markdown-as-text")
    assert f"![logo]({beacon['url']}/beacon.png?who=viewer)" in evidence.inner_text()
    assert beacon["hits"] == []
    host = beacon["url"].removeprefix("http://")
    assert page.locator(f'img[src*="{host}"]').count() == 0
    assert page.locator(f'a[href*="{host}"], a[href*="example.com"], a[href^="mailto:"]').count() == 0
    assert f"![logo]({beacon['url']}/beacon.png?who=viewer)" in sources(page)
    assert f"[portal]({beacon['url']}/login)" in sources(page)
    assert page.locator('[data-testid="user"]').first.inner_text().strip() == question
    assert replies(page)
    page.close()


def test_who_is_logged_in_and_logging_out(browser, secured):  # noqa: F811
    page = browser.new_page()
    log_in(page, secured["url"])
    page.locator("#logged-in-as").get_by_text("Logged in as alice").wait_for(timeout=30_000)
    shot(page, "security-02-logged-in-as")
    page.locator("#logout").click()
    page.get_by_label("username").wait_for(timeout=30_000)
    page.goto(secured["url"])  # the login is gone, not only the page
    page.get_by_label("username").wait_for(timeout=30_000)
    page.close()


def test_a_restart_says_the_session_ended_and_keeps_the_question(browser, indexed, tmp_path):  # noqa: F811
    """Two people (their own browser profiles) typing when the server restarts: one waits, is told
    that the session ended and reloads; the other presses Enter while it is down (Gradio marks the
    box "Error", then reloads the page once the server is back). Both keep their question."""
    env = dict(os.environ, RAGQA_STORAGE_DIR=str(indexed.storage_dir),
               RAGQA_MODELS_DIR=str(indexed.models_dir))
    port = free_port()
    viewport = {"width": 1400, "height": 1000}
    waiting, hasty = (browser.new_context(viewport=viewport).new_page() for _ in range(2))
    questions = {waiting: BATTERY_Q, hasty: "What does the staff cafeteria serve on Fridays?"}
    with serving(env, tmp_path / "first.log", port=port) as served:
        for page, question in questions.items():
            page.goto(served["url"])
            page.locator("#question textarea").fill(question)
        waiting.wait_for_timeout(1200)  # the page keeps what is typed twice a second
    for page in questions:
        page.locator("#session-ended").get_by_text("cannot be reached").wait_for(timeout=30_000)
    hasty.locator("#question textarea").press("Enter")
    with serving(env, tmp_path / "second.log", port=port):
        note = waiting.locator("#session-ended")
        note.get_by_text("This session has ended").wait_for(timeout=30_000)
        shot(waiting, "security-03-session-ended")
        assert waiting.locator("#question textarea").input_value() == BATTERY_Q
        note.get_by_role("button", name="Reload").click()
        for page, question in questions.items():
            page.locator("#question textarea").wait_for()
            page.wait_for_function("q => document.querySelector('#question textarea').value === q",
                                   arg=question, timeout=30_000)
        assert waiting.locator("#session-ended").count() == 0
    for page in questions:
        page.context.close()
