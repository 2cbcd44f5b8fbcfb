"""QA generation from the corpus, reranker and retriever fine-tuning (training/)."""

from __future__ import annotations

import json

import pytest
from conftest import BATTERY_Q, ScriptedLLM, fresh_settings
from llama_index.core.schema import MetadataMode

from evaluation.gold import load_qa, satisfies
from rag.models import build_embedding
from rag.postprocessors import build_rerank_stage
from rag.scoring import CALIBRATION_FILE, bi_encoder
from rag.store import Store, all_nodes
from training.qa_generation import QAGenerator, generate_qa, parse_pairs
from training.pairs import Recipe, training_pairs
from training.reranker import train_reranker
from training.retriever import train_retriever

PAIRS = {
    "battery": [
        ("What temperature did cell 14 of the Orion pack reach in the nail test?",
         "Cell 14 peaked at 61 degrees Celsius. No thermal runaway occurred."),
        ("How fast was the nail driven into the Orion pack?", "The nail was driven at 80 mm/s."),
    ],
    "cafeteria": [
        ("When does the cafeteria open?", "The cafeteria opens at 7:30."),
        ("What does the cafeteria serve on Fridays?", "On Fridays it serves a vegetarian lunch menu only."),
    ],
}


def scripted_generator(calls: list[str]):
    """Answers each chunk with the fixed pairs of its document, as the LLM's JSON would."""

    def generate(text: str) -> list[dict[str, str]]:
        calls.append(text)
        key = "battery" if "Orion" in text else "cafeteria"
        return [{"question": q, "answer": a} for q, a in PAIRS[key]]

    return generate


def test_pairs_are_parsed_from_prose_and_filtered():
    reply = (
        'Here you go:\n```json\n{"pairs": [{"question": "What speed was the nail driven at?", '
        '"answer": "80 mm/s."},'
        ' {"question": "what speed was the nail driven at?", "answer": "Twice."},'
        ' {"question": "Why?", "answer": "No reason."}, "not a pair",'
        ' {"question": "Which cell was penetrated by the nail?", "answer": ""},'
        ' {"question": "Did thermal runaway occur in the pack?", "answer": "No, it did not."}]}\n```'
    )
    assert parse_pairs(reply, 5) == [
        {"question": "What speed was the nail driven at?", "answer": "80 mm/s."},
        {"question": "Did thermal runaway occur in the pack?", "answer": "No, it did not."},
    ]
    assert parse_pairs(reply, 1) == [{"question": "What speed was the nail driven at?", "answer": "80 mm/s."}]
    assert parse_pairs("I cannot do that.", 3) == []


def test_generator_asks_again_when_the_reply_holds_no_pair():
    good = '{"pairs": [{"question": "What speed was the nail driven at?", "answer": "80 mm/s."}]}'
    llm = ScriptedLLM(replies=["Sure! Questions: ...", good], prompts=[])
    pairs = QAGenerator(llm, "{n} questions about: {text}", per_chunk=2)("the chunk")
    assert pairs == [{"question": "What speed was the nail driven at?", "answer": "80 mm/s."}]
    assert llm.prompts[0] == "2 questions about: the chunk" and len(llm.prompts) == 2
    assert QAGenerator(ScriptedLLM(replies=["no", "still no"], prompts=[]), "{n}{text}")("x") == []


def test_generated_qa_points_at_its_chunk_and_resumes(indexed, tmp_path):
    out = tmp_path / "qa.jsonl"
    calls: list[str] = []
    counts = generate_qa(indexed, out, scripted_generator(calls), progress=False)
    nodes = {n.node_id: n for n in all_nodes(indexed)}
    assert counts == {"chunks": len(nodes), "already_done": 0, "questions": 2 * len(nodes), "failed": 0}
    # The LLM sees the header-prefixed chunk, so questions can name their document.
    assert any(text.startswith("Title: Battery pack abuse test BP-12") for text in calls)
    items = load_qa(out)
    assert len({i["id"] for i in items}) == len(items)
    for item in items:
        [evidence] = item["evidence"]
        node = nodes[evidence["chunk_id"]]
        assert satisfies(evidence, node.get_content(), node.metadata, node.node_id)
        assert item["answerable"] and item["answer"]
    again = generate_qa(indexed, out, scripted_generator(calls := []), progress=False)
    assert again["already_done"] == len(nodes) and again["questions"] == 0 and calls == []
    assert len(load_qa(out)) == len(items)


