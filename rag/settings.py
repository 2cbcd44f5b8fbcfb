"""Typed settings: `ragqa.toml`, overridden by `RAGQA_<SECTION>__<KEY>` environment variables.

A fork for a new document set edits only its TOML. Relative paths in the settings are taken
relative to the folder of the config file, so a config works from any working directory: a
path field says so by its type (`ConfigFile`, `ConfigPath`), and every such field of every
section is resolved when the settings load. The sections are in rag/settings_sections.py and
rag/settings_tools.py.
"""

from __future__ import annotations

import os
import tomllib
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field, PrivateAttr, ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from rag.settings_checks import FactsSettings, HopSettings, PremiseSettings
from rag.settings_sections import (
    MIN_CONTEXT,
    AnswerSettings,
    ChunkingSettings,
    ConfigFile,
    ConfigPath,
    ContextSettings,
    CurrencySettings,
    EmbeddingSettings,
    HeaderSettings,
    IngestSettings,
    LLMSettings,
    ReferenceSettings,
    RerankSettings,
    RetrievalSettings,
    ServerSettings,
    StoreSettings,
    SupportSettings,
)
from rag.settings_tools import EvaluationSettings, TrainingSettings, UISettings

__all__ = [
    "MIN_CONTEXT", "AnswerSettings", "ChunkingSettings", "ConfigFile", "ConfigPath", "ContextSettings",
    "CurrencySettings", "EmbeddingSettings", "EvaluationSettings", "FactsSettings", "HeaderSettings",
    "HopSettings", "IngestSettings", "LLMSettings",
    "PremiseSettings", "ReferenceSettings", "RerankSettings", "RetrievalSettings", "ServerSettings",
    "StoreSettings", "SupportSettings", "TrainingSettings", "UISettings", "Settings", "SettingsLoadError",
    "load_settings", "config_path", "problems", "renamed", "REPO_ROOT", "CONFIG_NAME", "DEFAULT_CONFIG",
]

REPO_ROOT = Path(__file__).resolve().parent.parent
CONFIG_NAME = "ragqa.toml"
DEFAULT_CONFIG = REPO_ROOT / CONFIG_NAME
_config_file: ContextVar[Path] = ContextVar("ragqa_config_file", default=DEFAULT_CONFIG)

# Keys of earlier versions -> their names now (the server keys of [llm], [embedding] and
# [evaluation.judge_llm] moved into their `server` block: see `renamed`).
RENAMED = {
    **{key: f"answer.{key}" for key in ("prompt_file", "refusal", "refusals", "condense_prompt_file",
                                        "history_turns", "translate_questions", "translate_prompt_file")},
    "answer_language": "answer.language",
    "retrieval.top_n": "retrieval.retrieve_k",
    "retrieval.top_k": "retrieval.keep_k",
    "scoring.reranker": 'rerank.method ("ltr", "bi-encoder" or "cross-encoder")',
    "scoring.ranker_file": "rerank.ranker_file",
    "scoring.reranker_path": 'rerank.cross_encoder_path (with rerank.method = "cross-encoder")',
    "scoring.cosine_center": "rerank.cosine_center",
    "scoring.cosine_scale": "rerank.cosine_scale",
    "scoring.support": "support.method",
    "scoring.support_file": "support.model_file",
    "scoring.verifier_prompt_file": "support.verifier_prompt_file",
    "scoring.verifier_concurrency": "support.verifier_concurrency",
    "references.threshold": "support.threshold",
}


