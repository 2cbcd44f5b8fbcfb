"""The Gradio UI (`ragqa serve`): the whole page's layout and its events; the handlers live in
one module per tab.

- Ask (app/ask.py): the chat streams an answer, then shows each segment with its references or
  its unsupported mark, and a refusal with the gate that refused. Beside it, the latest answer's
  references as chips: choosing one shows the evidence (app/evidence.py: the chunk with the
  shared words marked, its place, the PDF page with the chunk's lines boxed, a slide's text).
  The reference threshold re-runs only the matcher on the same answer; timings on demand;
  thumbs up or down with a comment (app/feedback.py).
- Documents (app/documents.py): upload (type and size checked before anything is copied) with
  progress and per-file errors, the indexed documents with chunk counts and dates, delete. The
  pipeline's retrievers follow every change without a restart (RagPipeline.current_retriever).
- Reports (app/reports.py): the evaluation run folders with their plots, two runs side by side.

Every chat, its (question, answer) turns and its latest answer belong to one browser session
(gr.State); nothing a session sees is shared with another. Every document text and model output
is shown as text.
"""

from __future__ import annotations

import gradio as gr

from app.ask import (
    NO_EVIDENCE,
    Conversation,
    answer_limit,
    chat_handler,
    forget,
    rating_handler,
    reference_chips,
    rematch_handler,
    show_evidence,
    text_questions,
)
from app.documents import DOCUMENT_COLUMNS, Documents, document_rows
from app.feedback import FeedbackLog
from app.render import escape
from app.server import ANSWERS, serve, temp_folder
from rag.pipeline import RagPipeline
from rag.settings import Settings

_CSS = """
.evidence-text { white-space: pre-wrap; font-size: 0.92em; }
.evidence-text mark { background: #ffd966; padding: 0 1px; }
#question:has(textarea:disabled)::after {
  content: "Writing the answer: ask your next question when it is done, \
or press the stop button (■) to stop it.";
  display: block; padding: 2px 10px 4px; font-size: 0.85em; color: #555;
}
"""


def build_ui(pipeline: RagPipeline) -> gr.Blocks:
    settings = pipeline.settings
    feedback = FeedbackLog.of(settings)
    documents = Documents(settings)
    fields = ", ".join(settings.headers.fields[:2]) or "Region"
    # The choices as the page is built, for scripts (gradio_client) that never load the page;
    # ids indexed later are allowed too and checked by the handlers against the index.
    indexed_ids = [row[0] for row in document_rows(settings)]
    with gr.Blocks(title="ragqa", analytics_enabled=False) as demo:
        last = gr.State(None)  # this session's latest answer (an Answer's dict)
        conversation = gr.State(Conversation())  # this session's turns, for rewriting follow-ups
        _account(settings)
        with gr.Tab("Ask"):
            sources = gr.Markdown(render=False, elem_id="sources")
            doc_choice = gr.Dropdown(
                indexed_ids, multiselect=True, label="Only these documents", info="Empty: all documents.",
                render=False, allow_custom_value=True,
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
            top_n = gr.Slider(5, 100, value=settings.retrieval.retrieve_k, step=5,
                              label="Chunks retrieved (top-n)",
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
                        additional_outputs=[sources, last, conversation],
                        additional_inputs=[doc_choice, where, threshold, top_n, top_k, conversation],
                        additional_inputs_accordion="Filters",
                        title="ragqa",
                        description="Answers from your documents only; each segment shows the "
                        "sources that support it, and unsupported segments are marked.",
                        analytics_enabled=False,
                        fill_height=True,
                        # The same answers for scripts: gradio_client's submit(..., api_name="/chat").
                        api_name="chat",
                    )
                    with gr.Row(elem_id="feedback"):
                        comment = gr.Textbox(placeholder="Optional comment on the latest answer",
                                             show_label=False, scale=4)
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
            files = gr.File(label="PDF, PPTX, DOCX, HTML, Markdown, CSV, JSON, XLSX, text",
                            file_count="multiple", type="filepath", elem_id="upload")
            button = gr.Button("Add to the index", variant="primary")
            result = gr.Markdown(elem_id="ingest-report")
            # Widths and wrapping: a 200-character file name must not push the other columns away.
            table = gr.Dataframe(headers=DOCUMENT_COLUMNS, interactive=False, elem_id="documents", wrap=True,
                                 column_widths=["28%", "7%", "14%", "26%", "25%"])
            with gr.Row():
                doomed = gr.Dropdown(indexed_ids, multiselect=True, label="Documents to delete", scale=4,
                                     elem_id="delete-choice", allow_custom_value=True)
                remove = gr.Button("Delete from the index", variant="stop", scale=1)
            button.click(documents.upload, inputs=files, outputs=[result, table, doomed, doc_choice])
            remove.click(documents.delete, inputs=doomed, outputs=[result, table, doomed, doc_choice])
        with gr.Tab("Reports"):
            _reports_tab(settings)

        last.change(lambda a: (reference_chips(a), (a or {}).get("timings_ms")), last, [chips, timings])
        chips.change(lambda a, c: show_evidence(settings, a, c), [last, chips], [evidence_view, page])
        threshold.change(rematch_handler(pipeline), [threshold, last, chat.chatbot, conversation],
                         [chat.chatbot, sources, last, conversation], trigger_mode="always_last")
        up.click(rating_handler(feedback, settings, "up"), [last, comment], [thanks, comment])
        down.click(rating_handler(feedback, settings, "down"), [last, comment], [thanks, comment])
        panels = [last, sources, chips, evidence_view, page, timings, thanks]
        chat.chatbot.clear(forget, outputs=panels, queue=False, api_visibility="private")
        chat.chatbot.undo(forget, outputs=panels, queue=False, api_visibility="private")
        chat.textbox.stop(lambda: forget("*Stopped: the answer was not finished, so nothing backs it.*"),
                          outputs=panels, queue=False, api_visibility="private")
        # Every page load lists the documents indexed now, uploads since the start included.
        demo.load(documents.listing, outputs=[table, doomed, doc_choice])
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
    other = gr.Dropdown(run_folders(settings), value=None, label="Compare with (optional)",
                        elem_id="run-other")
    refresh = gr.Button("Refresh the list")
    report = gr.Markdown(elem_id="report")
    plots = gr.Gallery(label="Plots", columns=2, object_fit="contain", height=520, preview=False,
                       elem_id="plots")
    runs.change(lambda r: show_run(settings, r), runs, [report, plots])
    other.change(lambda a, b: compare(settings, a, b) if a and b else show_run(settings, a), [runs, other],
                 [report, plots])
    refresh.click(lambda: (gr.update(choices=run_folders(settings)),) * 2, outputs=[runs, other])


def queued(demo: gr.Blocks, settings: Settings) -> gr.Blocks:
    """The UI's queue: one llama.cpp model decodes one answer at a time, so the embedded backend
    serves one and the others wait, shown their place; a server backend serves `[ui] concurrency`.
    Every event that writes an answer (the browser's chat, its retry, the /chat endpoint for
    scripts) waits in one line, app.server.ANSWERS, where `[ui] max_questions` applies; and the
    REST routes do not skip the queue (Gradio's api_open)."""
    limit = answer_limit(settings)
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
    pipeline = RagPipeline(settings)
    demo = queued(build_ui(pipeline), settings)
    keyed = " (key required)" if ui.users or ui.api_keys else ""
    print(f"ragqa UI: http://{host}:{port}" + (" (login required)" if ui.users else "")
          + f"; API: http://{host}:{port}/v1{keyed}", flush=True)
    serve(demo, settings, host, port, css=_CSS, pipeline=pipeline)
