"""The chat UI in a real browser, used as a person would: Debian's headless Chromium driven by
Playwright against `ragqa serve` on a loopback port, over a small store with the real embedded
models. Each step leaves a screenshot in storage/test-artifacts/browser/."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import BATTERY_Q, FIXTURES, UNRELATED_Q, fresh_settings, free_port
from documents import crash_report_pdf

from rag.settings import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.debian("chromium")]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = REPO_ROOT / "storage" / "test-artifacts" / "browser"
HOSTILE = ('# Release notes\n\nKnown issue: <img src=x onerror=alert(document.domain)> and '
           '<script>document.title="pwned"</script> appear in the export of the crash database.\n')
FINAL = ("refs:", "unsupported", "Cannot answer", "I cannot answer", "Refused:")  # "Refused:" names the gate
WAIT_MS = 180_000
RAGQA = str(Path(sys.executable).parent / "ragqa")  # the installed command, as users run it


@pytest.fixture(scope="module")
def server(base_settings, tmp_path_factory):
    """`ragqa serve` on a free loopback port over battery, cafeteria and a document whose text
    holds HTML; stopped after the module."""
    from ingestion.pipeline import ingest

    docs = tmp_path_factory.mktemp("ui-docs")
    for name in ("battery.md", "cafeteria.md"):
        shutil.copy(FIXTURES / name, docs / name)
    (docs / "release-notes.md").write_text(HOSTILE, encoding="utf-8")
    crash_report_pdf(docs / "handbook.pdf")
    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("ui-storage"))
    assert ingest([docs], settings, progress=False).indexed == 4
    env = dict(os.environ, RAGQA_STORAGE_DIR=str(settings.storage_dir),
               RAGQA_MODELS_DIR=str(settings.models_dir))
    # A real evaluation run for the Reports tab (retrieval only: no generation).
    subprocess.run([RAGQA, "eval", "retrieval", "--qa", str(FIXTURES / "qa.jsonl")], env=env, check=True,
                   capture_output=True)
    with serving(env, tmp_path_factory.mktemp("ui-log") / "serve.log") as served:
        yield served | {"settings": settings, "env": env}


@contextmanager
def serving(env: dict[str, str], log_path: Path, port: int | None = None) -> Iterator[dict]:
    """`ragqa serve` on a loopback port (a free one unless given), until the block ends."""
    port = port or free_port()
    log = log_path.open("w")
    process = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
                               env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 180
    try:
        while True:
            assert process.poll() is None, log_path.read_text()
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "ragqa serve did not answer within 180 s"
            time.sleep(0.5)
        yield {"url": url, "process": process, "log": log_path}
    finally:
        process.terminate()
        process.wait(30)
        log.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "the browser tests need Debian's chromium: apt-get install -y chromium"
    with sync_playwright() as playwright:
        # A temporary empty profile per launch; nothing is downloaded.
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, server, request):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(server["url"])
    page.locator("#question textarea").wait_for()
    yield page
    page.close()
    assert server["process"].poll() is None, "the server died:\n" + server["log"].read_text()[-3000:]


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def replies(page) -> list[str]:
    """The text of every assistant message (an answer and its folded sources are two)."""
    return page.locator('[data-testid="bot"]').all_inner_texts()


def ask(page, question: str) -> list[str]:
    """Type the question, press Enter, and collect what the last reply showed until it is
    final; returns the distinct texts in order (the streamed ones, then the final one)."""
    before = len(replies(page))
    box = page.locator("#question textarea")
    box.fill(question)
    box.press("Enter")
    seen: list[str] = []
    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline:
        now = replies(page)
        if len(now) > before:
            text = now[before].strip()
            if text and (not seen or seen[-1] != text):
                seen.append(text)
            if text and any(marker in text for marker in FINAL) and "Writing the answer" not in sources(page):
                return seen
        page.wait_for_timeout(100)
    raise AssertionError(f"no final answer within {WAIT_MS / 1000:.0f} s; saw {seen[-3:]}")


def open_filters(page) -> None:
    """Open the Filters accordion; a click while the page is still wiring its events can be lost,
    so it is clicked again until the filter box shows (a few tries)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    box = page.get_by_placeholder("FIELD=VALUE; FIELD=VALUE")
    for _ in range(5):
        if box.is_visible():
            return
        page.get_by_text("Filters", exact=True).click()
        try:
            box.wait_for(state="visible", timeout=5000)
        except PlaywrightTimeout:
            continue
    assert box.is_visible(), "the Filters accordion did not open"


