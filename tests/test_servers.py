"""The production paths against real servers on loopback: an OpenAI-compatible LLM server
(llama.cpp's, which speaks vLLM's protocol) and a Chroma server."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import BATTERY_Q, free_port, fresh_settings

from ingestion.pipeline import ingest
from rag.pipeline import RagPipeline
from rag.settings import ServerSettings

pytestmark = pytest.mark.slow


@contextmanager
def server(command: list[str], health_url: str, log: Path, timeout: float = 180):
    """Run a server until the block ends; its output goes to `log` (a pipe would fill and block)."""
    with log.open("w") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{command[0]} exited: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(health_url, timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{health_url} did not answer in {timeout} s") from None
                time.sleep(1)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture(scope="module")
def llm_server(indexed, tmp_path_factory):
    """llama.cpp's OpenAI-compatible server on loopback, standing in for vLLM."""
    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(indexed.gguf_path),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096",
        "--model_alias", "qwen2.5-coder-1.5b-instruct", "--chat_format", "chatml",
    ]
    log = tmp_path_factory.mktemp("llm-server") / "llm-server.log"
    with server(command, f"http://127.0.0.1:{port}/v1/models", log):
        yield {"backend": "server", "server": ServerSettings(
            api_base=f"http://127.0.0.1:{port}/v1", model="qwen2.5-coder-1.5b-instruct", timeout_s=300)}


def test_server_backend_against_openai_compatible_server(indexed, llm_server):
    settings = fresh_settings(indexed, indexed.storage_dir, llm=llm_server)
    pipeline = RagPipeline(settings)
    assert type(pipeline.llm).__name__ == "OpenAILike"
    answer = pipeline.answer(BATTERY_Q).to_dict()
    assert answer["answerable"] is True and "61" in answer["answer"]
    assert any(r["doc"] == "battery.md" for s in answer["segments"] for r in s["references"]), answer


def test_llm_verifier_judges_support_not_similarity(indexed, llm_server):
    """The server's model as the matcher's support scorer: a paraphrase and a translation are
    supported, a changed number and an unrelated statement are not."""
    from rag.support import support_scorer

    settings = fresh_settings(indexed, indexed.storage_dir, llm=llm_server, support={"method": "llm"})
    verifier = support_scorer(settings, None)
    assert verifier.kind == "llm-verifier"
    chunk = ("A steel nail of 3 mm diameter was driven through cell 14 of the Orion battery pack at 80 mm/s. "
             "The cell temperature peaked at 61 degrees Celsius and no thermal runaway occurred.")
    korean = "측면 충돌 시험에서 B필러는 142 mm 침입했다. 목표치는 120 mm였다."
    same, paraphrase, wrong, unrelated, translated, wrong_translated = verifier([
        ("The cell temperature peaked at 61 degrees Celsius.", chunk),
        ("The cell got as hot as 61 °C.", chunk),
        ("The cell temperature peaked at 71 degrees Celsius.", chunk),
        ("The cafeteria opens at 7:30.", chunk),
        ("The B-pillar intruded 142 mm in the side impact test.", korean),
        ("The B-pillar intruded 152 mm in the side impact test.", korean),
    ])
    threshold = settings.support.threshold
    assert min(same, paraphrase, translated) > threshold, (same, paraphrase, translated)
    assert max(wrong, unrelated, wrong_translated) < threshold, (wrong, unrelated, wrong_translated)
    answer = RagPipeline(settings).answer(BATTERY_Q).to_dict()
    assert answer["answerable"] and any(s["supported"] for s in answer["segments"]), answer
    with pytest.raises(ValueError, match="needs llm.backend"):
        support_scorer(fresh_settings(indexed, indexed.storage_dir, support={"method": "llm"}), None)


def test_chroma_http_client(base_settings, corpus, tmp_path, pipeline):
    chroma = shutil.which("chroma", path=str(Path(sys.executable).parent))
    assert chroma, "the chroma CLI comes with chromadb"
    port = free_port()
    command = [chroma, "run", "--path", str(tmp_path / "chroma-server"), "--host", "127.0.0.1",
               "--port", str(port)]
    with server(command, f"http://127.0.0.1:{port}/api/v2/heartbeat", tmp_path / "chroma-server.log"):
        settings = fresh_settings(
            base_settings, tmp_path / "storage", store={"chroma_url": f"http://127.0.0.1:{port}"}
        )
        report = ingest([corpus], settings, progress=False)
        assert report.indexed == 2
        assert not (settings.storage_dir / "chroma").exists()  # the server holds the vectors
        answer = RagPipeline(settings, llm=pipeline.llm).answer(BATTERY_Q).to_dict()
    assert answer["answerable"] is True
    assert answer["sources"][0]["doc"] == "battery.md"


def test_the_ui_serves_several_users_at_once_with_a_server_backend(indexed, llm_server):
    """With the vLLM backend the UI's queue lets `[ui] concurrency` answers run at once (the
    embedded model's one-at-a-time queue is the browser tests')."""
    import threading

    from gradio_client import Client

    from app.ui import build_ui, queued

    settings = fresh_settings(indexed, indexed.storage_dir, llm=llm_server, ui={"concurrency": 2})
    demo = queued(build_ui(RagPipeline(settings)), settings)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    spans: dict[int, list[float]] = {}
    try:
        def ask(number: int, question: str) -> None:
            job = Client(f"http://127.0.0.1:{port}/", verbose=False).submit(question, [], "", 0.5, 20, 5,
                                                                            api_name="/chat")
            started = None
            while not job.done():
                if started is None and job.status().code.name in ("PROCESSING", "ITERATING"):
                    started = time.perf_counter()
                time.sleep(0.02)
            assert job.result()
            spans[number] = [started or time.perf_counter(), time.perf_counter()]

        threads = [threading.Thread(target=ask, args=(i, q)) for i, q in
                   enumerate([BATTERY_Q, "What does the staff cafeteria serve on Fridays?"])]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)
    finally:
        demo.close()
    assert len(spans) == 2, spans
    (start_a, end_a), (start_b, end_b) = spans[0], spans[1]
    assert start_a < end_b and start_b < end_a, spans  # both were being answered at the same time


