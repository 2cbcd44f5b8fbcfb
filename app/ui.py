"""The Gradio chat UI: streamed answers, per-segment references and a sources panel."""

from __future__ import annotations

import queue
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import gradio as gr

from app.render import render_segments, render_sources
from rag.pipeline import Answer, RagPipeline
from rag.settings import Settings

_DONE = object()


def answer_stream(
    pipeline: RagPipeline, question: str, docs: list[str] | None = None, where: dict[str, str] | None = None
) -> Iterator[str | Answer]:
    """Yield the growing answer text while the LLM writes it, then the finished Answer."""
    tokens: queue.Queue = queue.Queue()
    result: dict = {}

    def work() -> None:
        try:
            result["answer"] = pipeline.answer(question, on_token=tokens.put, docs=docs, where=where)
        except Exception as error:  # shown to the user instead of a silent spinner
            result["error"] = error
        finally:
            tokens.put(_DONE)

    threading.Thread(target=work, daemon=True).start()
    text = ""
    while (token := tokens.get()) is not _DONE:
        text += token
        yield text
    if "error" in result:
        raise gr.Error(f"ragqa failed: {result['error']}")
    yield result["answer"]


def index_uploads(settings: Settings, files: list[str], progress: gr.Progress | None = None) -> str:
    """Copy uploaded files under storage/uploads (their names are their doc ids) and index them."""
    from ingestion.pipeline import ingest

    if not files:
        return "Choose one or more files first."
    uploads = settings.storage_dir / "uploads"
    uploads.mkdir(parents=True, exist_ok=True)
    paths = []
    for file in files:
        target = uploads / Path(file).name
        shutil.copyfile(file, target)
        paths.append(target)

    def report_progress(done: int, total: int, current: str) -> None:
        if progress is not None:
            progress((done, total), desc=f"indexing {current}" if current else "done", unit="files")

    report = ingest(paths, settings, progress=False, on_progress=report_progress)
    lines = [report.summary().splitlines()[0]]
    lines += [f"- **{Path(f['file']).name}**: {f['reason']}" for f in report.failed]
    return "\n\n".join(lines)


def indexed_documents(settings: Settings) -> list[str]:
    from rag.store import collection

    return sorted({meta["doc"] for meta in collection(settings).get(include=["metadatas"])["metadatas"]})


def build_ui(pipeline: RagPipeline) -> gr.Blocks:
    from rag.retrieval import parse_where

    def respond(message: str, history: list, docs: list[str] | None, where: str) -> Iterator[tuple[str, str]]:
        if not message.strip():
            yield "Please type a question.", ""
            return
        try:
            conditions = parse_where([c for c in where.split(";") if c.strip()])
        except ValueError as error:
            yield f"Filters: {error}", ""
            return
        for update in answer_stream(pipeline, message, docs or None, conditions):
            if isinstance(update, Answer):
                answer = update.to_dict()
                yield render_segments(answer, markdown=True), render_sources(answer, markdown=True)
            else:
                yield update, "*Writing the answer…*"

    def upload(files: list[str] | None, progress=gr.Progress()) -> tuple[str, dict]:
        report = index_uploads(pipeline.settings, files or [], progress)
        return report, gr.update(choices=indexed_documents(pipeline.settings))

    fields = ", ".join(pipeline.settings.headers.fields[:2]) or "Region"
    with gr.Blocks(title="ragqa", analytics_enabled=False) as demo:
        with gr.Tab("Ask"):
            sources = gr.Markdown(render=False, elem_id="sources")
            doc_choice = gr.Dropdown(
                indexed_documents(pipeline.settings), multiselect=True, label="Only these documents",
                info="Empty: all documents.", render=False,
            )
            where = gr.Textbox(
                label="Header filters", placeholder="FIELD=VALUE; FIELD=VALUE",
                info=f"Only documents whose header fields (e.g. {fields}) equal these values.", render=False,
            )
            with gr.Row():
                with gr.Column(scale=3):
                    gr.ChatInterface(
                        respond,
                        additional_outputs=[sources],
                        additional_inputs=[doc_choice, where],
                        additional_inputs_accordion=gr.Accordion("Filters", open=False),
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
    return demo


def launch(settings: Settings, port: int = 7860) -> None:
    demo = build_ui(RagPipeline(settings))
    print(f"ragqa UI: http://127.0.0.1:{port}", flush=True)
    demo.queue(default_concurrency_limit=1).launch(
        server_name="127.0.0.1", server_port=port, share=False, inbrowser=False, ssr_mode=False,
        show_error=True,
    )