def sources(page) -> str:
    return page.locator("#sources").inner_text()


def first_source(page) -> str:
    return next((line for line in sources(page).splitlines() if line.startswith("[1]")), "")


def test_question_streams_an_answer_with_references(page):
    assert page.get_by_text("Filters", exact=True).count() == 1  # drawn once, under the input
    texts = ask(page, BATTERY_Q)
    shot(page, "01-answer")
    assert len(texts) >= 3, texts  # the answer grew on screen before it was final
    assert "61" in texts[-1] and "refs: [1]" in texts[-1]
    assert first_source(page).startswith("[1] battery.md")


def test_unanswerable_question_is_refused(page, server):
    texts = ask(page, UNRELATED_Q)
    shot(page, "02-refusal")
    assert texts[-1].startswith(server["settings"].answer.refusal)
    assert "refs:" not in texts[-1]


def test_filters_set_and_unset(page):
    filters = page.get_by_placeholder("FIELD=VALUE; FIELD=VALUE")
    open_filters(page)
    filters.fill("Title=Atlantis")
    texts = ask(page, BATTERY_Q)
    shot(page, "03-filter-set")
    assert "Cannot answer" in texts[-1] and "no indexed document has Title=Atlantis" in texts[-1]
    filters.fill("Title=Cafeteria opening hours")
    ask(page, "When does the cafeteria open?")
    assert "[1] cafeteria.md" in sources(page) and "battery.md" not in sources(page)
    filters.fill("")
    texts = ask(page, BATTERY_Q)
    shot(page, "04-filter-unset")
    assert "refs: [1]" in texts[-1] and first_source(page).startswith("[1] battery.md")


def test_upload_is_listed_and_answerable(page, server, tmp_path):
    note = tmp_path / "wind-tunnel.md"
    note.write_text("# Wind tunnel\n\nThe climatic wind tunnel is booked for the Model K on Thursdays.",
                    encoding="utf-8")
    page.get_by_role("tab", name="Documents").click()
    page.locator('#upload input[type="file"]').set_input_files(str(note))
    page.get_by_role("button", name="Add to the index").click()
    page.locator("#ingest-report").get_by_text("1 file: 1 indexed").wait_for(timeout=WAIT_MS)
    shot(page, "05-uploaded")

    page.reload()  # a page loaded after the upload lists the new document
    page.locator("#question textarea").wait_for()
    open_filters(page)
    page.get_by_label("Only these documents").click()
    page.get_by_role("option", name="wind-tunnel.md").wait_for()
    shot(page, "06-listed")
    page.keyboard.press("Escape")
    texts = ask(page, "On which day is the climatic wind tunnel booked for the Model K?")
    shot(page, "07-upload-answered")
    assert "Thursday" in texts[-1] and "refs:" in texts[-1]
    assert first_source(page).startswith("[1] wind-tunnel.md")


def test_document_markup_is_shown_as_text(page, server):
    dialogs, requests = [], []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.on("request", lambda request: requests.append(request.url))
    ask(page, "What known issue appears in the export of the crash database?")
    page.wait_for_timeout(1000)
    shot(page, "08-markup-as-text")
    assert "<img src=x onerror=alert(document.domain)>" in sources(page)
    assert '<script>document.title="pwned"</script>' in sources(page)
    assert dialogs == [] and page.title() == "ragqa"
    assert page.locator('img[src="x"]').count() == 0
    assert page.locator("script", has_text="pwned").count() == 0
    assert not [url for url in requests if url.rstrip("/").endswith("/x")]


def test_reload_while_streaming_then_ask_again(page, server):
    """Leaving an answer half way (reload) and asking again at once: one answer at a time on
    the model, the abandoned one stops, the server lives."""
    box = page.locator("#question textarea")
    box.fill("Describe the nail penetration test of the Orion battery pack in detail, step by step, "
             "with every figure it reports.")
    box.press("Enter")
    deadline = time.monotonic() + WAIT_MS / 1000
    while len(replies(page)) < 1 and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert replies(page), "the answer never started streaming"
    page.reload()
    page.locator("#question textarea").wait_for()
    texts = ask(page, BATTERY_Q)
    shot(page, "09-after-reload")
    assert "61" in texts[-1] and "refs:" in texts[-1]
    assert server["process"].poll() is None


