"""Ingest two Markdown fixtures into Chroma on disk, then ask with the embedded models."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import BATTERY_Q, FIXTURES, UNRELATED_Q, ScriptedLLM, cli, fresh_settings

from llama_index.core.schema import MetadataMode
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from ingestion.pipeline import ingest
from rag.store import collection

ANSWER_KEYS = {"question", "answer", "answerable", "segments", "sources", "timings_ms"}


def test_ingest_is_incremental_with_stable_ids(indexed, corpus):
    before = collection(indexed).get(include=["metadatas", "documents"])
    assert {m["doc"] for m in before["metadatas"]} == {"battery.md", "cafeteria.md"}
    nodes = [metadata_dict_to_node(m, text=d) for m, d in zip(before["metadatas"], before["documents"])]
    embedded = [n.get_content(metadata_mode=MetadataMode.EMBED) for n in nodes]
    # The header reaches the embedding; locations and ids do not.
    assert all(e.startswith("Title: ") for e in embedded)
    assert not any("battery.md" in e or "section:" in e for e in embedded)
    again = ingest([corpus], indexed, progress=False)
    assert again.unchanged == 2 and again.indexed == 0 and again.chunks == 0
    assert sorted(collection(indexed).get()["ids"]) == sorted(before["ids"])


def test_bad_files_reported_and_store_untouched(indexed, tmp_path):
    before = sorted(collection(indexed).get()["ids"])
    (tmp_path / "empty.md").write_text("")
    (tmp_path / "latin1.txt").write_bytes("Caf\xe9 cr\xe8me".encode("latin-1"))
    (tmp_path / "photo.png").write_bytes(b"\x89PNG\r\n")
    report = ingest([tmp_path], indexed, progress=False)
    reasons = {os.path.basename(f["file"]): f["reason"] for f in report.failed}
    assert reasons["empty.md"] == "the file is empty"
    assert "not UTF-8" in reasons["latin1.txt"]
    assert "unsupported file type '.png'" in reasons["photo.png"]
    assert sorted(collection(indexed).get()["ids"]) == before


def test_answer_cites_the_right_document(pipeline):
    answer = pipeline.answer(BATTERY_Q).to_dict()
    assert ANSWER_KEYS <= set(answer)
    assert answer["answerable"] is True
    assert "61" in answer["answer"]
    assert answer["sources"][0]["doc"] == "battery.md"
    supported = [s for s in answer["segments"] if s["supported"]]
    assert supported, answer["segments"]
    assert all(r["doc"] == "battery.md" for s in supported for r in s["references"])
    timings = answer["timings_ms"]
    assert set(timings) == {"retrieve", "rerank", "currency", "hop", "cells", "context", "premise",
                            "first_token", "generate", "match", "conflicts"}
    assert 0 < timings["first_token"] <= sum(timings[s]
                                             for s in ("retrieve", "rerank", "context", "generate"))


def test_unanswerable_question_is_refused(pipeline):
    answer = pipeline.answer(UNRELATED_Q).to_dict()
    assert answer["answerable"] is False
    assert answer["answer"] == pipeline.settings.answer.refusal
    # Which gate refused is said; only the references gate keeps the (unsupported) draft.
    assert answer["refused_by"] in ("retrieval", "model", "references")
    assert not any(s["supported"] for s in answer["segments"])
    assert answer["refused_by"] == "references" or answer["segments"] == []


def test_cli_ask_json(indexed):
    env = dict(os.environ, RAGQA_STORAGE_DIR=str(indexed.storage_dir),
               RAGQA_MODELS_DIR=str(indexed.models_dir))
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", "ask", "--json", UNRELATED_Q],
        env=env, capture_output=True, text=True, check=True,
    ).stdout
    answer = json.loads(out)
    assert ANSWER_KEYS <= set(answer) and answer["answerable"] is False


def test_cli_ingest_exit_code_names_failed_file(base_settings, tmp_path):
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"\xff\xfe\x00binary")
    settings = fresh_settings(base_settings, tmp_path / "storage")
    env = dict(os.environ, RAGQA_STORAGE_DIR=str(settings.storage_dir),
               RAGQA_MODELS_DIR=str(settings.models_dir))
    result = subprocess.run(
        [sys.executable, "-m", "app.cli", "ingest", str(bad), str(FIXTURES / "cafeteria.md")],
        env=env, capture_output=True, text=True,
    )
    assert result.returncode == 1
    assert "FAILED" in result.stdout and "bad.md" in result.stdout and "1 indexed" in result.stdout


def test_cli_ask_before_ingest_says_what_to_do(base_settings, tmp_path):
    env = dict(os.environ, RAGQA_STORAGE_DIR=str(tmp_path), RAGQA_MODELS_DIR=str(base_settings.models_dir))
    result = subprocess.run(
        [sys.executable, "-m", "app.cli", "ask", "Anything?"], env=env, capture_output=True, text=True
    )
    assert result.returncode == 1 and "ragqa ingest" in result.stderr


def test_rerank_stage_reuses_the_stored_chunk_vectors(pipeline, monkeypatch):
    """The rerank stage reads the candidates' vectors from the store itself, and hands them to the
    encoder that the refusal gate, the context and the matcher read after it."""
    import numpy as np
    from llama_index.core.schema import QueryBundle

    query = QueryBundle("nail penetration")
    nodes = pipeline.current_retriever().retrieve(query)
    text = nodes[0].node.get_content(metadata_mode=MetadataMode.EMBED)
    fresh = np.asarray(pipeline.encoder.embedding.get_text_embedding(text))
    pipeline.reranker.postprocess_nodes(nodes, query_bundle=query)

    class NoEmbedding:
        def __getattr__(self, name):
            raise AssertionError("the chunk was embedded again")

    monkeypatch.setattr(pipeline.encoder, "embedding", NoEmbedding())
    stored = pipeline.encoder.embed([text], query=False)[0]
    assert float(stored @ fresh) > 0.999  # the store's vector is the one the model would give


def test_english_question_about_a_korean_document(base_settings, corpus, tmp_path, monkeypatch):
    """Answered and cited through `ragqa ask`: the matcher no longer needs shared wording
    between an English answer and its Korean chunk (its figures must still be there)."""
    folder = tmp_path / "docs"
    shutil.copytree(corpus, folder)
    (folder / "constitution.txt").write_text(
        "대한민국헌법\n\n제1조 ① 대한민국은 민주공화국이다. "
        "② 대한민국의 주권은 국민에게 있고, "
        "모든 권력은 국민으로부터 나온다.\n\n"
        "제2조 ① 대한민국의 국민이 되는 요건은 법률로 정한다.", encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path / "storage")
    ingest([folder], settings, progress=False)
    result = cli(monkeypatch, settings, "ask", "--json",
                 "What does Article 1 of the Korean constitution say?")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["answerable"], json.dumps(answer, ensure_ascii=False)[:3000]
    cited = {r["doc"] for s in answer["segments"] if s["supported"] for r in s["references"]}
    assert cited == {"constitution.txt"}


def test_an_over_long_question_is_refused_before_any_llm_call_and_does_not_poison_the_chat(pipeline):
    """A pasted 40,000-character question is refused as too long before the rewriting LLM (a
    2048-token window) sees it, and a chat that kept it in its history goes on."""
    from rag.pipeline import QuestionError

    pasted = "Summarise this log: " + "error 42 at step 7; " * 2000
    history = [(BATTERY_Q, "The cell temperature peaked at 61 degrees Celsius [1].")]
    with pytest.raises(QuestionError, match="too long"):
        pipeline.answer(pasted, history=history)
    answer = pipeline.answer("What was the diameter of the nail in that test?",
                             history=[*history, (pasted, pipeline.settings.answer.refusal)])
    assert answer.standalone_question and "error 42" not in answer.standalone_question
    assert (answer.answerable and "3 mm" in answer.answer
            and answer.sources[0].doc == "battery.md"), answer.answer


def scripted(settings, *replies: str):
    from rag.pipeline import RagPipeline

    # One reply per LLM call, as scripted: no widening asks for another.
    settings = settings.model_copy(update={"context": settings.context.model_copy(update={"widen_steps": 0})})
    return RagPipeline(settings, llm=ScriptedLLM(replies=list(replies), prompts=[]))


def marks(text: str) -> list[str]:
    return re.findall(r"\[(\d+(?:, \d+)*)\]", text)


def test_the_marks_shown_are_the_matchers_not_the_models(indexed):
    """The model cites passage [9] (there is none) and marks an unsupported sentence: the
    answer, its segments and the CLI's text carry the references the matcher found instead;
    the model's text stays in `draft`."""
    from app.render import render_answer

    reply = ("The cell temperature peaked at 61 degrees Celsius [9]. "
             "The programme also bought a wind tunnel [1].")
    answer = scripted(indexed, reply).answer(BATTERY_Q)
    assert answer.answerable and answer.draft == reply
    supported, unsupported = answer.segments
    refs = [ref.ref for ref in supported.references]
    assert supported.supported and answer.sources[refs[0] - 1].doc == "battery.md", answer.segments
    assert marks(supported.text) == [", ".join(map(str, refs))] and not unsupported.supported
    assert marks(unsupported.text) == [] and "wind tunnel." in unsupported.text
    assert answer.answer == f"{supported.text} {unsupported.text}"
    shown = render_answer(answer.to_dict())
    assert "[9]" not in shown and f"Celsius [{', '.join(map(str, refs))}]." in shown


