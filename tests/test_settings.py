"""Settings: the TOML, environment overrides, relative paths, errors."""

from __future__ import annotations

import pytest

from rag.settings import DEFAULT_CONFIG, load_settings


def test_default_config_values_and_paths():
    settings = load_settings()
    assert settings.retrieval.retrieve_k == 20 and settings.retrieval.keep_k == 5
    assert settings.storage_dir == DEFAULT_CONFIG.parent / "storage"
    assert settings.models_dir == settings.storage_dir / "models"
    assert settings.answer.prompt_file.is_file()


def test_fork_config_relative_to_its_folder_and_env_overrides(tmp_path, monkeypatch):
    config = tmp_path / "fork.toml"
    config.write_text('storage_dir = "state"\n[retrieval]\nretrieve_k = 30\n[llm]\nbackend = "server"\n'
                      '[llm.server]\nmodel = "own"\n')
    monkeypatch.setenv("RAGQA_RETRIEVAL__KEEP_K", "3")
    monkeypatch.setenv("RAGQA_LLM__SERVER__TIMEOUT_S", "9")
    monkeypatch.setenv("RAGQA_MODELS_DIR", str(tmp_path / "models"))
    settings = load_settings(config)
    assert settings.storage_dir == tmp_path / "state"
    assert settings.models_dir == tmp_path / "models"
    assert settings.retrieval.retrieve_k == 30 and settings.retrieval.keep_k == 3
    assert settings.llm.backend == "server"
    # Keys a server block leaves out keep the LLM's defaults, not the embedder's.
    assert (settings.llm.server.model, settings.llm.server.timeout_s) == ("own", 9)
    assert settings.llm.server.api_base == "http://127.0.0.1:8000/v1"
    assert settings.embedding.server.timeout_s == 60
    assert settings.chunking.chunk_size == 900  # untouched keys keep their defaults


def test_model_and_artifact_paths_are_relative_to_the_config(tmp_path, monkeypatch):
    """Every path setting, in any section, is taken from the config's folder, not the working
    directory; an empty one keeps meaning the default."""
    config = tmp_path / "fork" / "fork.toml"
    config.parent.mkdir()
    config.write_text('[llm]\nmodel_path = "models/own.gguf"\n[embedding]\nmodel_path = "models/e5"\n'
                      '[ingest]\ndocling_artifacts_path = "docling"\n'
                      '[evaluation.judge_llm]\nmodel_path = "models/judge.gguf"\n')
    monkeypatch.chdir(tmp_path)
    settings, folder = load_settings(config), config.parent.resolve()
    assert settings.llm.model_path == str(folder / "models" / "own.gguf")
    assert settings.gguf_path == folder / "models" / "own.gguf"
    assert settings.embedding_path == folder / "models" / "e5"
    assert settings.ingest.docling_artifacts_path == str(folder / "docling")
    assert settings.evaluation.judge_llm.model_path == str(folder / "models" / "judge.gguf")
    assert settings.rerank.cross_encoder_path == ""  # empty: the default
    config.write_text('[support]\nmodel_file = "mine.json"\n')
    with pytest.raises(ValueError, match=r"support.model_file mine.json not found"):
        load_settings(config)


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


def test_copied_config_finds_the_shipped_prompts_and_names_missing_files(tmp_path):
    from rag.settings import REPO_ROOT

    copy = tmp_path / "elsewhere" / "ragqa.toml"
    copy.parent.mkdir()
    copy.write_text(DEFAULT_CONFIG.read_text(encoding="utf-8"), encoding="utf-8")
    settings = load_settings(copy)
    assert settings.answer.prompt_file == REPO_ROOT / "prompts" / "answer.txt"
    assert settings.storage_dir == copy.parent / "storage"  # state stays beside the config
    (copy.parent / "prompts").mkdir()
    (copy.parent / "prompts" / "answer.txt").write_text("Own prompt {context} {question} {refusal}")
    assert load_settings(copy).answer.prompt_file == copy.parent / "prompts" / "answer.txt"  # its own wins
    copy.write_text('[answer]\nprompt_file = "prompts/mine.txt"\n')
    with pytest.raises(ValueError, match=r"ragqa.toml: answer.prompt_file prompts/mine.txt not found"):
        load_settings(copy)