def test_a_chip_shows_the_evidence_and_the_cited_page(page):
    texts = ask(page, "What do curtain airbags protect in a side impact?")
    assert "refs:" in texts[-1], texts[-1]
    chips = page.locator("#chips label")
    chips.first.wait_for()
    labels = chips.all_inner_texts()
    assert any("handbook.pdf" in label for label in labels), labels
    chips.filter(has_text="handbook.pdf").first.click()
    view = page.locator("#evidence")
    view.get_by_text("sentences backing the segment").wait_for(timeout=30_000)
    assert "handbook.pdf, pp. 1-3" in view.inner_text() and view.locator("mark").count() >= 2
    assert "Page 3" in view.inner_text()  # the page that holds the curtain airbag sentence
    image = page.locator("#page-image img")
    image.wait_for()
    assert page.evaluate("img => img.naturalWidth", image.element_handle()) > 500
    # No caption drawn over the page's top: the evidence above the image names the page.
    assert not page.locator('#page-image [data-testid="block-label"]').is_visible()
    shot(page, "10-evidence")


def _set_threshold(page, value: float) -> None:
    number = page.locator("#threshold input[type=number]")
    open_filters(page)
    number.fill(str(value))
    number.press("Enter")


def test_a_new_threshold_rechecks_the_marks(page):
    texts = ask(page, BATTERY_Q)
    assert "refs: [1]" in texts[-1]
    _set_threshold(page, 0.95)
    last = page.locator('[data-testid="bot"]').first
    page.wait_for_function("() => document.body.innerText.includes('Refused: no sentence')", timeout=60_000)
    shot(page, "11-threshold-strict")
    assert "unsupported" in replies(page)[0] and "refs:" not in replies(page)[0]
    _set_threshold(page, 0.5)
    page.wait_for_function("() => !document.body.innerText.includes('Refused: no sentence')", timeout=60_000)
    assert "refs: [1]" in replies(page)[0], last.inner_text()


def test_feedback_is_saved_and_exported(page, server, tmp_path):
    ask(page, BATTERY_Q)
    page.get_by_placeholder("Optional comment on the latest answer").fill("Right figure, right source.")
    page.locator("#thumbs-up").click()
    page.locator("#feedback-status").get_by_text("feedback (helpful) saved").wait_for(timeout=30_000)
    shot(page, "12-feedback")
    out = tmp_path / "rated.jsonl"
    subprocess.run([RAGQA, "feedback", "export", str(out)], env=server["env"], check=True)
    [item] = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert item["question"] == BATTERY_Q and "61" in item["answer"]
    assert item["feedback"]["comment"] == "Right figure, right source."
    assert item["evidence"][0]["doc"] == "battery.md"


def test_documents_are_listed_and_deleted(page, tmp_path):
    note = tmp_path / "paint-shop.md"
    note.write_text("# Paint shop\n\nThe paint shop PS-3 cures panels at 140 degrees Celsius.",
                    encoding="utf-8")
    page.get_by_role("tab", name="Documents").click()
    page.locator('#upload input[type="file"]').set_input_files(str(note))
    page.get_by_role("button", name="Add to the index").click()
    table = page.locator("#documents")
    # The id and the file columns both read "paint-shop.md": either will do. Gradio's table keeps
    # a hidden copy of its longest row for sizing: only a shown cell counts.
    table.get_by_text("paint-shop.md").filter(visible=True).first.wait_for(timeout=WAIT_MS)
    assert "battery.md" in table.inner_text()
    shot(page, "13-documents")
    page.get_by_role("tab", name="Ask").click()
    assert "140" in ask(page, "At what temperature does the paint shop PS-3 cure panels?")[-1]

    page.get_by_role("tab", name="Documents").click()
    page.get_by_label("Documents to delete").click()
    page.get_by_role("option", name="paint-shop.md").click()
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Delete from the index").click()
    page.locator("#ingest-report").get_by_text("Deleted 1").wait_for(timeout=60_000)
    assert "paint-shop.md" not in table.inner_text()
    shot(page, "14-deleted")
    page.get_by_role("tab", name="Ask").click()
    ask(page, "At what temperature does the paint shop PS-3 cure panels?")
    assert "paint-shop.md" not in sources(page)