KOREAN_UNRELATED = "1954년 월드컵 축구 대회의 우승팀은 어디였나요?"
KOREAN_BATTERY = "오리온 배터리 팩의 못 관통 시험에서 셀 온도는 최고 몇 도까지 올랐나요?"


def test_a_refusal_is_in_the_askers_language_and_keeps_its_sources(indexed):
    """Refused by retrieval, by the model and by the references, a Korean question gets the
    Korean refusal; the chunks kept are its sources (the CLI shows them), and a draft the model
    wrote stays."""
    from app.render import render_answer

    korean = indexed.answer.refusals["Korean"]
    # the reply translates the question
    by_retrieval = scripted(indexed, UNRELATED_Q).answer(KOREAN_UNRELATED)
    assert (by_retrieval.refused_by, by_retrieval.answer) == ("retrieval", korean)
    assert by_retrieval.sources and by_retrieval.sources[0].doc in render_answer(by_retrieval.to_dict())
    by_model = scripted(indexed, BATTERY_Q, indexed.answer.refusal).answer(KOREAN_BATTERY)
    assert (by_model.refused_by, by_model.answer, by_model.draft) == ("model", korean, indexed.answer.refusal)
    assert by_model.sources[0].doc == "battery.md" and "battery.md" in render_answer(by_model.to_dict())
    pipeline = scripted(indexed, BATTERY_Q, "카페테리아는 자정에 문을 닫는다 [1].")
    by_references = pipeline.answer(KOREAN_BATTERY)
    assert (by_references.refused_by, by_references.answer) == ("references", korean)
    assert by_references.segments and by_references.sources
    assert pipeline.rematch(by_references, 0.6).answer == korean
    # English stays English
    assert scripted(indexed, UNRELATED_Q).answer(UNRELATED_Q).answer == indexed.answer.refusal