def renamed(key: str) -> str | None:
    """The name now of `key` (dotted, e.g. retrieval.top_n) if it is a key of an earlier version."""
    section, _, name = key.rpartition(".")
    if section in ("llm", "embedding", "evaluation.judge_llm") and name in ServerSettings.model_fields:
        return f"{section}.server.{name}"
    return RENAMED.get(key)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="RAGQA_", env_nested_delimiter="__", extra="forbid"
    )

    storage_dir: Annotated[Path, ConfigPath()] = Field(
        Path("storage"), description="Root of all run-time state."
    )
    models_dir: Annotated[Path, ConfigPath()] = Field(
        Path(""), description="Prepared models; empty: storage_dir/models."
    )
    answer: AnswerSettings = Field(default_factory=AnswerSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings)
    headers: HeaderSettings = Field(default_factory=HeaderSettings)
    currency: CurrencySettings = Field(default_factory=CurrencySettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    rerank: RerankSettings = Field(default_factory=RerankSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    support: SupportSettings = Field(default_factory=SupportSettings)
    references: ReferenceSettings = Field(default_factory=ReferenceSettings)
    facts: FactsSettings = Field(default_factory=FactsSettings)
    premise: PremiseSettings = Field(default_factory=PremiseSettings)
    hop: HopSettings = Field(default_factory=HopSettings)
    ui: UISettings = Field(default_factory=UISettings)
    evaluation: EvaluationSettings = Field(default_factory=EvaluationSettings)
    training: TrainingSettings = Field(default_factory=TrainingSettings)
    _toml: Path = PrivateAttr(default=DEFAULT_CONFIG)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, _config_file.get()))

    def model_post_init(self, __context: object) -> None:
        self._toml = _config_file.get().resolve()
        _resolve_paths(self, self._toml.parent)
        if self.storage_dir.exists() and not self.storage_dir.is_dir():
            raise ValueError(f"storage_dir {self.storage_dir} is a file, not a folder")
        if _empty(self.models_dir):
            self.models_dir = self.storage_dir / "models"

    @property
    def config_file(self) -> Path:
        """The TOML these settings were read from (environment variables may override its keys)."""
        return self._toml

    # Run-time state lives under storage_dir so one variable moves all of it.
    @property
    def reports_dir(self) -> Path:
        return self.storage_dir / "reports"

    @property
    def gguf_path(self) -> Path:
        return Path(self.llm.model_path) if self.llm.model_path else self.models_dir / GGUF_NAME

    @property
    def embedding_path(self) -> Path:
        return (
            Path(self.embedding.model_path)
            if self.embedding.model_path
            else self.models_dir / EMBEDDING_NAME
        )

    @property
    def embedding_onnx_path(self) -> Path:
        """The int8 ONNX export of the embedding model, beside it (`ragqa models` writes it)."""
        return self.embedding_path.with_name(self.embedding_path.name + ONNX_SUFFIX)


GGUF_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
EMBEDDING_NAME = "multilingual-e5-small"
ONNX_SUFFIX = "-onnx-int8"


def _resolve_paths(model: BaseModel, base: Path, prefix: str = "") -> None:
    """Resolve the `ConfigFile` and `ConfigPath` fields of `model` and of every section in it
    (`evaluation.judge_llm` included when given) against the config's folder `base`."""
    for name, info in type(model).model_fields.items():
        value, key = getattr(model, name), prefix + name
        if isinstance(value, BaseModel):
            _resolve_paths(value, base, f"{key}.")
        elif any(isinstance(marker, ConfigFile) for marker in info.metadata):
            setattr(model, name, _resolve_file(base, key, value))
        elif any(isinstance(marker, ConfigPath) for marker in info.metadata) and not _empty(value):
            resolved = (base / value).resolve()
            setattr(model, name, resolved if isinstance(value, Path) else str(resolved))


def _empty(path: str | Path) -> bool:
    """Unset: "" (a Path field cannot tell "" from ".", so "." there too)."""
    return path == "" or path == Path("")


def _resolve_file(base: Path, key: str, path: Path) -> Path:
    for candidate in (base / path, REPO_ROOT / path):
        if candidate.is_file():
            return candidate.resolve()
    raise ValueError(f"{key} {path} not found (looked in {base} and {REPO_ROOT})")


class SettingsLoadError(ValueError):
    """The config cannot be loaded; the message names the file or variable and says why, in one
    line."""