def test_a_report_opens_with_its_plots(page):
    page.get_by_role("tab", name="Reports").click()
    page.get_by_label("Run", exact=True).click()
    page.get_by_role("option", name=re.compile("retrieval")).first.click()
    page.locator("#report").get_by_text("MAP", exact=False).first.wait_for(timeout=30_000)
    assert page.locator("#plots img").count() >= 1
    shot(page, "15-report")


def test_two_users_at_once_see_only_their_own_chats(browser, server):
    pages = [browser.new_context(viewport={"width": 1400, "height": 1000}).new_page() for _ in range(2)]
    for page in pages:
        page.goto(server["url"])
        page.locator("#question textarea").wait_for()
    questions = [BATTERY_Q, "What does the staff cafeteria serve on Fridays?"]
    for page, question in zip(pages, questions):
        page.locator("#question textarea").fill(question)
    for page in pages:
        page.locator("#question textarea").press("Enter")
    # Whichever arrived second waits its turn on the one embedded model, and is told its place.
    deadline = time.monotonic() + 30
    waiting = None
    while waiting is None and time.monotonic() < deadline:
        waiting = next((p for p in pages if re.search(r"queue:\s*\d+\s*/\s*\d+", p.inner_text("body"))), None)
        pages[0].wait_for_timeout(100)
    assert waiting is not None, "no page showed its place in the queue"
    shot(waiting, "16-queued")
    for page in pages:
        page.wait_for_function("() => document.body.innerText.includes('refs:')", timeout=WAIT_MS)
    first, second = (p.locator('[data-testid="user"]').all_inner_texts() for p in pages)
    assert first == [questions[0]] and second == [questions[1]]
    assert "61" in replies(pages[0])[0] and "vegetarian" in replies(pages[1])[0].lower()
    for page in pages:
        page.context.close()


def test_login_when_users_are_configured(browser, server, tmp_path):
    from app.auth import hash_password

    users = json.dumps([f"alice:{hash_password('tunnel-7', iterations=1000)}"])
    with serving(server["env"] | {"RAGQA_UI__USERS": users}, tmp_path / "serve.log") as served:
        page = browser.new_page()
        page.goto(served["url"])
        page.get_by_label("username").fill("alice")
        page.get_by_label("password").fill("wrong")
        page.get_by_role("button", name="Login").click()
        page.get_by_text("Incorrect", exact=False).wait_for(timeout=30_000)
        page.get_by_label("username").fill("alice")
        page.get_by_label("password").fill("tunnel-7")
        page.get_by_role("button", name="Login").click()
        page.locator("#question textarea").wait_for(timeout=60_000)
        shot(page, "17-logged-in")
        page.close()


LONG_Q = ("Describe the nail penetration test of the Orion battery pack in detail, step by step, "
          "with every figure it reports.")


def test_the_scripting_api_filters_and_deletes_documents_indexed_after_the_start(server, tmp_path):
    """gradio_client never loads the page, so the documents' choices were those the page was
    built with (none): `/chat` with a document list and `/delete` failed with "not in the list
    of choices". A document uploaded after the start, by another client, is asked about and
    deleted by name; an id that is not indexed is said so."""
    from gradio_client import Client, handle_file

    note = tmp_path / "paint-line.md"
    note.write_text("# Paint line\n\nThe paint line PL-4 cures bumpers at 90 degrees Celsius.",
                    encoding="utf-8")
    report = Client(server["url"], verbose=False).predict([handle_file(str(note))], api_name="/upload")[0]
    assert report.startswith("1 file: 1 indexed"), report
    client = Client(server["url"], verbose=False)  # a session that never saw the upload's choices
    chat, shown = client.predict("At what temperature does the paint line PL-4 cure bumpers?",
                                 ["paint-line.md"], "", 0.5, 20, 5, api_name="/chat")
    assert "90" in chat[0]["content"] and "refs:" in chat[0]["content"], chat
    assert "paint" in shown and "battery" not in shown
    message = client.predict(["paint-line.md", "nothing.md"], api_name="/delete")[0]
    assert message.startswith("Deleted 1: ") and "paint" in message.split("\n")[0], message
    assert "Not indexed, so not deleted: " in message and "nothing" in message.split("\n")[-1]


