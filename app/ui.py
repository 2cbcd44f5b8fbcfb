"""The Gradio UI (`ragqa serve`).

- Ask: the chat streams an answer, then shows each segment with its references or its
  unsupported mark, and a refusal with the gate that refused. Beside it, the latest answer's
  references as chips: choosing one shows the evidence (app/evidence.py: the chunk with the
  shared words marked, its place, the PDF page with the chunk's lines boxed, a slide's text).
  The reference threshold re-runs only the matcher on the same answer; timings on demand;
  thumbs up or down with a comment (app/feedback.py).
- Documents: upload (type and size checked before anything is copied) with progress and
  per-file errors, the indexed documents with chunk counts and dates, delete. The pipeline's
  retrievers follow every change without a restart (RagPipeline.current_retriever).
- Reports: the evaluation run folders with their plots, two runs side by side.

Every chat and its latest answer belong to one browser session (gr.State); nothing a session
sees is shared with another. Every document text and model output is shown as text.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr

from app.evidence import evidence
from app.feedback import FeedbackLog
from app.render import escape, location, render_segments, render_sources, unescape
from app.server import ANSWERS, discard_uploads, serve, temp_folder
from rag.pipeline import Answer, QuestionError, RagPipeline
from rag.retrieval import FilterError, parse_where
from rag.settings import Settings

_DONE = object()
CANNOT_ANSWER = "**Cannot answer:**"  # a question refused before it was asked (too long, a bad filter)
_CSS = """
.evidence-text { white-space: pre-wrap; font-size: 0.92em; }
.evidence-text mark { background: #ffd966; padding: 0 1px; }
#question:has(textarea:disabled)::after {
  content: "Writing the answer: ask your next question when it is done, or press the stop button (■) to stop it.";
  display: block; padding: 2px 10px 4px; font-size: 0.85em; color: #555;
}
"""


class AnswerAbandoned(Exception):
    """Raised inside the generation when nobody reads the answer any more."""


def answer_stream(
    pipeline: RagPipeline,
    question: str,
    docs: list[str] | None = None,
    where: dict[str, str] | None = None,
    history: list[tuple[str, str]] | None = None,
    threshold: float | None = None,
    top_n: int | None = None,
    top_k: int | None = None,
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
            result["answer"] = pipeline.answer(question, on_token=on_token, docs=docs, where=where,
                                               history=history or [], threshold=threshold, top_n=top_n, top_k=top_k)
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


def index_uploads(settings: Settings, files: list[str], progress: gr.Progress | None = None) -> str:
    """Copy uploaded files under storage/uploads and index them. A file of the wrong type or
    size is not copied; a failed file leaves no copy (and an earlier upload of the same name is
    kept); replacing a document is said. Only the file's base name is used: an upload cannot
    write outside storage/uploads."""
    from ingestion.convert import DocumentLoadError, check_file
    from ingestion.pipeline import ingest
    from rag.store import Store, StoreBusyError, StoreError

    if not files:
        return "Choose one or more files first."
    uploads = Store(settings).uploads_dir
    uploads.mkdir(parents=True, exist_ok=True)
    staged: list[tuple[Path, Path | None]] = []  # (copy, the earlier upload it displaced)
    refused: list[str] = []
    for file in files:
        name = Path(file).name
        try:
            check_file(Path(file), settings.ingest)
        except DocumentLoadError as error:
            refused.append(f"- **{escape(name, True)}**: {escape(str(error), True)}")
            continue
        target = uploads / name
        earlier = None
        if target.exists():
            earlier = target.with_name(f".{target.name}.earlier")
            os.replace(target, earlier)
        shutil.copyfile(file, target)
        staged.append((target, earlier))
    if not staged:
        return "\n\n".join(["Nothing was indexed."] + refused)

    def report_progress(done: int, total: int, current: str) -> None:
        if progress is not None:
            progress((done, total), desc=f"indexing {current}" if current else "done", unit="files")

    try:
        report = ingest([target for target, _ in staged], settings, progress=False, on_progress=report_progress)
    except (StoreBusyError, StoreError) as error:
        failed = {str(target) for target, _ in staged}
        message = f"Nothing was indexed: {escape(str(error), True)}."
    else:  # a copy of an indexed file is not indexed, so its upload is not kept either
        failed = {f["file"] for f in report.failed} | {d["file"] for d in report.duplicates}
        message = ""
    for target, earlier in staged:
        if str(target) in failed:
            target.unlink()
            if earlier is not None:
                os.replace(earlier, target)
        elif earlier is not None:
            earlier.unlink()
    if message:
        return message
    lines = [report.summary().splitlines()[0]]
    for target, _ in staged:
        doc_id = report.doc_ids.get(str(target))
        if str(target) in failed:
            continue
        if doc_id in report.replaced:
            lines.append(f"- **{escape(target.name, True)}** replaced the earlier upload of the same name")
        elif doc_id != target.name:
            lines.append(f"- **{escape(target.name, True)}** is indexed as **{escape(doc_id, True)}**: another document "
                         "of that name is already indexed and was kept")
    lines += [f"- **{escape(Path(f['file']).name, True)}**: {escape(f['reason'], True)}" for f in report.failed]
    lines += [f"- **{escape(Path(d['file']).name, True)}**: same content as **{escape(d['same_as'], True)}**, "
              "not indexed twice" for d in report.duplicates]
    return "\n\n".join(lines + refused)


def document_rows(settings: Settings) -> list[list[Any]]:
    """The Documents tab's table: id, chunks, indexed (UTC), file name (not the server's path)."""
    from ingestion.pipeline import indexed_documents

    return [[d.doc, d.chunks, d.indexed.replace("T", " ").replace("+00:00", "") or "-", Path(d.source).name]
            for d in indexed_documents(settings)]


def _documents_update(settings: Settings) -> tuple[list[list[Any]], dict, dict]:
    rows = document_rows(settings)
    ids = [row[0] for row in rows]
    return rows, gr.update(choices=ids, value=[]), gr.update(choices=ids)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # Gradio's [{"type": "text", "text": ...}] form
        return " ".join(_text(part) for part in content)
    return str(content.get("text", "")) if isinstance(content, dict) else ""


def turns(history: list) -> list[tuple[str, str]]:
    """(question, answer) pairs from the chat's messages, for rewriting a follow-up: the folded
    sources, the refusal's reason and the reference marks are left out, and so is a question
    refused before it was asked (too long, a bad filter): it would poison every follow-up."""
    pairs, question = [], None
    for message in history:
        message = message if isinstance(message, dict) else vars(message)
        if (message.get("metadata") or {}).get("title"):
            continue
        text = _text(message.get("content"))
        if message.get("role") == "user":
            question = text
        elif message.get("role") == "assistant" and question:
            if not text.startswith(CANNOT_ANSWER):
                text = re.sub(r"\s*\*\((?:refs|unsupported)[^)]*\)\*", "", text)
                text = re.sub(r"\s*\*Refused: [^*]*\*", "", text)
                text = re.sub(r"^\*Understood as: (?:\\.|[^*])*\*\s*", "", text)
                pairs.append((question, unescape(text).strip()))
            question = None
    return pairs


def chat_handler(pipeline: RagPipeline):
    """The Ask tab's handler: (message, history, documents, header filters, threshold, chunks
    retrieved, chunks kept) -> (chat, sources, the finished answer for this session's panels)."""

    def respond(
        message: str | None, history: list, docs: list[str] | None, where: str | None, threshold: float | None = None,
        top_n: float | None = None, top_k: float | None = None,
    ) -> Iterator[tuple[str | list, str, dict | None]]:
        """Whatever the browser sends: None for an untouched box, blanks, malformed filters."""
        message = (message or "").strip()
        if not message:
            yield "Please type a question.", "", None
            return
        try:
            conditions = parse_where([c for c in (where or "").split(";") if c.strip()])
            updates = answer_stream(pipeline, message, list(docs or []) or None, conditions, turns(history or []), threshold,
                                    int(top_n) if top_n else None, int(top_k) if top_k else None)
            for update in updates:
                if isinstance(update, Answer):
                    answer = update.to_dict()
                    yield chat_reply(answer), render_sources(answer, markdown=True), answer
                else:
                    yield escape(update, True), "*Writing the answer…*", None
        except ValueError as error:  # a filter or question the user can fix
            yield f"{CANNOT_ANSWER} {escape(str(error), True)}", "", None

    return respond


def reference_chips(answer: dict | None) -> dict:
    """One chip per (segment, reference) of the answer: 'S1 [2] report.pdf, p. 3 (0.83)'."""
    if not answer:
        return gr.update(choices=[], value=None)
    choices = [
        (f"S{i + 1} [{ref['ref']}] {location(ref)} ({ref['score']:.2f})", f"{i}:{ref['ref']}")
        for i, segment in enumerate(answer["segments"]) if segment["supported"] for ref in segment["references"]
    ]
    return gr.update(choices=choices, value=None)


NO_EVIDENCE = "<p>Choose a reference to see its evidence.</p>"


def show_evidence(settings: Settings, answer: dict | None, chip: str | None) -> tuple[str, dict]:
    """The evidence view for a chip ('segment:ref')."""
    if not answer or not chip:
        return NO_EVIDENCE, gr.update(value=None, visible=False)
    index, ref = (int(part) for part in chip.split(":"))
    source = next(s for s in answer["sources"] if s["ref"] == ref)
    segment = answer["segments"][index]["text"]
    view = evidence(settings, source, segment)
    return view.html, gr.update(value=view.image, visible=view.image is not None)


def replace_last_reply(history: list, answer: dict) -> list:
    """The chat with its last reply (everything after the last question) redrawn."""
    messages = [m if isinstance(m, dict) else vars(m) for m in history or []]
    last_question = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    return messages[: last_question + 1] + [vars(m) if not isinstance(m, dict) else m for m in chat_reply(answer)]


def build_ui(pipeline: RagPipeline) -> gr.Blocks:
    settings = pipeline.settings
    feedback = FeedbackLog.of(settings)

    def upload(files: list[str] | None, progress=gr.Progress()) -> tuple:
        try:
            report = index_uploads(settings, files or [], progress)
        finally:
            discard_uploads(files or [])
        return (report, *_documents_update(settings))

    def delete(docs: list[str] | None) -> tuple:
        from ingestion.pipeline import remove
        from rag.store import StoreBusyError

        if not docs:
            return ("Choose the documents to delete first.", *_documents_update(settings))
        try:
            removed = remove(list(docs), settings)
        except StoreBusyError as error:
            return (f"Nothing was deleted: {escape(str(error), True)}.", *_documents_update(settings))
        # Ids as text, not code spans: an escaped name in backticks would show its escapes.
        lines = [f"Deleted {len(removed)}: " + ", ".join(f"**{escape(d, True)}**" for d in removed)]
        if missing := [d for d in docs if d not in removed]:  # a script may name any id (gradio_client)
            lines.append("Not indexed, so not deleted: " + ", ".join(f"**{escape(d, True)}**" for d in missing))
        return ("\n\n".join(lines), *_documents_update(settings))

    def rematch(threshold: float, answer: dict | None, history: list) -> tuple:
        if not answer:
            return gr.skip(), gr.skip(), gr.skip()
        redone = pipeline.rematch(Answer(**answer), threshold).to_dict()
        return replace_last_reply(history, redone), render_sources(redone, markdown=True), redone

    def rate(rating: str):
        def handler(answer: dict | None, comment: str, request: gr.Request) -> tuple[str, str]:
            if not answer:
                return "Ask a question first: feedback is about the latest answer.", comment
            feedback.add(answer, rating, comment or "", settings, getattr(request, "username", None))
            return f"Thank you: feedback ({'helpful' if rating == 'up' else 'not helpful'}) saved.", ""
        return handler

    def forget(note: str = "") -> tuple:
        """Clear, undo or stop: the latest answer is gone, and its panels and rating with it."""
        return None, note, reference_chips(None), NO_EVIDENCE, gr.update(value=None, visible=False), None, ""

    fields = ", ".join(settings.headers.fields[:2]) or "Region"
    # The choices as the page is built, for scripts (gradio_client) that never load the page;
    # ids indexed later are allowed too and checked by the handlers against the index.
    indexed_ids = [row[0] for row in document_rows(settings)]
    with gr.Blocks(title="ragqa", analytics_enabled=False) as demo:
        last = gr.State(None)  # this session's latest answer (an Answer's dict)
        _account(settings)
        with gr.Tab("Ask"):
            sources = gr.Markdown(render=False, elem_id="sources")
            doc_choice = gr.Dropdown(
                indexed_ids, multiselect=True, label="Only these documents", info="Empty: all documents.", render=False,
                allow_custom_value=True,
            )
            where = gr.Textbox(
                label="Header filters", placeholder="FIELD=VALUE; FIELD=VALUE",
                info=f"Only documents whose header fields (e.g. {fields}) equal these values.", render=False,
            )
            threshold = gr.Slider(
                0.05, 0.95, value=settings.support.threshold, step=0.05, label="Reference threshold",
                info="How strongly a source must back a segment; changing it re-checks the latest answer.",
                render=False, elem_id="threshold",
            )
            top_n = gr.Slider(5, 100, value=settings.retrieval.retrieve_k, step=5, label="Chunks retrieved (top-n)",
                              info="Candidates from dense + BM25 before reranking.", render=False)
            top_k = gr.Slider(1, 10, value=settings.retrieval.keep_k, step=1, label="Chunks kept (top-k)",
                              info="After reranking; the context's token budget still applies.", render=False)
            with gr.Row():
                with gr.Column(scale=3):
                    chat = gr.ChatInterface(
                        chat_handler(pipeline),
                        chatbot=text_questions(gr.Chatbot(label="Chatbot", scale=1)),
                        textbox=gr.Textbox(
                            placeholder="Ask a question about your documents", elem_id="question",
                            show_label=False, submit_btn=True, stop_btn=True, scale=7,
                        ),
                        additional_outputs=[sources, last],
                        additional_inputs=[doc_choice, where, threshold, top_n, top_k],
                        additional_inputs_accordion="Filters",
                        title="ragqa",
                        description="Answers from your documents only; each segment shows the "
                        "sources that support it, and unsupported segments are marked.",
                        analytics_enabled=False,
                        fill_height=True,
                        api_name="chat",  # the same answers for scripts: gradio_client's submit(..., api_name="/chat")
                    )
                    with gr.Row(elem_id="feedback"):
                        comment = gr.Textbox(placeholder="Optional comment on the latest answer", show_label=False, scale=4)
                        up = gr.Button("Helpful", scale=1, elem_id="thumbs-up")
                        down = gr.Button("Not helpful", scale=1, elem_id="thumbs-down")
                    thanks = gr.Markdown(elem_id="feedback-status")
                with gr.Column(scale=2):
                    chips = gr.Radio([], label="References of the latest answer", elem_id="chips")
                    evidence_view = gr.HTML(NO_EVIDENCE, elem_id="evidence")
                    # No label: Gradio draws it over the image's top; the evidence above names the page.
                    page = gr.Image(visible=False, interactive=False, elem_id="page-image", show_label=False)
                    with gr.Accordion("Sources", open=True):
                        sources.render()
                    with gr.Accordion("Timings (ms)", open=False):
                        timings = gr.JSON(elem_id="timings")
        with gr.Tab("Documents"):
            files = gr.File(label="PDF, PPTX, DOCX, HTML, Markdown, CSV, JSON, XLSX, text", file_count="multiple",
                            type="filepath", elem_id="upload")
            button = gr.Button("Add to the index", variant="primary")
            result = gr.Markdown(elem_id="ingest-report")
            # Widths and wrapping: a 200-character file name must not push the other columns away.
            table = gr.Dataframe(headers=["document", "chunks", "indexed (UTC)", "file"], interactive=False,
                                 elem_id="documents", wrap=True, column_widths=["38%", "8%", "16%", "38%"])
            with gr.Row():
                doomed = gr.Dropdown(indexed_ids, multiselect=True, label="Documents to delete", scale=4,
                                     elem_id="delete-choice", allow_custom_value=True)
                remove = gr.Button("Delete from the index", variant="stop", scale=1)
            button.click(upload, inputs=files, outputs=[result, table, doomed, doc_choice])
            remove.click(delete, inputs=doomed, outputs=[result, table, doomed, doc_choice])
        with gr.Tab("Reports"):
            _reports_tab(settings)

        last.change(lambda a: (reference_chips(a), (a or {}).get("timings_ms")), last, [chips, timings])
        chips.change(lambda a, c: show_evidence(settings, a, c), [last, chips], [evidence_view, page])
        threshold.change(rematch, [threshold, last, chat.chatbot], [chat.chatbot, sources, last], trigger_mode="always_last")
        up.click(rate("up"), [last, comment], [thanks, comment])
        down.click(rate("down"), [last, comment], [thanks, comment])
        panels = [last, sources, chips, evidence_view, page, timings, thanks]
        chat.chatbot.clear(forget, outputs=panels, queue=False, api_visibility="private")
        chat.chatbot.undo(forget, outputs=panels, queue=False, api_visibility="private")
        chat.textbox.stop(lambda: forget("*Stopped: the answer was not finished, so nothing backs it.*"),
                          outputs=panels, queue=False, api_visibility="private")
        # Every page load lists the documents indexed now, uploads since the start included.
        demo.load(lambda: _documents_update(settings), outputs=[table, doomed, doc_choice])
    return demo


def _account(settings: Settings) -> None:
    """With logins: who is logged in, and a logout (Gradio's /logout ends every session of it)."""
    if not settings.ui.users:
        return
    with gr.Row(elem_id="account"):
        who = gr.Markdown(elem_id="logged-in-as")
        gr.Button("Log out", link="logout", size="sm", scale=0, min_width=100, elem_id="logout")

    def logged_in_as(request: gr.Request) -> str:
        return f"Logged in as **{escape(request.username or '', True)}**"

    gr.on(None, logged_in_as, outputs=who)  # on every page load


def _reports_tab(settings: Settings) -> None:
    """Evaluators' run folders (storage/reports/*) with report.md and plots; two side by side."""
    from app.reports import compare, run_folders, show_run

    runs = gr.Dropdown(run_folders(settings), value=None, label="Run", elem_id="run-choice")
    other = gr.Dropdown(run_folders(settings), value=None, label="Compare with (optional)", elem_id="run-other")
    refresh = gr.Button("Refresh the list")
    report = gr.Markdown(elem_id="report")
    plots = gr.Gallery(label="Plots", columns=2, object_fit="contain", height=520, preview=False, elem_id="plots")
    runs.change(lambda r: show_run(settings, r), runs, [report, plots])
    other.change(lambda a, b: compare(settings, a, b) if a and b else show_run(settings, a), [runs, other], [report, plots])
    refresh.click(lambda: (gr.update(choices=run_folders(settings)),) * 2, outputs=[runs, other])


def queued(demo: gr.Blocks, settings: Settings) -> gr.Blocks:
    """The UI's queue: one llama.cpp model decodes one answer at a time, so the embedded backend
    serves one and the others wait, shown their place; a server backend serves `[ui] concurrency`.
    Every event that writes an answer (the browser's chat, its retry, the /chat endpoint for
    scripts) waits in one line, app.server.ANSWERS, where `[ui] max_questions` applies; and the
    REST routes do not skip the queue (Gradio's api_open)."""
    limit = settings.ui.concurrency if settings.llm.backend != "llamacpp" else 1
    asking = next(fn for fn in demo.fns.values() if fn.api_name == "chat")
    handler = getattr(asking.fn, "__wrapped__", asking.fn)  # ChatInterface wraps the chat handler
    for fn in demo.fns.values():
        if fn is asking or getattr(fn.fn, "__wrapped__", None) is handler:
            fn.concurrency_id, fn.concurrency_limit = ANSWERS, limit
    return demo.queue(default_concurrency_limit=limit, api_open=False)


def launch(settings: Settings, port: int | None = None, host: str | None = None) -> None:
    ui = settings.ui
    host, port = host or ui.host, port or ui.port
    temp_folder(settings)  # before build_ui: Gradio's components cache their files in it
    demo = queued(build_ui(RagPipeline(settings)), settings)
    print(f"ragqa UI: http://{host}:{port}" + (" (login required)" if ui.users else ""), flush=True)
    serve(demo, settings, host, port, css=_CSS)
