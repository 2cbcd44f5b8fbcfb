"""`ragqa serve` with logins, attacked over HTTP as a hostile logged-in user and as a stranger
would: real server (subprocess), real second login (gradio_client and raw HTTP with each
login's cookies), the embedded model."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from conftest import BATTERY_Q, fresh_settings
from test_browser import serving

pytestmark = pytest.mark.slow

PASSWORDS = {"alice": "alice-tunnel-7-long", "bob": "bob-paint-shop-3-long"}


@pytest.fixture(scope="module")
def server(indexed, tmp_path_factory):
    """Two logins; one question each in flight; 3 failed logins lock for 4 s; uploads up to 1 MB.
    A file left in the temp folder by an earlier run must be gone once it runs."""
    from app.auth import hash_password

    storage = tmp_path_factory.mktemp("secure") / "storage"
    shutil.copytree(indexed.storage_dir, storage)
    settings = fresh_settings(indexed, storage)
    stale = storage / "ui-tmp" / "0123abcd" / "left-over.md"
    stale.parent.mkdir(parents=True)
    stale.write_text("an upload of a killed server", encoding="utf-8")
    users = [f"{name}:{hash_password(password, iterations=1000)}" for name, password in PASSWORDS.items()]
    env = {"RAGQA_STORAGE_DIR": str(storage), "RAGQA_MODELS_DIR": str(settings.models_dir),
           "RAGQA_UI__USERS": json.dumps(users), "RAGQA_UI__MAX_QUESTIONS": "1",
           "RAGQA_UI__LOGIN_FAILURES": "3", "RAGQA_UI__LOCKOUT_S": "4", "RAGQA_INGEST__MAX_FILE_MB": "1"}
    with serving(dict(os.environ, **env), storage.parent / "serve.log") as served:
        yield served | {"settings": settings, "stale": stale}


@contextmanager
def login(url: str, name: str) -> Iterator[httpx.Client]:
    """Raw HTTP with the login's cookies."""
    with httpx.Client(base_url=url, timeout=60) as client:
        response = client.post("login", data={"username": name, "password": PASSWORDS[name]})
        assert response.status_code == 200, response.text
        yield client


def connect(url: str, name: str):
    from gradio_client import Client

    return Client(url, auth=(name, PASSWORDS[name]), verbose=False)


def test_a_server_start_empties_gradios_temp_folder(server):
    assert not server["stale"].exists() and not server["stale"].parent.exists()


@pytest.mark.parametrize("method, route", [
    ("POST", "cancel"), ("POST", "reset"), ("POST", "stream/0123"), ("GET", "heartbeat/0123"),
    ("GET", "queue/data?session_hash=0123"), ("POST", "upload"), ("GET", "info"),
])
def test_every_api_route_needs_a_login(server, method, route):
    response = httpx.request(method, f"{server['url']}gradio_api/{route}", json={"session_hash": "0123",
                             "fn_index": 0, "event_id": "0123"}, timeout=30)
    assert response.status_code == 401, (route, response.status_code, response.text)


def test_with_logins_the_openai_api_needs_a_key_even_with_a_login_cookie(server):
    """Users set and no API keys: every /v1 route refuses, a logged-in browser's cookie included."""
    for route in ("models", "documents", "openapi.json"):
        assert httpx.get(f"{server['url']}v1/{route}", timeout=30).status_code == 401
    with login(server["url"], "alice") as alice:
        asked = {"messages": [{"role": "user", "content": BATTERY_Q}]}
        response = alice.post("v1/chat/completions", json=asked)
    assert response.status_code == 401 and "61" not in response.text


def test_rest_routes_do_not_skip_the_queue(server):
    with login(server["url"], "alice") as alice:
        response = alice.post("gradio_api/run/chat", json={"data": [BATTERY_Q, [], "", 0.5, 20, 5]})
    assert response.status_code == 404 and "join the queue" in response.text


