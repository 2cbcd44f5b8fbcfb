"""Settings: the TOML, environment overrides, relative paths, errors."""

from __future__ import annotations

import pytest

from rag.settings import DEFAULT_CONFIG, load_settings


def test_default_config_values_and_paths():
    settings = load_settings()
    assert settings.retrieval.top_n == 10 and settings.retrieval.top_k == 5
    assert settings.storage_dir == DEFAULT_CONFIG.parent / "storage"
    assert settings.models_dir == settings.storage_dir / "models"
    assert settings.prompt_file.is_file()


def test_fork_config_relative_to_its_folder_and_env_overrides(tmp_path, monkeypatch):
    config = tmp_path / "fork.toml"
    config.write_text('storage_dir = "state"\n[retrieval]\ntop_n = 20\n[llm]\nbackend = "vllm"\n')
    monkeypatch.setenv("RAGQA_RETRIEVAL__TOP_K", "3")
    monkeypatch.setenv("RAGQA_MODELS_DIR", str(tmp_path / "models"))
    settings = load_settings(config)
    assert settings.storage_dir == tmp_path / "state"
    assert settings.models_dir == tmp_path / "models"
    assert settings.retrieval.top_n == 20 and settings.retrieval.top_k == 3
    assert settings.llm.backend == "vllm"
    assert settings.chunking.chunk_size == 900  # untouched keys keep their defaults


def test_config_from_environment_and_errors(tmp_path, monkeypatch):
    config = tmp_path / "other.toml"
    config.write_text("[store]\ncollection = \"other\"\n")
    monkeypatch.setenv("RAGQA_CONFIG", str(config))
    assert load_settings().store.collection == "other"
    with pytest.raises(FileNotFoundError, match="missing.toml"):
        load_settings(tmp_path / "missing.toml")
    config.write_text("[llm]\nbackend = \"openai\"\n")
    with pytest.raises(ValueError, match="backend"):
        load_settings(config)
