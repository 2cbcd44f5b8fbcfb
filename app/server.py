"""The UI's web server (`ragqa serve`): the Gradio Blocks mounted in a FastAPI app, run by
uvicorn behind `Guard`, which adds what Gradio leaves out:

- With `[ui] users`, every `/gradio_api/` route needs a login (Gradio lets `/cancel`, `/reset`,
  `/stream/...` and `/heartbeat/...` through), and a browser session belongs to the login that
  opened it: another login's requests naming it (its state, its answer, cancelling it) are refused.
- Failed logins lock the user name and the client address for `[ui] lockout_s` after
  `[ui] login_failures` of them (`LoginThrottle`); each failure and lock is logged, never a password.
- One login (without logins: one browser session) has at most `[ui] max_questions` questions
  waiting or being answered; one more is refused with a message.
- A Content-Security-Policy: the page loads images, media and connections from this server only.

Uploads: Gradio refuses files over `ingest.max_file_mb` as they arrive; its temp folder is
storage/ui-tmp/, emptied at every start, and an upload's temp copy is deleted once indexed or
refused (`discard_uploads`)."""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import shutil
import time
from collections import Counter, OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gradio as gr
from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api import build_api
from app.auth import check_password
from rag.pipeline import RagPipeline
from rag.settings import Settings

logger = logging.getLogger(__name__)

API_ROOT = "/v1"  # where the API (app/api.py) is mounted
ANSWERS = "answers"  # the concurrency group of every event that writes an answer (app/ui.py: queued)
SESSION_JS = Path(__file__).with_name("session.js")
_CSP = ("img-src 'self' data: blob:; media-src 'self' data: blob:; connect-src 'self'; object-src 'none'; "
        "base-uri 'self'; form-action 'self'; frame-ancestors 'self'")
_MAX_BODY = 16 * 2**20  # JSON bodies carry a question and its chat history, never a file
_MAX_SESSIONS = 50_000  # sessions whose owner is remembered (the oldest unused forgotten first)


def temp_folder(settings: Settings) -> Path:
    """Gradio's temp folder for this store, emptied: uploads and rendered pages of an earlier
    run, a killed one included, are gone. Set before any component exists (each caches its files
    in the folder named when it is made)."""
    folder = settings.storage_dir / "ui-tmp"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    os.environ["GRADIO_TEMP_DIR"] = str(folder)
    return folder


def discard_uploads(files: list[str]) -> None:
    """Delete uploads' temp copies (and the folders Gradio made for them), indexed or refused:
    otherwise any login could fetch them with their `file=` URL, deleted documents included."""
    for file in files:
        path = Path(file)
        path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # the folder Gradio made for it, once empty
            path.parent.rmdir()


@dataclass
class LoginThrottle:
    """Failed logins per key (a user name, a client address): `failures` of them within
    `lockout_s` lock the key for `lockout_s`, and a login naming a locked key is refused, the
    right password included. Attempts while locked do not extend the lock. A success clears
    its keys' failures."""

    failures: int
    lockout_s: float
    failed_at: dict[str, list[float]] = field(default_factory=dict)
    locked_until: dict[str, float] = field(default_factory=dict)

    def locked_for(self, keys: list[str], now: float) -> float:
        """Seconds until every key is unlocked (0: none is locked)."""
        return max([0.0] + [self.locked_until.get(key, 0.0) - now for key in keys])

    def failed(self, keys: list[str], now: float) -> list[str]:
        """Count a failure on each key; the keys it locked."""
        if len(self.failed_at) > 10_000:  # names an attacker made up must not pile up
            self.failed_at = {k: v for k, v in self.failed_at.items() if now - v[-1] < self.lockout_s}
            self.locked_until = {k: t for k, t in self.locked_until.items() if t > now}
        locked = []
        for key in keys:
            recent = [t for t in self.failed_at.get(key, []) if now - t < self.lockout_s] + [now]
            if len(recent) >= self.failures:
                self.locked_until[key] = now + self.lockout_s
                self.failed_at.pop(key, None)
                locked.append(key)
            else:
                self.failed_at[key] = recent
        return locked

    def succeeded(self, keys: list[str]) -> None:
        for key in keys:
            self.failed_at.pop(key, None)


