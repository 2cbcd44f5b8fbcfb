"""The OpenAI-compatible API that `ragqa serve` mounts at /v1 beside the UI, so Open WebUI, scripts
and the `openai` client can ask ragqa, citations included:

- `GET /v1/models`: the one model, `ragqa`.
- `POST /v1/chat/completions`, streamed or not: the last user message is the question, the earlier
  user and assistant messages its chat history (a follow-up is rewritten to stand alone, as in the
  UI); system messages are ignored (the answer prompt is the fork's). The reply's content is the
  checked answer with its `[n]` references (or the refusal), and the extension field `ragqa` holds
  the whole Answer (docs/FORMATS.md). A stream sends the checked answer, never the draft: the
  matcher drops or unmarks what no source supports only once the draft is complete.
- `GET /v1/documents`: the indexed documents.
- `GET /v1/openapi.json`: the schema.

Keys (`ragqa api-key USER`): with `[ui] users` or `[ui] api_keys` set, every route needs
`Authorization: Bearer KEY`, and a request without a valid one gets 401 and nothing else; without
either (one person on 127.0.0.1, as the UI without logins) no key is asked. Only each key's
SHA-256 is kept: a key is 32 random bytes, out of reach of guessing, so a slow hash buys nothing.

Answers wait their turn with the UI's (`app.ask.answer_slots`): one at a time on the embedded
model. The `X-Ragqa-Ahead` header says how many answers were waiting or being written when the
request came, and `ragqa.waited_s` how long it waited for its turn.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
import uuid
from collections.abc import Iterator
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from app.ask import answer_slots
from ingestion.pipeline import indexed_documents
from rag.answer import Answer
from rag.currency import standings
from rag.pipeline import QuestionError, RagPipeline
from rag.retrieval import FilterError
from rag.settings import Settings

MODEL = "ragqa"
_SCHEME = "sha256"
_KEY_PREFIX = "rqa_"


def new_key() -> str:
    """A fresh API key: 32 random bytes, URL-safe."""
    return _KEY_PREFIX + secrets.token_urlsafe(32)


def key_hash(key: str) -> str:
    """'sha256$HEX' of the key, as `[ui] api_keys` keeps it."""
    return f"{_SCHEME}${hashlib.sha256(key.encode()).hexdigest()}"


class Message(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str
    content: str | list[dict[str, Any]] | None = None

    @property
    def text(self) -> str:
        """The content's text; of a list of parts (OpenAI's content parts), its text parts."""
        if isinstance(self.content, list):
            return "\n".join(str(p.get("text", "")) for p in self.content if p.get("type") == "text")
        return self.content or ""


class ChatRequest(BaseModel):
    """OpenAI's request; its sampling fields (temperature, max_tokens, ...) are accepted and left to
    the fork's `[llm]` settings."""

    model_config = ConfigDict(extra="allow")

    model: str = MODEL
    messages: list[Message] = Field(min_length=1)
    stream: bool = False


def conversation(messages: list[Message]) -> tuple[str, list[tuple[str, str]]]:
    """(the question: the last message, a user's; the (question, answer) turns before it)."""
    said = [m for m in messages if m.role in ("user", "assistant")]
    if not said or said[-1].role != "user" or not said[-1].text.strip():
        raise ValueError("the last message must be the user's question")
    history, asked = [], None
    for message in said[:-1]:
        if message.role == "user":
            asked = message.text
        elif asked is not None:
            history.append((asked, message.text))
            asked = None
    return said[-1].text, history


class Keys:
    """Who a request's bearer key belongs to; `required` when the server has users or keys."""

    def __init__(self, settings: Settings) -> None:
        self.users = settings.ui.key_hashes()  # 'sha256$HEX' -> user
        self.required = bool(settings.ui.users or self.users)

    def __call__(self, request: Request) -> str | None:
        """The key's user (None when no key is required); 401 without a valid key."""
        if not self.required:
            return None
        scheme, _, key = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and key:
            wanted = key_hash(key.strip())
            for stored, user in self.users.items():
                if hmac.compare_digest(stored, wanted):
                    return user
        raise HTTPException(401, "A valid API key is required (Authorization: Bearer KEY).",
                            headers={"WWW-Authenticate": "Bearer"})


