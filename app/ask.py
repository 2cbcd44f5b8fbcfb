"""The Ask tab's handlers: the streamed answer, the chat's messages and follow-up turns, the
reference chips and their evidence, the threshold's re-check, feedback, and forgetting an answer."""

from __future__ import annotations

import queue
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import gradio as gr

from app.evidence import evidence
from app.feedback import FeedbackLog
from app.render import escape, location, render_segments, render_sources, unescape
from rag.answer import Answer
from rag.pipeline import QuestionError, RagPipeline
from rag.retrieval import FilterError, parse_where
from rag.settings import Settings

_DONE = object()


@dataclass
class Slots:
    """How many answers are written at once (`answer_limit`), shared by the UI and the API.
    `waiting`: the answers waiting for a slot now; `writing`: those in one."""

    limit: int
    waiting: int = 0
    writing: int = 0

    def __post_init__(self) -> None:
        self._free = threading.BoundedSemaphore(self.limit)
        self._count = threading.Lock()

    @contextmanager
    def held(self) -> Iterator[float]:
        """A slot, waited for; the seconds waited."""
        started = time.perf_counter()
        with self._count:
            self.waiting += 1
        try:
            self._free.acquire()
        finally:
            with self._count:
                self.waiting -= 1
        with self._count:
            self.writing += 1
        try:
            yield round(time.perf_counter() - started, 3)
        finally:
            with self._count:
                self.writing -= 1
            self._free.release()


_SLOTS: weakref.WeakKeyDictionary[RagPipeline, Slots] = weakref.WeakKeyDictionary()
_SLOTS_MADE = threading.Lock()


def answer_limit(settings: Settings) -> int:
    """Answers written at once: one llama.cpp model decodes one answer at a time; a server
    backend writes `[ui] concurrency`."""
    return 1 if settings.llm.backend == "llamacpp" else settings.ui.concurrency


def answer_slots(pipeline: RagPipeline) -> Slots:
    """The pipeline's one Slots."""
    with _SLOTS_MADE:
        return _SLOTS.setdefault(pipeline, Slots(answer_limit(pipeline.settings)))
CANNOT_ANSWER = "**Cannot answer:**"  # a question refused before it was asked (too long, a bad filter)
NO_EVIDENCE = "<p>Choose a reference to see its evidence.</p>"
Turn = tuple[str, str]


class AnswerAbandoned(Exception):
    """Raised inside the generation when nobody reads the answer any more."""


def answer_stream(
    pipeline: RagPipeline,
    question: str,
    docs: list[str] | None = None,
    where: dict[str, str] | None = None,
    history: list[Turn] | None = None,
    threshold: float | None = None,
    retrieve_k: int | None = None,
    keep_k: int | None = None,
) -> Iterator[str | Answer]:
    """Yield the growing answer text while the LLM writes it, then the finished Answer. When
    the reader stops (page reloaded, chat stopped: the generator is closed or dropped), the
    generation stops at its next token and frees the model."""
    tokens: queue.Queue = queue.Queue()
    result: dict = {}
    abandoned = threading.Event()

    def on_token(token: str) -> None:
        if abandoned.is_set():
            raise AnswerAbandoned
        tokens.put(token)

    def work() -> None:
        try:
            with answer_slots(pipeline).held():
                result["answer"] = pipeline.answer(question, on_token=on_token, docs=docs, where=where,
                                                   history=history or [], threshold=threshold,
                                                   retrieve_k=retrieve_k, keep_k=keep_k)
        except AnswerAbandoned:
            pass
        except Exception as error:  # shown to the user instead of a silent spinner
            result["error"] = error
        finally:
            tokens.put(_DONE)

    threading.Thread(target=work, daemon=True).start()
    try:
        text = ""
        while (token := tokens.get()) is not _DONE:
            text += token
            yield text
    finally:
        abandoned.set()
    if isinstance(result.get("error"), (QuestionError, FilterError)):
        raise result["error"]
    if "error" in result:
        raise gr.Error(f"ragqa failed: {result['error']}")
    yield result["answer"]


def questions(chat: list | None) -> int:
    """How many questions the chat's messages hold."""
    return sum((m if isinstance(m, dict) else vars(m)).get("role") == "user" for m in chat or [])


@dataclass(frozen=True)
class Conversation:
    """A session's (question, answer) turns for rewriting its follow-ups, kept as the CLI keeps
    them: never read back from the rendered chat, whose marks and wording are for readers. One
    entry per question in the chat, None for one without an answer (refused before it was asked,
    stopped), so the chat's undo, retry and clear, which cut its messages, cut the turns too."""

    turns: tuple[Turn | None, ...] = ()

    def history(self, chat: list | None) -> list[Turn]:
        """The answered turns of the questions now in `chat`."""
        return [turn for turn in self.turns[: questions(chat)] if turn]

    def answered(self, asked: int, answer: dict[str, Any]) -> Conversation:
        """With `answer` as the turn of the question after the first `asked`, none after it."""
        kept = self.turns[:asked] + (None,) * (asked - len(self.turns))
        return Conversation((*kept, (answer["standalone_question"] or answer["question"], answer["answer"])))