def test_a_chunk_without_questions_is_retried_next_run(indexed, tmp_path):
    out = tmp_path / "qa.jsonl"
    counts = generate_qa(indexed, out, lambda text: [], progress=False)
    assert counts["failed"] == counts["chunks"] and not out.read_text()
    assert generate_qa(indexed, out, scripted_generator([]), progress=False)["failed"] == 0


def test_generation_needs_an_indexed_store(base_settings, tmp_path):
    with pytest.raises(ValueError, match="ingest documents first"):
        generate_qa(fresh_settings(base_settings, tmp_path), tmp_path / "qa.jsonl", scripted_generator([]))


@pytest.fixture(scope="module")
def generated(indexed, tmp_path_factory):
    out = tmp_path_factory.mktemp("qa") / "qa.jsonl"
    generate_qa(indexed, out, scripted_generator([]), progress=False)
    return load_qa(out)


def test_training_pairs_take_questions_and_answer_sentences_with_negatives(indexed, generated):
    recipe = Recipe(hard_negatives=3, random_negatives=1, holdout=0)
    train, heldout = training_pairs(indexed, generated, recipe, progress=False)
    assert heldout == []
    texts = {n.node_id: n.get_content(metadata_mode=MetadataMode.EMBED) for n in all_nodes(indexed)}
    by_query: dict[str, list[dict]] = {}
    for row in train:
        by_query.setdefault(row["query"], []).append(row)
    # 4 questions, 5 answer sentences, and the one two-sentence answer as a whole.
    assert len(by_query) == 10
    rows = by_query["Cell 14 peaked at 61 degrees Celsius."]
    [positive] = [r for r in rows if r["label"] == 1.0]
    assert "Orion" in positive["passage"] and positive["passage"] in texts.values()
    negatives = [r["passage"] for r in rows if r["label"] == 0.0]
    assert negatives and all(n != positive["passage"] and n in texts.values() for n in negatives)
    with pytest.raises(ValueError, match="ragqa qa generate"):
        training_pairs(indexed, [{"id": "x", "question": "q?", "evidence": [{"chunk_id": "gone"}]}], recipe,
                       False)


def test_trained_cross_encoder_is_the_scorer(indexed, generated, tmp_path):
    out = tmp_path / "reranker"
    recipe = Recipe(epochs=6, batch_size=8, learning_rate=1e-4, layers=2, holdout=2)
    summary = train_reranker(indexed, generated, out, recipe, progress=False)
    assert summary["train_pairs"] > 0 and summary["heldout_after"]["pairs"] > 0
    saved = json.loads((out / "ragqa_training.json").read_text())
    assert saved["recipe"]["layers"] == 2 and not out.with_name("reranker.partial").exists()
    settings = fresh_settings(indexed, indexed.storage_dir,
                              rerank={"method": "cross-encoder", "cross_encoder_path": str(out)})
    scorer = build_rerank_stage(settings, Store(settings), embedding=None).scorer
    assert scorer.kind == "cross-encoder" and scorer.model.model.config.num_hidden_layers == 2
    battery, cafeteria = sorted(
        (n.get_content(metadata_mode=MetadataMode.EMBED) for n in all_nodes(indexed)),
        key=lambda t: "Orion" not in t
    )
    question_scores = scorer([(BATTERY_Q, battery), (BATTERY_Q, cafeteria)])
    assert all(0.0 <= s <= 1.0 for s in question_scores)
    assert question_scores[0] > question_scores[1]


def test_tuned_retriever_carries_its_calibration(indexed, generated, tmp_path):
    out = tmp_path / "retriever"
    recipe = Recipe(epochs=1, batch_size=4, learning_rate=3e-5, max_length=128, holdout=2)
    summary = train_retriever(indexed, generated, out, recipe, progress=False)
    assert summary["train_triplets"] > 0 and summary["heldout_after"]["pairs"] > 0
    calibration = json.loads((out / CALIBRATION_FILE).read_text())
    assert calibration == summary["calibration"] and calibration["scale"] > 0
    settings = fresh_settings(indexed, indexed.storage_dir,
                              embedding={"model_path": str(out), "backend": "torch"})
    scorer = bi_encoder(settings, build_embedding(settings))
    assert scorer.kind == "bi-encoder" and (scorer.center, scorer.scale) == (calibration["center"],
                                                                             calibration["scale"])
    battery, cafeteria = sorted(
        (n.get_content(metadata_mode=MetadataMode.EMBED) for n in all_nodes(indexed)),
        key=lambda t: "Orion" not in t
    )
    scores = scorer([(BATTERY_Q, battery), (BATTERY_Q, cafeteria)])
    assert scores[0] > scores[1] and all(0.0 <= s <= 1.0 for s in scores)