def build_api(pipeline: RagPipeline, settings: Settings) -> FastAPI:
    """The /v1 application."""
    api = FastAPI(title="ragqa", description=__doc__, docs_url=None, redoc_url=None, openapi_url=None)
    keys = Keys(settings)
    slots = answer_slots(pipeline)

    @api.get("/openapi.json", include_in_schema=False)
    def schema(user: str | None = Depends(keys)) -> dict[str, Any]:
        return api.openapi()  # behind the key like the rest: a request without one learns nothing

    @api.exception_handler(HTTPException)
    async def error(request: Request, exc: HTTPException) -> JSONResponse:
        # OpenAI's error shape: its client raises the matching exception with this message.
        return JSONResponse({"error": {"message": exc.detail, "type": "invalid_request_error",
                                       "code": exc.status_code}}, exc.status_code, headers=exc.headers)

    @api.get("/models")
    def models(user: str | None = Depends(keys)) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": MODEL}]}

    @api.get("/documents")
    def documents(user: str | None = Depends(keys)) -> dict[str, Any]:
        rows = indexed_documents(settings)
        currency = standings(rows)
        return {"object": "list", "data": [{"id": row.doc, "chunks": row.chunks, "indexed": row.indexed,
                                             "currency": currency[row.doc] or None} for row in rows]}

    @api.post("/chat/completions", response_model=None)
    def chat(body: ChatRequest, user: str | None = Depends(keys)) -> JSONResponse | StreamingResponse:
        try:
            question, history = conversation(body.messages)
        except ValueError as problem:
            raise HTTPException(400, str(problem)) from None
        ahead = {"X-Ragqa-Ahead": str(slots.waiting + slots.writing)}  # answers before this one
        if body.stream:
            return StreamingResponse(_streamed(pipeline, question, history), media_type="text/event-stream",
                                     headers=ahead)
        answer, waited = _answered(pipeline, question, history)
        reply = _completion("chat.completion", {"message": {"role": "assistant", "content": answer.answer}},
                            "stop")
        return JSONResponse({**reply, "usage": _USAGE, MODEL: {**answer.to_dict(), "waited_s": waited}},
                            headers=ahead)

    return api


_USAGE = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}  # not counted


def _answered(pipeline: RagPipeline, question: str, history: list[tuple[str, str]]) -> tuple[Answer, float]:
    """The Answer, and the seconds it waited for a slot; 400 for a question the pipeline refuses
    to take (too long, a bad filter)."""
    try:
        with answer_slots(pipeline).held() as waited:
            return pipeline.answer(question, history=history), waited
    except (QuestionError, FilterError) as problem:
        raise HTTPException(400, str(problem)) from None


def _completion(kind: str, choice: dict[str, Any], finish: str | None, ident: str = "") -> dict[str, Any]:
    return {"id": ident or f"chatcmpl-{uuid.uuid4().hex}", "object": kind, "created": int(time.time()),
            "model": MODEL, "choices": [{"index": 0, **choice, "finish_reason": finish}]}


def _streamed(pipeline: RagPipeline, question: str, history: list[tuple[str, str]]) -> Iterator[str]:
    """Server-sent events: the role at once, the checked answer in pieces once it is ready, a last
    chunk with the whole Answer, then [DONE]. A refused question's reason is its content."""
    ident = f"chatcmpl-{uuid.uuid4().hex}"

    def event(choice: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        chunk = {**_completion("chat.completion.chunk", choice, finish, ident), **extra}
        return f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"

    yield event({"delta": {"role": "assistant", "content": ""}})
    try:
        answer, waited = _answered(pipeline, question, history)
    except HTTPException as problem:
        yield event({"delta": {"content": str(problem.detail)}}, "stop")
    else:
        for piece in _pieces(answer.answer):
            yield event({"delta": {"content": piece}})
        yield event({"delta": {}}, "stop", **{MODEL: {**answer.to_dict(), "waited_s": waited}})
    yield "data: [DONE]\n\n"


def _pieces(text: str, size: int = 8) -> Iterator[str]:
    """The text in runs of `size` words, spaces kept: joined, they are the text."""
    words = text.split(" ")
    for i in range(0, len(words), size):
        yield " ".join(words[i:i + size]) + (" " if i + size < len(words) else "")
