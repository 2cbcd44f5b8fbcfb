"""The OpenAI-compatible API (app/api.py), asked with the real `openai` client over HTTP: `ragqa
serve`'s own app (app/server.build_app, the UI beside it) on a loopback port, the embedded model
answering. Without users or keys no key is asked; with keys, a request without a valid one gets
401 and nothing else."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import openai
import pytest
from conftest import BATTERY_Q, UNRELATED_Q, cli, fresh_settings, free_port

from app.api import Message, conversation, key_hash, new_key
from app.server import build_app
from app.ui import build_ui, queued

KEY = new_key()


@contextmanager
def served(pipeline, settings) -> Iterator[str]:
    """build_app (UI and API) under uvicorn in a thread; its /v1 URL."""
    import uvicorn

    port = free_port()
    app = build_app(queued(build_ui(pipeline), settings), settings, pipeline=pipeline)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.1)
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def open_api(pipeline):
    with served(pipeline, pipeline.settings) as url:
        yield url


@pytest.fixture(scope="module")
def keyed_api(pipeline):
    settings = fresh_settings(pipeline.settings, pipeline.settings.storage_dir,
                              ui={"api_keys": [f"ana:{key_hash(KEY)}"]})
    with served(pipeline, settings) as url:
        yield url


def test_the_openai_client_gets_the_cited_answer_streamed_and_not(open_api):
    client = openai.OpenAI(base_url=open_api, api_key="not-needed", max_retries=0)
    assert [m.id for m in client.models.list()] == ["ragqa"]
    reply = client.chat.completions.create(model="ragqa", messages=[{"role": "user", "content": BATTERY_Q}])
    content, answer = reply.choices[0].message.content, reply.model_extra["ragqa"]
    assert content == answer["answer"] and "61" in content and "[1]" in content, content
    assert answer["answerable"] and answer["sources"][0]["doc"] == "battery.md"
    assert all(s["supported"] for s in answer["segments"]) and reply.choices[0].finish_reason == "stop"
    # Streamed: the role first, then the checked answer in pieces, the whole Answer last.
    chunks = list(client.chat.completions.create(
        model="ragqa", stream=True, messages=[{"role": "system", "content": "Be brief."},
                                              {"role": "user", "content": BATTERY_Q}]))
    assert chunks[0].choices[0].delta.role == "assistant" and len(chunks) > 3
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks)
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop" and streamed == last.model_extra["ragqa"]["answer"]
    assert "61" in streamed and last.model_extra["ragqa"]["sources"][0]["doc"] == "battery.md"
    # A question the documents do not answer is refused, as in the UI.
    refused = client.chat.completions.create(model="ragqa",
                                             messages=[{"role": "user", "content": UNRELATED_Q}])
    refusal = refused.model_extra["ragqa"]
    assert refusal["answerable"] is False and refusal["refused_by"]


def test_with_keys_a_request_without_a_valid_key_gets_401_and_nothing_else(keyed_api):
    for key in ("", "rqa_wrong", KEY + "x"):
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        response = httpx.get(f"{keyed_api}/documents", headers=headers)
        assert response.status_code == 401 and "battery" not in response.text
        assert response.json()["error"]["message"].startswith("A valid API key is required")
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=keyed_api, api_key="rqa_wrong", max_retries=0).chat.completions.create(
            model="ragqa", messages=[{"role": "user", "content": BATTERY_Q}])
    client = openai.OpenAI(base_url=keyed_api, api_key=KEY, max_retries=0)
    assert [m.id for m in client.models.list()] == ["ragqa"]
    documents = httpx.get(f"{keyed_api}/documents", headers={"Authorization": f"Bearer {KEY}"}).json()["data"]
    assert sorted(d["id"] for d in documents) == ["battery.md", "cafeteria.md"]
    assert httpx.get(f"{keyed_api}/openapi.json").status_code == 401
    schema = httpx.get(f"{keyed_api}/openapi.json", headers={"Authorization": f"Bearer {KEY}"}).json()
    assert {"/chat/completions", "/models", "/documents"} <= set(schema["paths"])
    with pytest.raises(openai.BadRequestError):  # no user question: refused before anything is asked
        client.chat.completions.create(model="ragqa", messages=[{"role": "assistant", "content": "Hi"}])


def test_the_messages_become_the_question_and_its_history():
    said = [Message(role="system", content="x"), Message(role="user", content="How hot did cell 14 get?"),
            Message(role="assistant", content="61 degrees [1]."),
            Message(role="user", content=[{"type": "text", "text": "And the nail?"}])]
    assert conversation(said) == ("And the nail?", [("How hot did cell 14 get?", "61 degrees [1].")])
    with pytest.raises(ValueError, match="last message must be the user's"):
        conversation(said[:3])


def test_on_the_embedded_model_clients_queue_and_are_told_so(open_api):
    """Two questions at once: one is answered while the other waits its turn and says so."""
    from concurrent.futures import ThreadPoolExecutor

    def ask(_: int) -> httpx.Response:
        return httpx.post(f"{open_api}/chat/completions", timeout=300,
                          json={"model": "ragqa", "messages": [{"role": "user", "content": BATTERY_Q}]})

    with ThreadPoolExecutor(2) as pool:
        early = pool.submit(ask, 0)
        time.sleep(0.5)  # the first is being written when the second comes
        late = pool.submit(ask, 1)
        first, second = early.result(), late.result()
    assert first.status_code == second.status_code == 200
    answers = [r.json()["ragqa"] for r in (first, second)]
    assert all(a["answerable"] and "61" in a["answer"] for a in answers)
    assert answers[0]["waited_s"] < 1.0 and first.headers["x-ragqa-ahead"] == "0"
    assert answers[1]["waited_s"] > 0.3 and second.headers["x-ragqa-ahead"] == "1", answers[1]["waited_s"]


def test_api_key_prints_a_key_once_and_keeps_only_its_hash(monkeypatch, base_settings):
    from app.api import Keys

    made = cli(monkeypatch, base_settings, "api-key", "ana")
    key = made.stdout.strip()
    entry = made.stderr.strip().removeprefix("add to [ui] api_keys: ").strip('"')
    assert made.exit_code == 0 and key.startswith("rqa_") and key not in made.stderr
    assert entry == f"ana:{key_hash(key)}"
    keys = Keys(fresh_settings(base_settings, base_settings.storage_dir, ui={"api_keys": [entry]}))
    request = type("Request", (), {"headers": {"authorization": f"Bearer {key}"}})()
    assert keys.required and keys(request) == "ana"
    assert cli(monkeypatch, base_settings, "api-key", "a:b").exit_code == 2