@pytest.mark.slow
def test_generate_and_train_from_the_command_line(base_settings, corpus, tmp_path, monkeypatch):
    """The real embedded LLM writes questions for one chunk; a 2-layer reranker trains on them."""
    from typer.testing import CliRunner

    from app.cli import app

    monkeypatch.setenv("RAGQA_STORAGE_DIR", str(tmp_path / "storage"))
    monkeypatch.setenv("RAGQA_MODELS_DIR", str(base_settings.models_dir))
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", str(corpus)]).exit_code == 0
    generated = runner.invoke(app, ["qa", "generate", "--limit", "1", "--doc", "battery.md"])
    assert generated.exit_code == 0, generated.output
    qa_file = tmp_path / "storage" / "qa" / "generated.jsonl"
    assert generated.output.strip().splitlines()[-1] == str(qa_file)
    items = load_qa(qa_file)
    assert 1 <= len(items) <= 3 and all(i["evidence"][0]["doc"] == "battery.md" for i in items)
    folder = tmp_path / "reranker"  # not the default: the prepared models folder is shared
    trained = runner.invoke(
        app, ["train", "reranker", "--cross-encoder", "--qa", str(qa_file), "--out", str(folder),
              "--epochs", "1", "--layers", "2"]
    )
    assert trained.exit_code == 0, trained.output
    assert (trained.output.strip().splitlines()[-1] == str(folder)
            and (folder / "ragqa_training.json").is_file())
    monkeypatch.setenv("RAGQA_RERANK__CROSS_ENCODER_PATH", str(folder))
    monkeypatch.setenv("RAGQA_RERANK__METHOD", "cross-encoder")  # rerank by the CrossEncoder alone
    answer = runner.invoke(app, ["ask", BATTERY_Q, "--json"])
    # stderr: load bars
    assert answer.exit_code == 0 and json.loads(answer.stdout)["reranker"] == "cross-encoder"


def test_training_on_qa_of_another_store_fails_clearly(base_settings, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from app.cli import app

    monkeypatch.setenv("RAGQA_STORAGE_DIR", str(tmp_path / "storage"))
    monkeypatch.setenv("RAGQA_MODELS_DIR", str(base_settings.models_dir))
    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps({"id": "g1", "question": "What speed?", "answer": "80 mm/s.",
                              "evidence": [{"chunk_id": "not-in-this-store"}]}) + "\n")
    result = CliRunner().invoke(app, ["train", "retriever", "--qa", str(qa), "--out", str(tmp_path / "m")])
    assert result.exit_code == 1 and "ragqa qa generate" in result.output
    assert not (tmp_path / "m").exists()


def test_mined_questions_point_at_their_chunks(base_settings, corpus, tmp_path, monkeypatch):
    """Mined in seconds from the store, English and Korean; each question's words come from its
    own chunk, which a retriever can then be trained and measured on."""
    import shutil

    from conftest import cli
    from documents import KOREAN
    from ingestion.pipeline import ingest
    from training.mining import mine_questions

    folder = tmp_path / "docs"
    shutil.copytree(corpus, folder)
    (folder / "korean.txt").write_text(KOREAN, encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path / "storage")
    ingest([folder], settings, progress=False)
    nodes = {n.node_id: n for n in all_nodes(settings)}
    items = mine_questions(settings)
    assert items == mine_questions(settings)  # deterministic
    assert mine_questions(settings, seed=14) != items
    kinds = {item["kind"] for item in items}
    assert kinds == {"cloze", "heading"}
    for item in items:
        [evidence] = item["evidence"]
        node = nodes[evidence["chunk_id"]]
        text = node.get_content(metadata_mode=MetadataMode.NONE)
        assert satisfies(evidence, text, node.metadata, node.node_id)
        assert all(word in text for word in item["question"].split())
    assert any(item["question"] == "Battery pack abuse test BP-12" for item in items)  # a heading
    assert any("충돌" in item["question"] for item in items if item["evidence"][0]["doc"] == "korean.txt")

    result = cli(monkeypatch, settings, "qa", "mine")
    assert result.exit_code == 0, result.output
    out = settings.storage_dir / "qa" / "mined.jsonl"
    assert result.output.strip().splitlines()[-1] == str(out)
    assert load_qa(out) == items