def test_clear_forgets_the_latest_answer_and_its_panels(page):
    """Clear left the chips, sources and evidence; Helpful still rated the cleared answer, and
    moving the threshold brought it back into the empty chat."""
    ask(page, BATTERY_Q)
    page.locator("#chips label").first.click()
    page.locator("#evidence mark").first.wait_for(timeout=30_000)
    page.get_by_role("button", name="Clear", exact=True).first.click()
    page.wait_for_function("() => document.querySelectorAll('[data-testid=\"bot\"]').length === 0",
                           timeout=30_000)
    page.wait_for_function("() => !document.querySelector('#sources').innerText.includes('battery')",
                           timeout=30_000)
    assert page.locator("#chips label").count() == 0
    assert "Choose a reference" in page.locator("#evidence").inner_text()
    page.locator("#thumbs-up").click()
    page.locator("#feedback-status").get_by_text("Ask a question first").wait_for(timeout=30_000)
    _set_threshold(page, 0.9)
    page.wait_for_timeout(3000)  # a re-check would have drawn the old answer by now
    shot(page, "18-cleared")
    assert replies(page) == [] and page.locator('[data-testid="user"]').count() == 0


def test_stop_ends_a_streaming_answer_and_the_locked_box_says_so(page):
    """No stop button while an answer streamed, and questions typed meanwhile were dropped in a
    locked box that said nothing: it says why it is locked, and stop ends the answer."""
    box = page.locator("#question textarea")
    box.fill(LONG_Q)
    box.press("Enter")
    page.wait_for_function("() => document.querySelectorAll('[data-testid=\"bot\"]').length > 0",
                           timeout=WAIT_MS)
    assert box.is_disabled()

    def note() -> str:
        return page.evaluate("() => getComputedStyle(document.querySelector('#question'), '::after').content")

    assert "Writing the answer" in note() and "stop" in note()
    shot(page, "19-stoppable")
    page.locator('[data-testid="stop-button"]').click()
    page.wait_for_function("() => !document.querySelector('#question textarea').disabled", timeout=30_000)
    stopped = replies(page)[0]
    page.wait_for_timeout(2000)
    assert replies(page)[0] == stopped and "refs:" not in stopped  # nothing more was written
    assert "Stopped" in sources(page) and note() == "none"
    assert "61" in ask(page, BATTERY_Q)[-1]  # the model is free again


def test_a_long_file_name_keeps_the_documents_columns_in_view_and_is_deleted_as_named(page, tmp_path):
    """A 200-character file name pushed the Documents table's other columns out of view; the
    delete message showed the name's escapes ("`xss-&lt;img`")."""
    name = "R&D_[draft]_" + "crash-sled-calibration-" * 7 + "notes.md"
    note = tmp_path / name
    note.write_text("# Sled calibration\n\nThe crash sled CS-9 is calibrated every March.", encoding="utf-8")
    page.get_by_role("tab", name="Documents").click()
    page.locator('#upload input[type="file"]').set_input_files(str(note))
    page.get_by_role("button", name="Add to the index").click()
    table = page.locator("#documents")
    shown = table.get_by_text("crash-sled-calibration", exact=False).filter(visible=True)
    shown.first.wait_for(timeout=WAIT_MS)
    shot(page, "20-long-name")
    frame = table.bounding_box()
    for header in ("document", "chunks", "indexed (UTC)", "file"):
        cell = table.get_by_role("columnheader", name=header).bounding_box()
        assert cell["x"] + cell["width"] <= frame["x"] + frame["width"] + 1, f"column {header} is out of view"
    page.get_by_label("Documents to delete").click()
    page.get_by_role("option", name=name).click()
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Delete from the index").click()
    report = page.locator("#ingest-report")
    report.get_by_text("Deleted 1").wait_for(timeout=60_000)
    assert report.inner_text().strip() == f"Deleted 1: {name}"
