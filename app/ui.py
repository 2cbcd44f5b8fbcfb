"""The Gradio chat UI: streamed answers, per-segment references and a sources panel."""

from __future__ import annotations

import os
import re
import queue
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr

from app.render import escape, render_segments, render_sources
from rag.pipeline import Answer, QuestionError, RagPipeline
from rag.retrieval import FilterError, parse_where
from rag.settings import Settings

_DONE = object()


class AnswerAbandoned(Exception):
    """Raised inside the generation when nobody reads the answer any more."""


def answer_stream(
    pipeline: RagPipeline,
    question: str,
    docs: list[str] | None = None,
    where: dict[str, str] | None = None,
    history: list[tuple[str, str]] | None = None,
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
            result["answer"] = pipeline.answer(question, on_token=on_token, docs=docs, where=where, history=history or [])
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
    """Copy uploaded files under storage/uploads and index them. A failed file leaves no copy
    (and an earlier upload of the same name is kept); replacing a document is said."""
    from ingestion.pipeline import ingest
    from rag.store import StoreBusyError

    if not files:
        return "Choose one or more files first."
    uploads = settings.storage_dir / "uploads"
    uploads.mkdir(parents=True, exist_ok=True)
    staged: list[tuple[Path, Path | None]] = []  # (copy, the earlier upload it displaced)
    for file in files:
        target = uploads / Path(file).name
        earlier = None
        if target.exists():
            earlier = target.with_name(f".{target.name}.earlier")
            os.replace(target, earlier)
        shutil.copyfile(file, target)
        staged.append((target, earlier))

    def report_progress(done: int, total: int, current: str) -> None:
        if progress is not None:
            progress((done, total), desc=f"indexing {current}" if current else "done", unit="files")

    try:
        report = ingest([target for target, _ in staged], settings, progress=False, on_progress=report_progress)
    except StoreBusyError as error:
        failed = {str(target) for target, _ in staged}
        message = f"Nothing was indexed: {error}."
    else:
        failed = {f["file"] for f in report.failed}
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
        doc_id = report.doc_ids[str(target)]
        if doc_id in report.replaced:
            lines.append(f"- **{escape(target.name, True)}** replaced the earlier upload of the same name")
        elif doc_id != target.name:
            lines.append(f"- **{escape(target.name, True)}** is indexed as `{doc_id}`: another document "
                         "of that name is already indexed and was kept")
    lines += [f"- **{escape(Path(f['file']).name, True)}**: {escape(f['reason'], True)}" for f in report.failed]
    return "\n\n".join(lines)


def indexed_documents(settings: Settings) -> list[str]:
    from rag.store import collection, document_ids

    return document_ids(collection(settings))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # Gradio's [{"type": "text", "text": ...}] form
        return " ".join(_text(part) for part in content)
    return str(content.get("text", "")) if isinstance(content, dict) else ""


def turns(history: list) -> list[tuple[str, str]]:
    """(question, answer) pairs from the chat's messages, for rewriting a follow-up: the folded
    sources and the reference marks are left out."""
    pairs, question = [], None
    for message in history:
        message = message if isinstance(message, dict) else vars(message)
        if (message.get("metadata") or {}).get("title"):
            continue
        text = _text(message.get("content"))
        if message.get("role") == "user":
            question = text
        elif message.get("role") == "assistant" and question:
            text = re.sub(r"\s*\*\((?:refs|unsupported)[^)]*\)\*", "", text)
            pairs.append((question, re.sub(r"^\*Understood as: [^*]*\*\s*", "", text)))
            question = None
    return pairs


def chat_handler(pipeline: RagPipeline):
    """The Ask tab's handler: (message, history, documents, header filters) -> (chat, sources)."""

    def respond(
        message: str | None, history: list, docs: list[str] | None, where: str | None
    ) -> Iterator[tuple[str | list, str]]:
        """Whatever the browser sends: None for an untouched box, blanks, malformed filters."""
        message = (message or "").strip()
        if not message:
            yield "Please type a question.", ""
            return
        try:
            conditions = parse_where([c for c in (where or "").split(";") if c.strip()])
            for update in answer_stream(pipeline, message, list(docs or []) or None, conditions, turns(history or [])):
                if isinstance(update, Answer):
                    answer = update.to_dict()
                    yield chat_reply(answer), render_sources(answer, markdown=True)
                else:
                    yield escape(update, True), "*Writing the answer…*"
        except ValueError as error:  # a filter or question the user can fix
            yield f"**Cannot answer:** {escape(str(error), True)}", ""

    return respond


def build_ui(pipeline: RagPipeline) -> gr.Blocks:
    def upload(files: list[str] | None, progress=gr.Progress()) -> tuple[str, dict]:
        report = index_uploads(pipeline.settings, files or [], progress)
        return report, gr.update(choices=indexed_documents(pipeline.settings))

    fields = ", ".join(pipeline.settings.headers.fields[:2]) or "Region"
    with gr.Blocks(title="ragqa", analytics_enabled=False) as demo:
        with gr.Tab("Ask"):
            sources = gr.Markdown(render=False, elem_id="sources")
            doc_choice = gr.Dropdown(
                [], multiselect=True, label="Only these documents", info="Empty: all documents.", render=False,
            )
            where = gr.Textbox(
                label="Header filters", placeholder="FIELD=VALUE; FIELD=VALUE",
                info=f"Only documents whose header fields (e.g. {fields}) equal these values.", render=False,
            )
            with gr.Row():
                with gr.Column(scale=3):
                    gr.ChatInterface(
                        chat_handler(pipeline),
                        textbox=gr.Textbox(
                            placeholder="Ask a question about your documents", elem_id="question",
                            show_label=False, submit_btn=True, scale=7,
                        ),
                        additional_outputs=[sources],
                        additional_inputs=[doc_choice, where],
                        additional_inputs_accordion="Filters",
                        title="ragqa",
                        description="Answers from your documents only; each segment shows the "
                        "sources that support it, and unsupported segments are marked.",
                        analytics_enabled=False,
                        fill_height=True,
                    )
                with gr.Column(scale=2):
                    sources.render()
        with gr.Tab("Documents"):
            files = gr.File(label="PDF, PPTX, DOCX, HTML, Markdown, CSV, JSON, XLSX, text", file_count="multiple", type="filepath")
            button = gr.Button("Add to the index", variant="primary")
            result = gr.Markdown(elem_id="ingest-report")
            button.click(upload, inputs=files, outputs=[result, doc_choice])
        # Every page load lists the documents indexed now, uploads since the start included.
        demo.load(lambda: gr.update(choices=indexed_documents(pipeline.settings)), outputs=doc_choice)
    return demo


def launch(settings: Settings, port: int = 7860) -> None:
    demo = build_ui(RagPipeline(settings))
    print(f"ragqa UI: http://127.0.0.1:{port}", flush=True)
    demo.queue(default_concurrency_limit=1).launch(
        server_name="127.0.0.1", server_port=port, share=False, inbrowser=False, ssr_mode=False,
        show_error=True,
    )
