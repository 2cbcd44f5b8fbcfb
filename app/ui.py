"""The Gradio chat UI: streamed answers, per-segment references and a sources panel."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator

import gradio as gr

from app.render import render_segments, render_sources
from rag.pipeline import Answer, RagPipeline
from rag.settings import Settings

_DONE = object()


def answer_stream(pipeline: RagPipeline, question: str) -> Iterator[str | Answer]:
    """Yield the growing answer text while the LLM writes it, then the finished Answer."""
    tokens: queue.Queue = queue.Queue()
    result: dict = {}

    def work() -> None:
        try:
            result["answer"] = pipeline.answer(question, on_token=tokens.put)
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


def build_ui(pipeline: RagPipeline) -> gr.Blocks:
    def respond(message: str, history: list) -> Iterator[tuple[str, str]]:
        if not message.strip():
            yield "Please type a question.", ""
            return
        for update in answer_stream(pipeline, message):
            if isinstance(update, Answer):
                answer = update.to_dict()
                yield render_segments(answer, markdown=True), render_sources(answer, markdown=True)
            else:
                yield update, "*Writing the answer…*"

    with gr.Blocks(title="ragqa", analytics_enabled=False) as demo:
        sources = gr.Markdown(render=False, elem_id="sources")
        with gr.Row():
            with gr.Column(scale=3):
                gr.ChatInterface(
                    respond,
                    additional_outputs=[sources],
                    title="ragqa",
                    description="Answers from your documents only; each segment shows the sources "
                    "that support it, and unsupported segments are marked.",
                    analytics_enabled=False,
                    fill_height=True,
                )
            with gr.Column(scale=2):
                sources.render()
    return demo


def launch(settings: Settings, port: int = 7860) -> None:
    demo = build_ui(RagPipeline(settings))
    print(f"ragqa UI: http://127.0.0.1:{port}", flush=True)
    demo.queue(default_concurrency_limit=1).launch(
        server_name="127.0.0.1", server_port=port, share=False, inbrowser=False, ssr_mode=False,
        show_error=True,
    )
