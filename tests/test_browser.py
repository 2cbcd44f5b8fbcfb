"""The chat UI in a real browser, used as a person would: Debian's headless Chromium driven by
Playwright against `ragqa serve` on a loopback port, over a small store with the real embedded
models. Each step leaves a screenshot in storage/test-artifacts/browser/."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import BATTERY_Q, FIXTURES, UNRELATED_Q, fresh_settings, free_port

from rag.settings import REPO_ROOT

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = REPO_ROOT / "storage" / "test-artifacts" / "browser"
HOSTILE = ('# Release notes\n\nKnown issue: <img src=x onerror=alert(document.domain)> and '
           '<script>document.title="pwned"</script> appear in the export of the crash database.\n')
FINAL = ("refs:", "unsupported", "Cannot answer", "I cannot answer")
WAIT_MS = 180_000


@pytest.fixture(scope="module")
def server(base_settings, tmp_path_factory):
    """`ragqa serve` on a free loopback port over battery, cafeteria and a document whose text
    holds HTML; stopped after the module."""
    from ingestion.pipeline import ingest

    docs = tmp_path_factory.mktemp("ui-docs")
    for name in ("battery.md", "cafeteria.md"):
        shutil.copy(FIXTURES / name, docs / name)
    (docs / "release-notes.md").write_text(HOSTILE, encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("ui-storage"))
    assert ingest([docs], settings, progress=False).indexed == 3
    port = free_port()
    env = dict(os.environ, RAGQA_STORAGE_DIR=str(settings.storage_dir), RAGQA_MODELS_DIR=str(settings.models_dir))
    log = (tmp_path_factory.mktemp("ui-log") / "serve.log").open("w")
    process = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
                               env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 180
    while True:
        assert process.poll() is None, Path(log.name).read_text()
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    break
        except OSError:
            pass
        assert time.monotonic() < deadline, "ragqa serve did not answer within 180 s"
        time.sleep(0.5)
    yield {"url": url, "process": process, "settings": settings, "log": Path(log.name)}
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
    assert texts[-1].startswith(server["settings"].refusal)
    assert "refs:" not in texts[-1]


def test_filters_set_and_unset(page):
    filters = page.get_by_placeholder("FIELD=VALUE; FIELD=VALUE")
    if not filters.is_visible():
        page.get_by_text("Filters", exact=True).click()
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
    page.locator('input[type="file"]').set_input_files(str(note))
    page.get_by_role("button", name="Add to the index").click()
    page.locator("#ingest-report").get_by_text("1 file: 1 indexed").wait_for(timeout=WAIT_MS)
    shot(page, "05-uploaded")

    page.reload()  # a page loaded after the upload lists the new document
    page.locator("#question textarea").wait_for()
    if not page.get_by_placeholder("FIELD=VALUE; FIELD=VALUE").is_visible():
        page.get_by_text("Filters", exact=True).click()
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
