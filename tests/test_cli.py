"""The command line as a new user meets it: bad questions, filters and files get one line that
says what is wrong (no traceback), before any model is loaded where that is possible."""

from __future__ import annotations

import json

import pytest
from conftest import BATTERY_Q, cli, cli_input, fresh_settings
from typer.testing import CliRunner

from app.cli import app


def one_line_error(result, code: int, *needles: str) -> str:
    assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    for needle in needles:
        assert needle in lines[0]
    return lines[0]


def test_empty_question_is_rejected_at_once(indexed, monkeypatch):
    import rag.pipeline

    def no_pipeline(*args, **kwargs):
        raise AssertionError("the models were loaded for an empty question")

    monkeypatch.setattr(rag.pipeline.RagPipeline, "__init__", no_pipeline)
    for question in ("", "   \n"):
        one_line_error(cli(monkeypatch, indexed, "ask", question), 2, "the question is empty")


def test_too_long_question_is_refused_and_context_shrinks_to_fit(indexed, pipeline, monkeypatch):
    question = "측면 충돌 시험에서 B필러는 얼마나 침입했나요? " * 200  # about 5,000 characters
    one_line_error(cli(monkeypatch, indexed, "ask", question), 2, "the question is too long", "llm.n_ctx")
    # A question that fits but leaves less room than the evidence budget: the context shrinks to fit.
    from llama_index.core.schema import QueryBundle

    cfg = pipeline.settings.llm
    limit = cfg.n_ctx - cfg.max_new_tokens - 16
    top = pipeline.current_retriever().retrieve(QueryBundle(BATTERY_Q))
    # the prompt holds it twice: before and after the context
    long_question = "Battery pack, " * 250 + BATTERY_Q
    for step, room in ((10, 200), (1, 60)):
        while pipeline.room(long_question) > room:  # the room the pipeline itself leaves
            long_question = "Battery pack nail penetration test, " * step + long_question
    budget = pipeline.budget(pipeline.room(long_question))
    assert 0 < budget < pipeline.settings.context.budget(cfg.backend)
    context, shown = pipeline.context.build(long_question, top, budget)
    assert shown and pipeline.count_tokens(pipeline.drafter.prompt_for(long_question, context)) <= limit


def test_filters_that_match_nothing_say_so(indexed, monkeypatch, tmp_path):
    from ingestion.pipeline import ingest

    # An id with a folder in it: the user types only the file name.
    nested = fresh_settings(indexed, tmp_path / "storage")
    (tmp_path / "docs" / "reports").mkdir(parents=True)
    (tmp_path / "docs" / "reports" / "battery.md").write_text("# Battery\n\nThe Orion pack reached 61 C.",
                                                              encoding="utf-8")
    ingest([tmp_path / "docs"], nested, progress=False)
    line = one_line_error(cli(monkeypatch, nested, "ask", BATTERY_Q, "--doc", "battery.md"), 2)
    assert ("no indexed document has the id 'battery.md'" in line
            and "did you mean 'reports/battery.md'" in line)
    line = one_line_error(cli(monkeypatch, indexed, "ask", BATTERY_Q, "--where", "Regio=Europe"), 2)
    assert "no document has a header field 'Regio'" in line
    line = one_line_error(cli(monkeypatch, indexed, "ask", BATTERY_Q, "--where", "Title=Atlantis"), 2)
    assert "no indexed document has Title=Atlantis" in line and "its values:" in line


@pytest.mark.parametrize(
    ("content", "needle"),
    [("", "no questions in the file"),
     ('["q1", "What?"]\n', ":1: a question must be a JSON object, not a list"),
     ('{"id": "q1", "question": "A?"}\n{"id": "q2"}\n', ":2: the question has no question"),
     # Metrics would count one row for the two.
     ('{"id": "q1", "question": "A?"}\n{"id": "q2", "question": "B?"}\n{"id": "q1", "question": "C?"}\n',
      ":3: id 'q1' is already on line 1"),
     ('{"id": "q1", "question": "A?", "evidence": "battery.md"}\n',
      ":1: evidence: Input should be a valid list"),
     ('{"id": "q1", "question": "A?", "evidence": [{"page": 2}]}\n',
      ":1: evidence[0]: an evidence item needs its doc"),
     ('{"id": "q1", "question": "A?", "evidence": [{"doc": "battery.md", "page": "2"}]}\n',
      ":1: evidence[0].page: Input should be a valid integer")],
)
@pytest.mark.parametrize("command", [("eval", "retrieval"), ("eval", "answers"), ("train", "reranker"),
                                     ("train", "retriever")])
