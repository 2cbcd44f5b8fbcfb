"""Shared fixtures: the prepared models (shared), a fresh store per test module, one LLM."""

from __future__ import annotations

import ipaddress
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback

import rag  # noqa: F401  (offline environment first)
from rag.prepare import prepare_models
from rag.settings import Settings, load_settings

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample"
BATTERY_Q = "What peak cell temperature was reached in the nail penetration test of the Orion pack?"
UNRELATED_Q = "Who won the football world cup in 1954?"


class ScriptedLLM(CustomLLM):
    """Replays fixed replies: retry logic needs malformed output on demand."""

    replies: list[str]
    prompts: list[str] = []

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata()

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs) -> CompletionResponse:
        self.prompts.append(prompt)
        return CompletionResponse(text=self.replies[len(self.prompts) - 1])

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs):
        reply = self.complete(prompt).text
        yield CompletionResponse(text=reply, delta=reply)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def base_settings() -> Settings:
    """Settings of the repo's ragqa.toml with the models prepared (idempotent)."""
    settings = load_settings()
    prepare_models(settings)
    return settings


def fresh_settings(base: Settings, storage: Path, **sections) -> Settings:
    """A copy of `base` whose run-time state lives in `storage`; models stay shared."""
    settings = base.model_copy(deep=True)
    settings.storage_dir = storage
    for section, values in sections.items():
        setattr(settings, section, getattr(settings, section).model_copy(update=values))
    return settings


def fixture_store(base: Settings, tmp_path_factory, name: str, documents: int) -> Settings:
    """tests/fixtures/`name` copied and ingested into a fresh store, all `documents` indexed."""
    from ingestion.pipeline import ingest

    folder = tmp_path_factory.mktemp(name)
    shutil.copytree(FIXTURES / name, folder / "docs")
    settings = fresh_settings(base, folder / "storage")
    report = ingest([folder / "docs"], settings, progress=False)
    assert report.indexed == documents and not report.failed
    return settings


def lookup_over(base_settings, tmp_path_factory, folder: str | Path, documents: int):
    """A cell lookup over a fresh store of the fixture folder (or a folder written by the test),
    asked as the pipeline asks it: with the corpus's codes, the reranked candidates, a newer
    version or erratum first. Returns (answer(question), store)."""
    from llama_index.core.llms import MockLLM
    from llama_index.core.schema import QueryBundle

    from ingestion.pipeline import ingest
    from rag.cells import CellLookup
    from rag.codes import CorpusCodes
    from rag.currency import CurrentFirst
    from rag.models import build_embedding
    from rag.postprocessors import build_rerank_stage
    from rag.retrieval import hybrid_retriever
    from rag.store import Store

    source = folder if isinstance(folder, Path) else FIXTURES / folder
    settings = fresh_settings(base_settings, tmp_path_factory.mktemp(source.name))
    assert ingest([source], settings, progress=False).indexed == documents
    store, embedding = Store(settings), build_embedding(settings)
    retriever = hybrid_retriever(settings, embedding, MockLLM())
    reranker = build_rerank_stage(settings, store, embedding)
    current = CurrentFirst.from_settings(settings, store)
    codes = CorpusCodes.from_settings(settings, store.lexical)
    lookup = CellLookup.from_settings(settings, store, current.newer, codes.codes)

    def answer(question: str):
        question = codes.expand(question)
        query = QueryBundle(question)
        found = reranker.postprocess_nodes(retriever.retrieve(query), query_bundle=query)
        before = {node.node.node_id: i for i, node in enumerate(found)}
        ranked = current.prefer(found, len(found), lambda missed: [])
        lifted = frozenset(n.node.node_id for i, n in enumerate(ranked) if before[n.node.node_id] > i)
        return lookup.answer(question, ranked, lifted)

    return answer, store