def _replay(body: bytes, receive: Receive) -> Receive:
    """`receive` for an app downstream of a middleware that read the body first."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


class BodyTooLarge(Exception):
    pass


async def _read(receive: Receive, limit: int) -> bytes:
    body, more = b"", True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        body += message.get("body", b"")
        more = message.get("more_body", False)
        if len(body) > limit:
            raise BodyTooLarge
    return body


class Guard:
    """The ASGI middleware in front of the Gradio app (see the module docstring)."""

    def __init__(self, app: ASGIApp, demo: gr.Blocks, gradio_app: Any, settings: Settings) -> None:
        self.app, self.demo, self.gradio_app = app, demo, gradio_app
        self.users = bool(settings.ui.users)
        self.max_questions = settings.ui.max_questions
        self.throttle = LoginThrottle(settings.ui.login_failures, settings.ui.lockout_s)
        self.owners: OrderedDict[str, str] = OrderedDict()  # session hash -> the login that opened it
        self.joining: Counter[str] = Counter()  # questions between the guard and Gradio's queue

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = self._with_csp(send)
        path, method = scope["path"], scope["method"]
        if self.users and method == "POST" and path.rstrip("/") == "/login":
            await self._login(scope, receive, send)
            return
        if not path.startswith("/gradio_api/"):
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        user = self._user(request)
        if self.users and user is None:
            await JSONResponse({"detail": "Not logged in: log in first."}, 401)(scope, receive, send)
            return
        data: dict = {}
        if method == "POST" and request.headers.get("content-type", "").startswith("application/json"):
            try:
                body = await _read(receive, _MAX_BODY)
            except BodyTooLarge:
                await JSONResponse({"detail": "Request too large."}, 413)(scope, receive, send)
                return
            receive = _replay(body, receive)
            try:
                data = json.loads(body or b"{}")
            except ValueError:
                data = {}  # Gradio answers malformed JSON itself
            data = data if isinstance(data, dict) else {}
        refusal = self._foreign_session(request, data, user)
        question = self._question(path, data, user) if refusal is None else None
        if question is not None and self._pending(question) >= self.max_questions:
            refusal = 429, (f"You already have {self.max_questions} "
                            f"question{'s' * (self.max_questions > 1)} waiting or being answered, "
                            "as many as one login may: ask again when one is done.")
        if refusal is not None:
            await JSONResponse({"detail": refusal[1]}, refusal[0])(scope, receive, send)
            return
        if question is None:
            await self.app(scope, receive, send)
            return
        self.joining[question] += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.joining[question] -= 1

    def _with_csp(self, send: Send) -> Send:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []),
                                      (b"content-security-policy", _CSP.encode())]
            await send(message)

        return sending

    def _user(self, request: Request) -> str | None:
        """The login of Gradio's session cookie (as Gradio's own routes read it)."""
        cookie_id = self.gradio_app.cookie_id
        token = request.cookies.get(f"access-token-{cookie_id}") or request.cookies.get(
            f"access-token-unsecure-{cookie_id}")
        return self.gradio_app.tokens.get(token)

    def _foreign_session(self, request: Request, data: dict, user: str | None) -> tuple[int, str] | None:
        """(403, why) when the request names a session or event of another login; a session
        first named by a login is that login's."""
        if not self.users:
            return None
        sessions, events = _named(request, data)
        for session in sessions:
            owner = self.owners.setdefault(session, user)
            self.owners.move_to_end(session)
            if owner != user:
                logger.warning("refused: login %r named a session of login %r (%s)",
                               user, owner, request.url.path)
                return 403, "This session belongs to another login."
        while len(self.owners) > _MAX_SESSIONS:
            self.owners.popitem(last=False)
        queued = self.demo._queue.event_ids_to_events  # Gradio keeps each event's login on it
        for event_id in events:
            event = queued.get(event_id)
            if event is not None and event.username != user:
                logger.warning("refused: login %r named an event of login %r (%s)",
                               user, event.username, request.url.path)
                return 403, "This answer belongs to another login."
        return None

    def _question(self, path: str, data: dict, user: str | None) -> str | None:
        """Whose question this request asks (a login, else a session), or None when it asks none."""
        parts = path.rstrip("/").split("/")[2:]
        if parts == ["queue", "join"]:
            fn = self.demo.fns.get(data.get("fn_index"))
        elif len(parts) in (2, 3) and parts[0] == "call":  # /call/NAME and /call/v2/NAME start an event
            fn = next((f for f in self.demo.fns.values() if f.api_name == parts[-1]), None)
        else:
            return None
        if fn is None or fn.concurrency_id != ANSWERS:
            return None
        return user if self.users else data.get("session_hash")

    def _pending(self, key: str) -> int:
        """The questions `key` has waiting in Gradio's queue, being answered, or on their way in."""
        return self.joining[key] + sum(
            1 for event in _queued_events(self.demo)
            if event.concurrency_id == ANSWERS
            and (event.username if self.users else event.session_hash) == key
        )

    async def _login(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            body = await _read(receive, 64 * 1024)
        except BodyTooLarge:
            await JSONResponse({"detail": "Request too large."}, 413)(scope, receive, send)
            return
        form = await Request(scope, _replay(body, receive)).form()
        name = str(form.get("username") or "").strip()  # as Gradio's /login reads it
        address = (scope.get("client") or ("?",))[0]
        keys = [f"user {name!r}", f"address {address}"]
        wait = self.throttle.locked_for(keys, time.monotonic())
        if wait > 0:
            logger.warning("login refused, locked for %d s more: user %r from %s",
                           math.ceil(wait), name, address)
            # 400, as for a wrong password: the login page shows its message for that status only
            detail = f"Too many failed logins: locked for {math.ceil(wait)} s."
            await JSONResponse({"detail": detail}, 400)(scope, receive, send)
            return
        status: list[int] = []

        async def watching(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        await self.app(scope, _replay(body, receive), watching)
        if status == [200]:
            self.throttle.succeeded(keys)
        elif status == [400]:
            locked = self.throttle.failed(keys, time.monotonic())
            logger.warning("login failed: user %r from %s", name, address)
            for key in locked:
                logger.warning("login locked for %d s after %d failures: %s", self.throttle.lockout_s,
                               self.throttle.failures, key)


def _named(request: Request, data: dict) -> tuple[set[str], set[str]]:
    """The session hashes and event ids a Gradio API request names (body, query or path)."""
    sessions = {data.get("session_hash"), request.query_params.get("session_hash")}
    events = {data.get("event_id")}
    parts = request.url.path.rstrip("/").split("/")[2:]
    if len(parts) == 2 and parts[0] == "heartbeat":
        sessions.add(parts[1])
    elif len(parts) >= 2 and parts[0] == "stream":  # POST /stream/EVENT[/close]; GET /stream/SESSION/RUN/...
        (events if request.method == "POST" else sessions).add(parts[1])
    elif len(parts) >= 3 and parts[0] == "call" and request.method == "GET":  # /call/[v2/]NAME/EVENT
        events.add(parts[-1])
    return {s for s in sessions if isinstance(s, str)}, {e for e in events if isinstance(e, str)}


def _queued_events(demo: gr.Blocks) -> Iterator[Any]:
    """Every event in Gradio's queue, waiting or running (Gradio has no public view of it)."""
    queue = demo._queue
    for line in queue.event_queue_per_concurrency_id.values():
        yield from line.queue
    for job in queue.active_jobs:
        yield from job or []


def serve(demo: gr.Blocks, settings: Settings, host: str, port: int, css: str = "",
          pipeline: RagPipeline | None = None) -> None:
    """Run the queued Blocks (and, given the pipeline, the API) on host:port until stopped."""
    import uvicorn

    app = build_app(demo, settings, css, pipeline)
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # Open event streams (a tab left open) must not hold a stop for ever.
    uvicorn.run(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=5)


def build_app(demo: gr.Blocks, settings: Settings, css: str = "",
              pipeline: RagPipeline | None = None) -> Guard:
    """The ASGI app: Gradio mounted at / behind the Guard; given the pipeline, the API
    (app/api.py, its own keys) at /v1."""
    users = settings.ui.user_hashes()
    demo.delete_cache = (3600, 86400)  # besides the start's emptying: files of a day ago go every hour
    root = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    if pipeline is not None:
        root.mount(API_ROOT, build_api(pipeline, settings))  # before Gradio's "/", which takes the rest
    app = gr.mount_gradio_app(
        root, demo, path="/",
        auth=(lambda user, password: check_password(users, user, password)) if users else None,
        auth_message=(f"ragqa: log in with the account your administrator gave you. After "
                      f"{settings.ui.login_failures} failed logins the account and this address are locked "
                      f"for {settings.ui.lockout_s / 60:g} minutes.") if users else None,
        max_file_size=int(settings.ingest.max_file_mb * 2**20), ssr_mode=False, show_error=True, css=css,
        head=f"<script>{SESSION_JS.read_text(encoding='utf-8')}</script>",
    )
    gradio_app = next(route.app for route in app.routes
                      if isinstance(route, Mount) and route.path != API_ROOT)
    return Guard(app, demo, gradio_app, settings)