def test_bad_qa_files_name_file_and_line(indexed, monkeypatch, tmp_path, content, needle, command):
    qa = tmp_path / "qa.jsonl"
    qa.write_text(content, encoding="utf-8")
    one_line_error(cli(monkeypatch, indexed, *command, "--qa", str(qa)), 1, str(qa), needle)


def test_a_qa_file_without_evidence_has_no_retrieval_to_score(indexed, monkeypatch, tmp_path):
    qa = tmp_path / "qa.jsonl"
    qa.write_text('{"id": "q1", "question": "What peak temperature?", "answer": "61 C"}\n', encoding="utf-8")
    one_line_error(cli(monkeypatch, indexed, "eval", "retrieval", "--qa", str(qa)), 1, "has evidence")


def test_bad_option_values_get_one_line(indexed, monkeypatch):
    """Header field names that Chroma reads as operators, an output that is a folder, a --vary
    value out of range: one line each, before any model is loaded."""
    import rag.pipeline

    def no_pipeline(*args, **kwargs):
        raise AssertionError("the models were loaded for a bad option")

    monkeypatch.setattr(rag.pipeline.RagPipeline, "__init__", no_pipeline)
    for operator in ("$and", "$or", "$contains"):
        one_line_error(cli(monkeypatch, indexed, "ask", BATTERY_Q, "--where", f"{operator}=1"), 2,
                       f"filter '{operator}=1': a header field name cannot start with '$'")
    for command in (("qa", "mine"), ("qa", "generate")):
        one_line_error(cli(monkeypatch, indexed, *command, "--out", "/"), 2, "--out / is a folder")
    from conftest import FIXTURES

    line = one_line_error(cli(monkeypatch, indexed, "eval", "references",
                              "--gold", str(FIXTURES / "references_gold.jsonl"),
                              "--vary", "support.threshold=0.5,7"), 1)
    assert line == ("error: --vary support.threshold=7: support.threshold: "
                    "Input should be less than or equal to 1")
    # Every value is checked before the first variant ingests its corpus.
    line = one_line_error(cli(monkeypatch, indexed, "eval", "retrieval", "--qa", str(FIXTURES / "qa.jsonl"),
                              "--corpus", str(FIXTURES / "battery.md"),
                              "--vary", "chunking.chunk_size=900,0"), 1)
    assert line == "error: --vary chunking.chunk_size=0: chunking.chunk_size: Input should be greater than 0"
    for limit in ("0", "-5"):  # 0 meant every chunk, -5 "ingest documents first"
        result = cli(monkeypatch, indexed, "qa", "generate", "--limit", limit)
        assert (result.exit_code == 2
                and f"Invalid value for '--limit': {limit} is not in the range x>=1" in result.output)


def test_report_on_a_folder_that_is_not_a_run(indexed, monkeypatch, tmp_path):
    one_line_error(cli(monkeypatch, indexed, "report", str(tmp_path)), 1, "is not a run folder")
    one_line_error(cli(monkeypatch, indexed, "report", str(tmp_path), str(tmp_path)), 1,
                   "is not a run folder")


def test_missing_models_are_found_and_named(base_settings, monkeypatch, tmp_path):
    import shutil

    empty = fresh_settings(base_settings, tmp_path / "storage")
    empty.models_dir = tmp_path / "no-models"
    doc = tmp_path / "a.md"
    doc.write_text("# A\n\nAlpha.", encoding="utf-8")
    one_line_error(cli(monkeypatch, empty, "ingest", str(doc)), 1, "not found", "run `ragqa models` first")

    # A prepared model folder that lost a file is prepared again, not reported as fine.
    models = tmp_path / "models"
    shutil.copytree(base_settings.embedding_path, models / base_settings.embedding_path.name)
    for stamp in base_settings.models_dir.glob("*.stamp.json"):
        shutil.copy(stamp, models / stamp.name)
    for model in (base_settings.gguf_path, base_settings.embedding_onnx_path):
        (models / model.name).symlink_to(model)
    copy = fresh_settings(base_settings, tmp_path / "storage")
    copy.models_dir = models
    from rag.model_stamp import stamp_ok
    from rag.prepare import prepare_models

    stamp = json.loads((models / f"{base_settings.embedding_path.name}.stamp.json").read_text())
    expected = {k: v for k, v in stamp.items() if k != "files"}
    assert stamp_ok(models / base_settings.embedding_path.name, expected)
    (models / base_settings.embedding_path.name / "model.safetensors").unlink()
    assert not stamp_ok(models / base_settings.embedding_path.name, expected)
    prepare_models(copy)
    assert (models / base_settings.embedding_path.name / "model.safetensors").is_file()


