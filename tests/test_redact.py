"""Secrets in the settings (API keys, login hashes, a URL's credentials) never reach what is
written down: feedback records and run folders."""

from __future__ import annotations

from conftest import fresh_settings

from app.auth import hash_password
from app.feedback import FeedbackLog
from evaluation.runs import Run


def test_feedback_and_run_folders_keep_no_secrets(base_settings, tmp_path):
    login = hash_password("correct horse battery", iterations=1000)
    keys = ["sk-llm-0123456789", "sk-embed-0123456789", "sk-judge-0123456789", "chroma-pass-0123"]
    settings = fresh_settings(
        base_settings, tmp_path / "storage", ui={"users": [f"alice:{login}"]},
        store={"chroma_url": f"http://ragqa:{keys[3]}@127.0.0.1:8000"},
    )

    def served(section, key):  # the section with `key` in its server block
        return section.model_copy(update={"server": section.server.model_copy(update={"api_key": key})})

    settings.llm, settings.embedding = served(settings.llm, keys[0]), served(settings.embedding, keys[1])
    settings.evaluation = settings.evaluation.model_copy(update={"judge_llm": served(settings.llm, keys[2])})
    answer = {"question": "Q?", "answer": "A.", "answerable": True, "segments": [], "sources": [],
              "timings_ms": {"total": 1.0}}
    record = FeedbackLog.of(settings).add(answer, "up", "", settings, user="alice")
    run = Run.start(settings, "answers", {"kind": "answers"})

    written = [settings.storage_dir / "feedback.jsonl"] + sorted(run.path.iterdir())
    for path in written:
        text = path.read_text(encoding="utf-8")
        leaked = [secret for secret in [login, login.split("$")[-1], *keys] if secret in text]
        assert not leaked, f"{path.name} holds {leaked}"
    # What is not secret is kept: the record and the run still say what ran.
    for config in (record["config"], run.config()["settings"]):
        assert config["ui"]["users"] == ["alice"] and config["llm"]["server"]["api_key"] == "<redacted>"
        assert config["support"]["threshold"] == settings.support.threshold
        assert config["store"]["chroma_url"] == "http://<redacted>@127.0.0.1:8000"
        assert config["embedding"]["server"]["api_key"] == "<redacted>"
        assert config["evaluation"]["judge_llm"]["server"]["api_key"] == "<redacted>"
    assert run.config()["kind"] == "answers"