def ranking(settings: Settings):
    """question -> (the chunks retrieved, the candidates reranked from them), as the pipeline ranks
    them before any LLM call (the LLM is never called)."""
    from llama_index.core.llms import MockLLM
    from llama_index.core.schema import QueryBundle

    from rag.models import build_embedding
    from rag.postprocessors import build_rerank_stage
    from rag.retrieval import hybrid_retriever
    from rag.store import Store

    embedding = build_embedding(settings)
    retriever = hybrid_retriever(settings, embedding, MockLLM())
    reranker = build_rerank_stage(settings, Store(settings), embedding)

    def rank(question: str):
        query = QueryBundle(question)
        retrieved = retriever.retrieve(query)
        return retrieved, reranker.postprocess_nodes(retrieved, query_bundle=query)

    return rank


def cli(monkeypatch, settings: Settings, *args: str):
    """`ragqa ARGS` in this process (the models stay loaded), on `settings`' store and models."""
    return cli_input(monkeypatch, settings, None, *args)


def cli_input(monkeypatch, settings: Settings, stdin: str | None, *args: str):
    """`ragqa ARGS` as `cli`, reading `stdin`."""
    from typer.testing import CliRunner

    from app.cli import app

    monkeypatch.setenv("RAGQA_STORAGE_DIR", str(settings.storage_dir))
    monkeypatch.setenv("RAGQA_MODELS_DIR", str(settings.models_dir))
    return CliRunner().invoke(app, list(args), input=stdin)


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    for name in ("battery.md", "cafeteria.md"):
        shutil.copy(FIXTURES / name, folder / name)
    return folder


@pytest.fixture(scope="session")
def indexed(base_settings, corpus, tmp_path_factory) -> Settings:
    """The two fixture documents ingested into a fresh on-disk Chroma store."""
    from ingestion.pipeline import ingest

    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("storage"))
    report = ingest([corpus], settings, progress=False)
    assert report.indexed == 2 and not report.failed
    return settings


@pytest.fixture(scope="session")
def sample_indexed(base_settings, tmp_path_factory) -> Settings:
    """The sample corpus (data/sample, 17 files of six formats) in a fresh store: big enough that
    the right chunk is one of many that share its topic and wording."""
    from ingestion.pipeline import ingest

    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("sample"))
    report = ingest([SAMPLE / "docs"], settings, progress=False)
    assert report.failed == [] and report.indexed == report.files >= 17
    return settings


@pytest.fixture(scope="session")
def pipeline(indexed):
    from rag.pipeline import RagPipeline

    return RagPipeline(indexed)


def _loopback(host) -> bool:
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture
def no_network(monkeypatch):
    """Every non-loopback connect or name lookup fails; the attempts are listed."""
    attempts: list = []
    real_connect, real_connect_ex, real_getaddrinfo = (socket.socket.connect, socket.socket.connect_ex,
                                                       socket.getaddrinfo)

    def guard(address):
        if isinstance(address, tuple) and not _loopback(address[0]):
            attempts.append(address)
            raise ConnectionRefusedError(f"test forbids connecting to {address}")

    def connect(self, address):
        guard(address)
        return real_connect(self, address)

    def connect_ex(self, address):
        guard(address)
        return real_connect_ex(self, address)

    def getaddrinfo(host, *args, **kwargs):
        guard((host, 0))
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return attempts


def pytest_configure(config):
    config.addinivalue_line("markers", "debian(*packages): the test needs these Debian packages "
                                       "(scripts/debian-packages)")


_missing_packages: set[str] | None = None


@pytest.hookimpl(tryfirst=True)  # before any fixture starts a server or loads a model
def pytest_runtest_setup(item):
    """A test marked `debian(...)` whose package is missing fails at once in one line naming the
    install command, instead of erroring minutes later (make test installs them first)."""
    global _missing_packages
    wanted = [package for marker in item.iter_markers("debian") for package in marker.args]
    if not wanted:
        return
    if _missing_packages is None:
        script = Path(__file__).resolve().parent.parent / "scripts" / "debian-packages"
        listed = subprocess.run(["bash", str(script), "--missing", "test"], capture_output=True, text=True,
                                check=True)
        _missing_packages = set(listed.stdout.split())
    missing = [package for package in wanted if package in _missing_packages]
    if missing:
        pytest.fail(f"needs the Debian packages {' '.join(missing)}: run `make test` as root, or "
                    f"apt-get install -y {' '.join(missing)}", pytrace=False)