@pytest.mark.parametrize(
    ("toml", "env", "message"),
    [
        ("[chunking]\nchunk_size = 100\nchunk_overlap = 100\n", {},
         r"chunking: chunk_overlap \(100\) must be smaller than chunk_size \(100\)"),
        ("[llm\nbackend = 1\n", {}, r"bad.toml: TOML syntax error"),
        ("", {"RAGQA_HEADERS__FIELDS": "Title,Region"},
         r"RAGQA_HEADERS__FIELDS: a list or table setting from the environment must be JSON"),
        ('storage_dir = "a-file"\n', {}, r"storage_dir .*a-file is a file, not a folder"),
        # A misspelt key would leave the default in force unnoticed.
        ("[retrieval]\nkeep_k = 3\ntopn = 40\n", {}, r"bad.toml: retrieval.topn: unknown key"),
        ('storage = "x"\n', {}, r"storage: unknown key"),
        ("", {"RAGQA_LLM__MODLE": "x"},
         r"llm.modle: unknown key \(misspelt\? or a RAGQA_LLM__MODLE variable\)"),
        # Out of range: each would run and give nonsense, or fail later with a traceback.
        ("[retrieval]\nkeep_k = 0\n", {}, r"retrieval.keep_k: Input should be greater than or equal to 1"),
        ("[retrieval]\nkeep_k = 30\n", {}, r"retrieval: keep_k \(30\) cannot exceed retrieve_k \(20\)"),
        ("[support]\nthreshold = 7\n", {}, r"support.threshold: Input should be less than or equal to 1"),
        ('[rerank]\nmethod = "cross-encoder"\n', {},
         r"rerank: method = \"cross-encoder\" needs cross_encoder_path"),
        # Keys of earlier versions name their new place.
        ("[retrieval]\ntop_n = 30\n", {}, r"/bad.toml: retrieval.top_n is now retrieval.retrieve_k$"),
        ("", {"RAGQA_RETRIEVAL__TOP_K": "3"},
         r"^RAGQA_RETRIEVAL__TOP_K: retrieval.top_k is now retrieval.keep_k \(RAGQA_RETRIEVAL__KEEP_K\)$"),
        ('[scoring]\nsupport = "llm"\nsupport_file = "x.json"\n', {},
         r"scoring.support is now support.method; scoring.support_file is now support.model_file$"),
        ("", {"RAGQA_SCORING__RERANKER_PATH": "x"},
         r"scoring.reranker_path is now rerank.cross_encoder_path"),
        ('answer_language = "English"\n', {}, r"answer_language is now answer.language$"),
        ("", {"RAGQA_HISTORY_TURNS": "1"},
         r"history_turns is now answer.history_turns \(RAGQA_ANSWER__HISTORY_TURNS\)"),
        ("[references]\nthreshold = 0.4\n", {}, r"references.threshold is now support.threshold$"),
        ('[llm]\napi_base = "http://x/v1"\n', {}, r"llm.api_base is now llm.server.api_base$"),
        ('[evaluation.judge_llm]\nmodel = "big"\n', {},
         r"evaluation.judge_llm.model is now evaluation.judge_llm.server.model"),
        ('[llm]\nbackend = "vllm"\n', {}, r"llm.backend: \"vllm\" is now \"server\""),
        ("[ingest]\nmax_file_mb = -1\n", {}, r"ingest.max_file_mb: Input should be greater than 0"),
        ("[llm]\nn_ctx = 100\n", {}, r"llm.n_ctx: Input should be greater than or equal to 1024"),
        ("", {"RAGQA_UI__PORT": "99999"}, r"ui.port: Input should be less than or equal to 65535"),
        ('[store]\ncollection = "a"\n', {},
         r"store.collection: 'a' is no Chroma collection name: 3-512 characters"),
        ("[headers]\nfilename_pattern = '(?P<Test Name>.+)'\n", {},
         r"headers.filename_pattern: '\(\?P<Test Name>\.\+\)' is not a regular expression "
         r"\(bad character in group name"),
        ("[headers.patterns]\nRegion = '(['\n", {},
         r"headers.patterns: Region: '\(\[' is not a regular expression"),
        ('[headers]\nfields = ["Title", "$where"]\n', {}, r"headers.fields: '\$where' is no field name"),
    ],
)
def test_settings_errors_are_one_line(tmp_path, monkeypatch, toml, env, message):
    (tmp_path / "a-file").write_text("not a folder")
    config = tmp_path / "bad.toml"
    config.write_text(toml)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(ValueError, match=message) as caught:
        load_settings(config)
    assert "\n" not in str(caught.value)