def test_config_errors_are_one_line(monkeypatch, tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text("[chunking]\nchunk_size = 100\nchunk_overlap = 200\n")
    result = CliRunner().invoke(app, ["ask", "Anything?", "--config", str(config)])
    one_line_error(result, 2, "bad.toml", "chunk_overlap (200) must be smaller than chunk_size (100)")


def test_chat_rewrites_a_follow_up_from_the_earlier_turn(sample_indexed, monkeypatch):
    """`ragqa chat`: "And the passenger dummy?" names no test; rewritten with the first turn it
    does, and that question finds the test's deck first among the sample corpus's six tests."""
    from llama_index.core.schema import QueryBundle

    from rag.pipeline import RagPipeline

    turns = "What HIC15 did the driver dummy reach in FT-2024-07?\nAnd the passenger dummy?\n\n"
    result = cli_input(monkeypatch, sample_indexed, turns, "chat")
    assert result.exit_code == 0, result.output
    assert result.output.count("(understood as: ") == 1, result.output  # the first turn stands alone
    rewritten = result.output.split("(understood as: ", 1)[1].split(")\n", 1)[0]
    assert "FT-2024-07" in rewritten and "passenger" in rewritten.lower(), result.output
    pipeline = RagPipeline(sample_indexed)
    query = QueryBundle(rewritten)
    top = pipeline.reranker.postprocess_nodes(pipeline.current_retriever().retrieve(query),
                                              query_bundle=query)
    assert top[0].node.metadata["doc"] == "FT-2024-07.pptx"
    assert pipeline.rewriter.standalone(rewritten, []) == rewritten  # no history: no rewriting


def test_documents_are_listed_and_removed(base_settings, monkeypatch, tmp_path):
    from conftest import FIXTURES

    settings = fresh_settings(base_settings, tmp_path / "storage")
    odd = tmp_path / "docs" / "tab\there\nand a line.md"  # a TSV row of its own all the same
    odd.parent.mkdir()
    odd.write_text("# Odd\n\nA name with a tab and a line break.", encoding="utf-8")
    assert cli(monkeypatch, settings, "ingest", str(FIXTURES / "battery.md"), str(FIXTURES / "cafeteria.md"),
               str(odd)).exit_code == 0
    listed = cli(monkeypatch, settings, "documents").stdout.splitlines()
    assert [line.split("\t")[0] for line in listed] == ["battery.md", "cafeteria.md",
                                                        "tab\\there\\nand a line.md"]
    assert all(len(line.split("\t")) == 5 for line in listed)
    assert listed[0].split("\t")[3] == str(FIXTURES / "battery.md")
    assert listed[2].split("\t")[3] == str(odd).replace("\t", "\\t").replace("\n", "\\n")
    removed = cli(monkeypatch, settings, "remove", "battery.md", odd.name, "nothing.md")
    assert removed.exit_code == 1 and "removed battery.md" in removed.output
    assert "error: not indexed: nothing.md" in removed.output
    assert [line.split("\t")[0]
            for line in cli(monkeypatch, settings, "documents").stdout.splitlines()] == ["cafeteria.md"]


def test_the_config_in_the_working_folder_is_in_force_and_named(base_settings, monkeypatch, tmp_path):
    """In a fork's folder its own ragqa.toml is used, a broken one reported rather than passed
    over for the shipped one; `documents` names the config in force on stderr."""
    fork = tmp_path / "fork"
    fork.mkdir()
    for name in ("RAGQA_STORAGE_DIR", "RAGQA_MODELS_DIR", "RAGQA_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(fork)
    own = fork.resolve() / "ragqa.toml"
    own.write_text("[retrieval]\nkeep_k = 0\n", encoding="utf-8")
    one_line_error(CliRunner().invoke(app, ["documents"]), 2, str(own), "retrieval.keep_k")
    own.write_text('storage_dir = "state"\n', encoding="utf-8")
    listed = CliRunner().invoke(app, ["documents"])
    assert listed.exit_code == 0 and listed.stderr == f"config: {own}\n"
    assert listed.stdout.startswith("no documents are indexed yet")
    other = tmp_path / "other.toml"
    other.write_text('storage_dir = "other-state"\n', encoding="utf-8")
    monkeypatch.setenv("RAGQA_CONFIG", str(other))
    assert CliRunner().invoke(app, ["documents"]).stderr == f"config: {other}\n"


def test_a_port_the_servers_cannot_use_is_one_line(indexed, monkeypatch):
    """A port out of range, or in use, before any model is loaded (Gradio answered a port in use
    with its advice about GRADIO_SERVER_PORT, uvicorn with a traceback)."""
    import socket

    import rag.pipeline

    def no_pipeline(*args, **kwargs):
        raise AssertionError("the models were loaded for a port that cannot be used")

    monkeypatch.setattr(rag.pipeline.RagPipeline, "__init__", no_pipeline)
    for command in ("serve", "embed-server"):
        result = cli(monkeypatch, indexed, command, "--port", "99999")
        assert (result.exit_code == 2
                and "Invalid value for '--port': 99999 is not in the range 1<=x<=65535" in result.output)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for command in ("serve", "embed-server"):
            one_line_error(cli(monkeypatch, indexed, command, "--port", str(port)), 1,
                           f"port {port} on 127.0.0.1 is in use")


def test_an_embedding_server_that_refuses_the_connection_is_named(indexed, monkeypatch):
    from conftest import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"
    # One attempt: no retry log.
    for key, value in (("BACKEND", "server"), ("SERVER__API_BASE", url), ("SERVER__MAX_RETRIES", "1")):
        monkeypatch.setenv(f"RAGQA_EMBEDDING__{key}", value)
    one_line_error(cli(monkeypatch, indexed, "ask", BATTERY_Q), 1,
                   f"error: the embedding server refused the connection at {url}: is it running?")


def fork_config(folder, monkeypatch, text: str):
    """`folder`/fork.toml holding `text`, with nothing in the environment pointing elsewhere; a
    decoy $RAGQA_CONFIG catches a command that ignores --config."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("RAGQA_STORAGE_DIR", "RAGQA_MODELS_DIR"):
        monkeypatch.delenv(name, raising=False)
    decoy = folder / "decoy.toml"
    decoy.write_text('storage_dir = "decoy"\nmodels_dir = "decoy-models"\n', encoding="utf-8")
    monkeypatch.setenv("RAGQA_CONFIG", str(decoy))
    config = folder / "fork.toml"
    config.write_text(text, encoding="utf-8")
    return config


def test_ingest_prune_and_reset_from_the_command_line(base_settings, monkeypatch, tmp_path):
    """`ragqa ingest --config fork.toml DOCS`, then `--prune` after a file left DOCS, then
    `--reset OTHER`: the documents listed and the chunks in both retrieval channels follow."""
    from rag.retrieval import bm25_retriever
    from rag.settings import load_settings
    from rag.store import collection

    config = fork_config(tmp_path, monkeypatch,
                         f'storage_dir = "state"\nmodels_dir = "{base_settings.models_dir}"\n')
    docs, other = tmp_path / "docs", tmp_path / "other"
    docs.mkdir()
    other.mkdir()
    (docs / "alpha.md").write_text("# Alpha\n\nThe alpha pump delivers 40 litres a minute.", encoding="utf-8")
    (docs / "bravo.md").write_text("# Bravo\n\nThe bravo valve opens at 3 bar.", encoding="utf-8")
    (other / "charlie.md").write_text("# Charlie\n\nThe charlie tank holds 900 litres.", encoding="utf-8")
    runner = CliRunner()

    def run(*args: str):
        result = runner.invoke(app, [*args, "--config", str(config)])
        assert result.exit_code == 0, result.output
        return result.stdout  # stderr: progress bars

    def listed() -> list[str]:
        return [line.split("\t")[0] for line in run("documents").splitlines()]

    settings = load_settings(config)
    assert settings.storage_dir == tmp_path / "state"

    def stored_docs() -> set[str]:
        return {m["doc"] for m in collection(settings).get(include=["metadatas"])["metadatas"]}

    def keyword_docs(word: str) -> set[str]:
        return {n.node.metadata["doc"] for n in bm25_retriever(settings).retrieve(word)
                if word in n.node.get_content()}

    assert run("ingest", str(docs)).startswith("2 files: 2 indexed")
    assert listed() == ["alpha.md", "bravo.md"] and stored_docs() == {"alpha.md", "bravo.md"}
    assert not (tmp_path / "decoy").exists()  # the store is the fork's, not $RAGQA_CONFIG's

    (docs / "bravo.md").unlink()
    run("ingest", str(docs))
    # kept without --prune
    assert listed() == ["alpha.md", "bravo.md"] and stored_docs() == {"alpha.md", "bravo.md"}
    assert "1 pruned" in run("ingest", "--prune", str(docs))
    last = json.loads((settings.reports_dir / "last_ingest.json").read_text())  # the same report, on disk
    assert (last["pruned"], last["unchanged"], last["failed"]) == (1, 1, [])
    assert listed() == ["alpha.md"] and stored_docs() == {"alpha.md"}
    assert keyword_docs("bravo") == set() and keyword_docs("alpha") == {"alpha.md"}

    assert run("ingest", "--reset", str(other)).startswith("1 file: 1 indexed")
    assert listed() == ["charlie.md"] and stored_docs() == {"charlie.md"}
    assert keyword_docs("alpha") == set() and keyword_docs("charlie") == {"charlie.md"}


def test_models_prints_the_prepared_paths_and_redoes_nothing(base_settings, monkeypatch, tmp_path):
    """`ragqa models --config fork.toml` on a models folder that is already prepared: both
    paths printed, nothing copied, converted or stamped again. The folder links to the shared
    models, so a rebuild would replace the links instead of writing into them."""
    models = tmp_path / "models"
    models.mkdir()
    prepared = (base_settings.gguf_path, base_settings.embedding_path, base_settings.embedding_onnx_path)
    for model in prepared:
        (models / model.name).symlink_to(model)
        stamp = model.with_name(model.name + ".stamp.json")
        (models / stamp.name).write_bytes(stamp.read_bytes())
    config = fork_config(tmp_path, monkeypatch, 'storage_dir = "state"\nmodels_dir = "models"\n')
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in models.glob("*.stamp.json")}
    expected = [f"llm: {models / base_settings.gguf_path.name}",
                f"embedding: {models / base_settings.embedding_path.name}",
                f"embedding-onnx: {models / base_settings.embedding_onnx_path.name}"]
    for _ in range(2):  # idempotent
        result = CliRunner().invoke(app, ["models", "--config", str(config)])
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines() == expected
    assert all((models / model.name).is_symlink() for model in prepared)
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in models.glob("*.stamp.json")} == before
    # no .partial left
    assert sorted(p.name for p in models.iterdir()) == sorted([*before, *(m.name for m in prepared)])


def test_ask_answers_from_the_documents_and_header_values_given(sample_indexed, monkeypatch):
    """`ragqa ask --json --doc A --doc B --where Region=...`: both filters hold at once. Measured
    on the sample corpus: with the two decks alone the Europe deck FT-2024-07 is shown to the
    LLM, with North America alone SI-2024-03 is; together only SI-2024-05 is left."""
    question = "What was the impact speed of the test?"
    result = cli(monkeypatch, sample_indexed, "ask", question, "--json", "--doc", "SI-2024-05.pptx",
                 "--doc", "FT-2024-07.pptx", "--where", "Region=North America")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["answerable"] and answer["sources"], answer  # answered (50 km/h), not refused
    assert {s["doc"] for s in answer["sources"]} == {"SI-2024-05.pptx"}
    assert {r["doc"] for s in answer["segments"] for r in s["references"]} == {"SI-2024-05.pptx"}


def test_every_command_that_reads_settings_takes_config():
    """README: every command that reads settings takes --config FILE. Only hash-password and
    api-key read none (they hash what is typed, or a key they make)."""
    import typer

    def leaves(command, path=()):
        if hasattr(command, "commands"):  # a group (typer's own click)
            for name, sub in command.commands.items():
                yield from leaves(sub, (*path, name))
        else:
            yield " ".join(path), command

    commands = dict(leaves(typer.main.get_command(app)))
    assert {"models", "ingest", "ask", "documents", "report", "eval judge", "eval ragas",
            "train reranker"} <= set(commands)
    lacking = sorted(name for name, command in commands.items()
                     if not any("--config" in p.opts for p in command.params))
    assert lacking == ["api-key", "hash-password"]