def text_questions(chatbot: gr.Chatbot) -> gr.Chatbot:
    """The chat, showing a user's question as typed: its Markdown and HTML are escaped on the way
    to the browser (a question's `![x](http://host/beacon.png)` fetches nothing) and unescaped on
    the way back, so handlers and the chat's history hold the question itself. (On the instance:
    Gradio writes a .pyi file beside the module of every Component subclass.)"""
    postprocess, preprocess = chatbot.postprocess, chatbot.preprocess

    def escaped(value):
        data = postprocess(value)
        for message in data.root:
            for part in message.content if message.role == "user" else []:
                if getattr(part, "type", None) == "text":
                    part.text = escape(part.text, True)
        return data

    def unescaped(payload):
        messages = preprocess(payload)
        for message in messages:
            for part in message["content"] if message["role"] == "user" else []:
                if part.get("type") == "text":
                    part["text"] = unescape(part["text"])
        return messages

    chatbot.postprocess, chatbot.preprocess = escaped, unescaped
    return chatbot


def chat_reply(answer: dict) -> list[gr.ChatMessage]:
    """An answer in the chat, with its own sources folded under it: an earlier answer's [n]
    keeps pointing at its own sources when later answers come."""
    reply = [gr.ChatMessage(role="assistant", content=render_segments(answer, markdown=True))]
    if answer["sources"]:
        reply.append(gr.ChatMessage(
            role="assistant", content=render_sources(answer, markdown=True),
            metadata={"title": "Sources", "status": "done"},
        ))
    return reply


def chat_handler(pipeline: RagPipeline):
    """The Ask tab's handler: (message, chat, documents, header filters, threshold, chunks
    retrieved, chunks kept, this session's Conversation) -> (chat, sources, the finished answer
    for this session's panels, the Conversation with its turn)."""

    def respond(
        message: str | None, history: list, docs: list[str] | None, where: str | None,
        threshold: float | None = None, retrieve_k: float | None = None, keep_k: float | None = None,
        conversation: Conversation | None = None,
    ) -> Iterator[tuple[str | list, str, dict | None, Conversation | dict]]:
        """Whatever the browser sends: None for an untouched box, blanks, malformed filters; a
        script's /chat call has no Conversation."""
        message = (message or "").strip()
        if not message:
            yield "Please type a question.", "", None, gr.skip()
            return
        conversation = conversation or Conversation()
        try:
            conditions = parse_where([c for c in (where or "").split(";") if c.strip()])
            updates = answer_stream(pipeline, message, list(docs or []) or None, conditions,
                                    conversation.history(history), threshold,
                                    int(retrieve_k) if retrieve_k else None, int(keep_k) if keep_k else None)
            for update in updates:
                if isinstance(update, Answer):
                    answer = update.to_dict()
                    yield (chat_reply(answer), render_sources(answer, markdown=True), answer,
                           conversation.answered(questions(history), answer))
                else:
                    yield escape(update, True), "*Writing the answer…*", None, gr.skip()
        except ValueError as error:  # a filter or question the user can fix
            yield f"{CANNOT_ANSWER} {escape(str(error), True)}", "", None, gr.skip()

    return respond


def replace_last_reply(history: list, answer: dict) -> list:
    """The chat with its last reply (everything after the last question) redrawn."""
    messages = [m if isinstance(m, dict) else vars(m) for m in history or []]
    last_question = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    return messages[: last_question + 1] + [vars(m) for m in chat_reply(answer)]


def rematch_handler(pipeline: RagPipeline):
    """The threshold's handler: the latest answer's references found again, its reply and turn
    redrawn."""

    def rematch(threshold: float, answer: dict | None, history: list,
                conversation: Conversation | None) -> tuple:
        if not answer:
            return gr.skip(), gr.skip(), gr.skip(), gr.skip()
        redone = pipeline.rematch(Answer.from_dict(answer), threshold).to_dict()
        turns = (conversation or Conversation()).answered(questions(history) - 1, redone)
        return replace_last_reply(history, redone), render_sources(redone, markdown=True), redone, turns

    return rematch


def rating_handler(feedback: FeedbackLog, settings: Settings, rating: str) -> Callable:
    """Helpful or Not helpful, with the comment, about the latest answer."""

    def rate(answer: dict | None, comment: str, request: gr.Request) -> tuple[str, str]:
        if not answer:
            return "Ask a question first: feedback is about the latest answer.", comment
        feedback.add(answer, rating, comment or "", settings, getattr(request, "username", None))
        return f"Thank you: feedback ({'helpful' if rating == 'up' else 'not helpful'}) saved.", ""

    return rate


def reference_chips(answer: dict | None) -> dict:
    """One chip per (segment, reference) of the answer: 'S1 [2] report.pdf, p. 3 (0.83)'."""
    if not answer:
        return gr.update(choices=[], value=None)
    choices = [
        (f"S{i + 1} [{ref['ref']}] {location(ref)} ({ref['score']:.2f})", f"{i}:{ref['ref']}")
        for i, segment in enumerate(answer["segments"]) if segment["supported"]
        for ref in segment["references"]
    ]
    return gr.update(choices=choices, value=None)


def forget(note: str = "") -> tuple:
    """Clear, undo or stop: the latest answer is gone, and its panels and rating with it."""
    return None, note, reference_chips(None), NO_EVIDENCE, gr.update(value=None, visible=False), None, ""


def show_evidence(settings: Settings, answer: dict | None, chip: str | None) -> tuple[str, dict]:
    """The evidence view for a chip ('segment:ref')."""
    if not answer or not chip:
        return NO_EVIDENCE, gr.update(value=None, visible=False)
    index, ref = (int(part) for part in chip.split(":"))
    source = next(s for s in answer["sources"] if s["ref"] == ref)
    segment = answer["segments"][index]["text"]
    view = evidence(settings, source, segment)
    return view.html, gr.update(value=view.image, visible=view.image is not None)