def config_path(config: Path | str | None = None) -> Path:
    """The config in force: `config`, else $RAGQA_CONFIG, else ./ragqa.toml in the working
    directory (a fork's folder), else the shipped one."""
    if config or os.environ.get("RAGQA_CONFIG"):
        return Path(config or os.environ["RAGQA_CONFIG"])
    local = Path.cwd() / CONFIG_NAME
    return local if local.is_file() else DEFAULT_CONFIG


def load_settings(config: Path | str | None = None) -> Settings:
    """Read the config `config_path` picks, with env overrides applied."""
    path = config_path(config)
    if not path.is_file():
        raise FileNotFoundError(f"config file not found: {path}")
    _refuse_renamed_variables()
    token = _config_file.set(path)
    try:
        return Settings()
    except tomllib.TOMLDecodeError as error:
        raise SettingsLoadError(f"{path}: TOML syntax error: {error}") from error
    except ValidationError as error:
        raise SettingsLoadError(f"{path}: {problems(error)}") from error
    except SettingsError as error:
        raise SettingsLoadError(_env_hint(error)) from error
    except ValueError as error:  # raised by model_post_init: a bad path
        raise SettingsLoadError(f"{path}: {error}") from error
    finally:
        _config_file.reset(token)


def problems(error: ValidationError, section: str = "") -> str:
    """A validation error of the settings (or of the `section` model) as `key: reason; ...`,
    one line."""
    return "; ".join(_problem(e, section) for e in error.errors())


def _problem(error: dict, section: str = "") -> str:
    """One validation error as `key: reason`; an unknown key says where else it may come from."""
    parts = [str(part) for part in ([section] if section else []) + list(error["loc"])]
    key = ".".join(parts)
    if error["type"] == "extra_forbidden":
        if isinstance(error["input"], dict) and key == "scoring":  # a whole section of old keys
            return "; ".join(_unknown(f"{key}.{name}") for name in error["input"]) or _unknown(key)
        return _unknown(key)
    reason = error["msg"].removeprefix("Value error, ")
    return f"{key}: {reason}" if key else reason


def _unknown(key: str) -> str:
    new = renamed(key)
    if new:
        return f"{key} is now {new}"
    variable = "RAGQA_" + key.replace(".", "__").upper()
    return f"{key}: unknown key (misspelt? or a {variable} variable); every key is in the shipped ragqa.toml"


def _refuse_renamed_variables() -> None:
    """An old key set from the environment is refused as in a TOML (the environment source would
    ignore a variable of a section that is gone)."""
    for variable in os.environ:
        if not variable.upper().startswith("RAGQA_") or variable.upper() == "RAGQA_CONFIG":
            continue
        key = variable[len("RAGQA_"):].lower().replace("__", ".")
        new = renamed(key)
        if new:
            now = "RAGQA_" + new.split(" ")[0].replace(".", "__").upper()
            raise SettingsLoadError(f"{variable}: {key} is now {new} ({now})")


def _env_hint(error: SettingsError) -> str:
    """pydantic-settings names the section, not the variable, when a list or table setting from
    the environment is not JSON: find the variable."""
    import json

    section = str(error).partition('field "')[2].partition('"')[0]
    prefix = f"RAGQA_{section.upper()}__"
    model = Settings.model_fields.get(section)
    fields = getattr(model.annotation, "model_fields", {}) if model else {}
    bad = []
    for key, value in os.environ.items():
        ours = key.upper().startswith(prefix)
        field = fields.get(key.upper().removeprefix(prefix).lower()) if ours else None
        if field is not None and getattr(field.annotation, "__origin__", None) in (list, dict):
            try:
                json.loads(value)
            except ValueError:
                bad.append(key)
    where = ", ".join(bad) or f"a {prefix}* variable"
    example = "'[\"Title\", \"Region\"]'"
    return f"{where}: a list or table setting from the environment must be JSON, e.g. {example}"