def test_the_working_folders_config_is_in_force(tmp_path, monkeypatch):
    """./ragqa.toml (a fork's folder) is taken before the shipped one, even a broken one; then
    $RAGQA_CONFIG, then --config override it."""
    monkeypatch.delenv("RAGQA_CONFIG", raising=False)
    fork = tmp_path / "fork"
    fork.mkdir()
    monkeypatch.chdir(fork)
    assert load_settings().config_file == DEFAULT_CONFIG  # none here: the shipped one
    (fork / "ragqa.toml").write_text('storage_dir = "state"\n', encoding="utf-8")
    settings = load_settings()
    assert (settings.config_file == fork.resolve() / "ragqa.toml"
            and settings.storage_dir == fork.resolve() / "state")
    other = tmp_path / "other.toml"
    other.write_text('storage_dir = "elsewhere"\n', encoding="utf-8")
    assert load_settings(other).config_file == other
    monkeypatch.setenv("RAGQA_CONFIG", str(other))
    assert load_settings().storage_dir == tmp_path / "elsewhere"
    monkeypatch.delenv("RAGQA_CONFIG")
    (fork / "ragqa.toml").write_text("[retrieval]\nkeep_k = 0\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"ragqa.toml: retrieval.keep_k"):
        load_settings()


def test_the_shipped_config_is_rendered_from_the_schema():
    """ragqa.toml is `python -m rag.settings_toml`'s output: every key, its description as comment."""
    from rag.settings_toml import shipped_config

    assert DEFAULT_CONFIG.read_text(encoding="utf-8") == shipped_config(), "run: python -m rag.settings_toml"


def test_a_rendered_config_loads_to_its_values(tmp_path):
    """What `ragqa init` writes: defaults, overrides by section, and notes as comments."""
    from rag.settings import Settings
    from rag.settings_toml import render_config

    overrides = {"models_dir": str(tmp_path / "models"), "chunking": {"chunk_size": 500},
                 "headers": {"fields": ["Title", "Owner"], "patterns": {"Owner": r"(?m)^Owner: (.+)$"}}}
    text = render_config(overrides, {"": ["Written for a test."], "headers": ["Owner: 3 of 4 files."]})
    assert text.startswith("# Written for a test.\n") and "[headers]\n# Owner: 3 of 4 files.\n" in text
    config = tmp_path / "ragqa.toml"
    config.write_text(text, encoding="utf-8")
    settings = load_settings(config)
    assert (settings.chunking.chunk_size, settings.headers.fields) == (500, ["Title", "Owner"])
    assert settings.headers.patterns == {"Owner": r"(?m)^Owner: (.+)$"}
    assert settings.models_dir == tmp_path / "models" and settings.storage_dir == tmp_path / "storage"
    defaults = Settings.model_fields
    assert settings.llm.server.timeout_s == 300 and settings.embedding.server.timeout_s == 60
    assert all(f"[{name}]" in text for name, info in defaults.items() if info.default_factory)


def test_an_old_key_in_vary_names_the_new_one():
    from evaluation.retrieval import with_overrides

    with pytest.raises(ValueError, match=r"^--vary scoring.support: scoring.support is now support.method$"):
        with_overrides(load_settings(), {"scoring.support": "llm"})
    assert with_overrides(load_settings(), {"rerank.method": "bi-encoder"}).rerank.method == "bi-encoder"