def test_sessions_and_answers_belong_to_their_login(server):
    """Bob, logged in, with Alice's session hash: he cannot cancel her answer, read her latest
    answer through /rematch, nor listen to her session; her second question at once is refused
    (one in flight per login) while his is queued; both answers arrive."""
    alice, alice_too, bob = (connect(server["url"], name) for name in ("alice", "alice", "bob"))
    first = alice.submit(BATTERY_Q, [], "", 0.5, 20, 5, api_name="/chat")
    while first.status().code.name not in ("PROCESSING", "ITERATING"):
        assert not first.done(), first.result()
        time.sleep(0.05)
    cafeteria = "What does the staff cafeteria serve on Fridays?"
    second = alice_too.submit(cafeteria, [], "", 0.5, 20, 5, api_name="/chat")
    with pytest.raises(Exception, match="429 Too Many Requests"):
        second.result()
    chat = next(d["id"] for d in alice.config["dependencies"] if d.get("api_name") == "chat")
    with login(server["url"], "alice") as raw:  # what a browser is shown
        join = {"data": ["Anything?", [], "", 0.5, 20, 5], "fn_index": chat,
                "session_hash": "another-tab-of-alice"}
        refused = raw.post("gradio_api/queue/join", json=join)
        assert refused.status_code == 429
        assert refused.json()["detail"].startswith("You already have 1 question waiting or being answered")
    theirs = bob.submit(cafeteria, [], "", 0.5, 20, 5, api_name="/chat")

    # Gradio cancels by session and function.
    stolen = {"session_hash": alice.session_hash, "fn_index": chat, "event_id": "any"}
    with httpx.Client(base_url=server["url"], cookies=bob.cookies, timeout=30) as raw:
        assert raw.post("gradio_api/cancel", json=stolen).status_code == 403
        assert raw.get(f"gradio_api/heartbeat/{alice.session_hash}").status_code == 403
        listening = raw.get("gradio_api/queue/data", params={"session_hash": alice.session_hash})
        assert listening.status_code == 403
    reply = first.result()
    assert "61" in json.dumps(reply), reply
    assert "vegetarian" in json.dumps(theirs.result()).lower()

    mine = alice.predict(0.5, [], api_name="/rematch")  # her latest answer, re-checked, in her session
    assert "61" in json.dumps(mine)
    bob.session_hash = alice.session_hash
    with pytest.raises(Exception):
        bob.predict(0.5, [], api_name="/rematch")
    log = Path(server["log"]).read_text()
    assert "refused: login 'bob' named a session of login 'alice'" in log


def test_uploads_are_capped_and_leave_no_temp_copy(server, tmp_path):
    from gradio_client import handle_file

    temp = server["settings"].storage_dir / "ui-tmp"
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * int(1.5 * 2**20))
    note = tmp_path / "kiln.md"
    note.write_text("# Kiln\n\nThe kiln K-9 fires glaze at 1240 degrees Celsius.", encoding="utf-8")
    with login(server["url"], "alice") as alice:
        with big.open("rb") as file:
            refused = alice.post("gradio_api/upload", files={"files": ("big.txt", file)})
        assert refused.status_code == 413
        assert not list(temp.rglob("big.txt"))
        with note.open("rb") as file:
            [path] = alice.post("gradio_api/upload", files={"files": ("kiln.md", file)}).json()
        assert alice.get(f"gradio_api/file={path}").status_code == 200  # fetchable while it waits
        report, *_ = connect(server["url"], "alice").predict([handle_file(str(note))], api_name="/upload")
        assert "1 indexed" in report, report
        assert not list(temp.rglob("kiln.md"))
        assert alice.get(f"gradio_api/file={path}").status_code in (403, 404)


def test_failed_logins_lock_the_user_and_the_address(server):
    """3 failures (the fixture's login_failures) lock a user name, even for the right password,
    for 4 s; 3 failures on made-up names lock the address for everyone; each is logged without
    the password."""
    url = server["url"]
    with httpx.Client(base_url=url, timeout=30) as client:
        def attempt(name: str, password: str) -> httpx.Response:
            return client.post("login", data={"username": name, "password": password})

        for n in range(3):
            assert attempt("alice", f"guess-{n}").status_code == 400
        locked = attempt("alice", PASSWORDS["alice"])
        assert locked.status_code == 400 and "locked" in locked.json()["detail"]
        time.sleep(4.2)
        assert attempt("alice", PASSWORDS["alice"]).status_code == 200
        for n in range(3):
            assert attempt(f"mallory{n}", "guess").status_code == 400
        assert attempt("bob", PASSWORDS["bob"]).status_code == 400  # the address is locked
        time.sleep(4.2)
        assert attempt("bob", PASSWORDS["bob"]).status_code == 200
    log = Path(server["log"]).read_text()
    assert len(re.findall(r"login failed: user 'alice' from 127\.0\.0\.1", log)) == 3
    assert "login locked for 4 s after 3 failures: user 'alice'" in log
    assert "login locked for 4 s after 3 failures: address 127.0.0.1" in log
    assert "login refused, locked" in log and "guess-" not in log