@pytest.fixture(scope="module")
def embedding_server(base_settings, tmp_path_factory):
    """`ragqa embed-server` on loopback, serving the configured local embedder without prefixes."""
    port = free_port()
    backend = base_settings.embedding.backend
    command = [sys.executable, "-m", "app.cli", "embed-server", "--port", str(port), "--backend", backend]
    log = tmp_path_factory.mktemp("embed-server") / "embed-server.log"
    with server(command, f"http://127.0.0.1:{port}/v1/models", log):
        yield {"api_base": f"http://127.0.0.1:{port}/v1", "backend": backend}


def _embedder(base_settings, server: dict | None = None, **embedding):
    from rag.models import build_embedding

    settings = base_settings.model_copy(deep=True)
    if server:
        embedding["server"] = settings.embedding.server.model_copy(update=server)
    settings.embedding = settings.embedding.model_copy(update=embedding)
    return build_embedding(settings)


def test_server_embedding_backend_gives_the_local_vectors(base_settings, embedding_server):
    """The server backend adds the e5 prefixes itself and batches: 10 texts in requests of 4."""
    import numpy as np

    local = _embedder(base_settings, backend=embedding_server["backend"])
    remote = _embedder(base_settings, backend="server", server={"api_base": embedding_server["api_base"]},
                       batch_size=4)
    texts = [f"{word} 충돌 시험 {i}: the crash test ran at {50 + i} km/h."
             for i, word in enumerate("abcdefghij")]
    passages = np.asarray(remote.get_text_embedding_batch(texts))
    assert passages.shape == (10, 384)
    assert np.einsum("ij,ij->i", passages, np.asarray(local.get_text_embedding_batch(texts))).min() > 0.999
    query = "How fast was the crash test?"
    assert np.dot(remote.get_query_embedding(query), local.get_query_embedding(query)) > 0.999
    # Many queries in one call (the bi-encoder scorer's path) go in batches too.
    queries = np.asarray(remote._embed(texts, prompt_name="query"))
    assert np.einsum("ij,ij->i", queries, np.asarray(local._embed(texts, prompt_name="query"))).min() > 0.999


def _post(url: str, body: dict) -> tuple[int, dict]:
    import json
    import urllib.error

    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_embedding_server_counts_what_it_embeds_and_refuses_what_it_cannot_serve(base_settings,
                                                                                  embedding_server):
    """usage counts the tokens embedded (an input is cut to the model's window, as locally);
    `dimensions` other than the model's, too many or too long inputs, a malformed body or
    another model get OpenAI's error body, at once."""
    from tokenizers import Tokenizer

    from app.embed_server import MAX_INPUT_CHARS, MAX_INPUTS
    from rag.prepare_e5 import E5_MAX_TOKENS

    url, model = embedding_server["api_base"] + "/embeddings", base_settings.embedding.server.model
    tokenizer = Tokenizer.from_file(str(base_settings.embedding_path / "tokenizer.json"))
    short, long = "The crash test ran at 56 km/h.", "The crash test ran at 56 km/h. " * 400  # 3,600 tokens
    status, body = _post(url, {"model": model, "input": [short, long]})
    assert status == 200, body
    window = len(tokenizer.encode(long).ids[:E5_MAX_TOKENS])
    assert body["usage"]["prompt_tokens"] == len(tokenizer.encode(short).ids) + window < len(
        tokenizer.encode(long).ids)
    size = len(body["data"][0]["embedding"])
    # the model's own: honoured
    assert _post(url, {"model": model, "input": short, "dimensions": size})[0] == 200

    def refused(request: dict, status: int, param: str | None, needle: str) -> None:
        started = time.monotonic()
        got, body = _post(url, {"model": model} | request)
        assert got == status and set(body) == {"error"}, body
        assert body["error"]["type"] == "invalid_request_error" and body["error"]["param"] == param, body
        assert needle in body["error"]["message"], body
        assert time.monotonic() - started < 10  # refused before embedding anything

    refused({"input": short, "dimensions": 128}, 400, "dimensions", f"have {size} dimensions")
    refused({"input": ["a text"] * (MAX_INPUTS + 1)}, 413, "input", f"at most {MAX_INPUTS}")
    refused({"input": [short, "x" * 1_000_000]}, 400, "input",
            f"input 1 has 1,000,000 characters; at most {MAX_INPUT_CHARS:,}")
    refused({"input": []}, 400, "input", "input is empty")
    refused({"input": 5}, 400, "input", "input")
    refused({"model": "other", "input": short}, 404, "model", "is not served here")


def test_dead_embedding_server_is_named_within_the_timeout(base_settings):
    from rag.embeddings import EmbeddingServerError

    url = f"http://127.0.0.1:{free_port()}/v1"
    remote = _embedder(base_settings, backend="server",
                       server={"api_base": url, "timeout_s": 5.0, "max_retries": 2})
    start = time.monotonic()
    with pytest.raises(EmbeddingServerError, match="refused the connection at " + url.replace(".", r"\.")):
        remote.get_query_embedding("Anyone there?")
    assert time.monotonic() - start < 5.0
