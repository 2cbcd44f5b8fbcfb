"""Typed settings: `ragqa.toml`, overridden by `RAGQA_<SECTION>__<KEY>` environment variables.

A fork for a new document set edits only its TOML. Relative paths in the settings are taken
relative to the folder of the config file, so a config works from any working directory: a
path field says so by its type (`ConfigFile`, `ConfigPath`), and every such field of every
section is resolved when the settings load.
"""

from __future__ import annotations

import ipaddress
import os
import re
import tomllib
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
CONFIG_NAME = "ragqa.toml"
DEFAULT_CONFIG = REPO_ROOT / CONFIG_NAME
# Tokens: the answer prompt (about 310), llama.cpp's evidence budget (300), the answer (256), a question.
MIN_CONTEXT = 1024
_COLLECTION = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9._-]{1,510}[a-zA-Z0-9]")
_config_file: ContextVar[Path] = ContextVar("ragqa_config_file", default=DEFAULT_CONFIG)


class ConfigFile:
    """Marks a file setting, `Annotated[Path, ConfigFile()]`: a relative path is looked up
    beside the config, then among the shipped files (a copied ragqa.toml keeps the shipped
    prompts); a file found in neither place is an error at load time, not when a command first
    reads it."""


class ConfigPath:
    """Marks a folder, or a file that may be left empty, `Annotated[str | Path, ConfigPath()]`: a
    relative path is taken from the config's folder; empty stays empty (the setting's default)."""


def _is_ipv4(name: str) -> bool:
    try:
        ipaddress.IPv4Address(name)
        return True
    except ValueError:
        return False


def _compile(pattern: str, field: str = "") -> None:
    try:
        re.compile(pattern)
    except re.error as error:
        raise ValueError(f"{field + ': ' if field else ''}{pattern!r} is not a regular expression ({error})") from None


class Section(BaseModel):
    """A `[section]` of the config; a key it does not define is an error, not silently ignored."""

    model_config = ConfigDict(extra="forbid")


class LLMSettings(Section):
    backend: Literal["llamacpp", "vllm"] = Field(
        "llamacpp", description="llamacpp: embedded GGUF; vllm: an OpenAI-compatible server."
    )
    model_path: Annotated[str, ConfigPath()] = Field("", description="GGUF file; empty means the prepared Qwen GGUF.")
    n_ctx: int = Field(4096, ge=MIN_CONTEXT, description="Context window in tokens.")
    n_threads: int = Field(0, ge=0, description="llama.cpp threads; 0 means all cores.")
    max_new_tokens: int = Field(256, ge=1)
    temperature: float = Field(
        0.0, ge=0, le=2, description="Sampling temperature; 0: greedy, the same answer every time."
    )
    api_base: str = Field("http://127.0.0.1:8000/v1", description="vLLM OpenAI-compatible URL.")
    model: str = Field("Qwen/Qwen2.5-7B-Instruct", description="Model name the server serves.")
    api_key: str = "EMPTY"
    timeout_s: float = Field(300.0, gt=0)
    max_retries: int = Field(2, ge=0)

    @model_validator(mode="after")
    def _room_to_answer(self) -> LLMSettings:
        if self.max_new_tokens > self.n_ctx - MIN_CONTEXT // 2:
            raise ValueError(f"max_new_tokens ({self.max_new_tokens}) leaves under {MIN_CONTEXT // 2} tokens of "
                             f"n_ctx ({self.n_ctx}) for the prompt")
        return self


class EmbeddingSettings(Section):
    backend: Literal["torch", "onnx", "server"] = Field(
        "onnx",
        description="torch: the sentence-transformers folder; onnx: its int8 ONNX export (ragqa models); "
        "server: an OpenAI-compatible /v1/embeddings server.",
    )
    model_path: Annotated[str, ConfigPath()] = Field(
        "", description="sentence-transformers folder; empty means prepared e5."
    )
    query_prefix: str = "query: "
    passage_prefix: str = "passage: "
    batch_size: int = Field(4, gt=0, description="Texts per forward pass (per request with a server).")
    api_base: str = Field("http://127.0.0.1:7997/v1", description="The embedding server's OpenAI-compatible URL.")
    model: str = Field("intfloat/multilingual-e5-small", description="Model name the server serves.")
    api_key: str = "EMPTY"
    timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(2, ge=0)


class StoreSettings(Section):
    collection: str = Field("ragqa", description="Chroma collection: 3-512 of a-z A-Z 0-9 . _ -, a letter or digit at each end.")
    chroma_url: str = Field("", description="http://host:port of a Chroma server; empty: on disk.")

    @field_validator("collection")
    @classmethod
    def _chroma_name(cls, name: str) -> str:
        # Chroma's own rule, checked here so a bad name is a config error and not a traceback
        # from the first command that opens the store.
        if not _COLLECTION.fullmatch(name) or ".." in name or _is_ipv4(name):
            raise ValueError(f"{name!r} is no Chroma collection name: 3-512 characters of a-z A-Z 0-9 . _ -, "
                             "a letter or digit at each end, no '..', not an IPv4 address")
        return name


class ChunkingSettings(Section):
    chunk_size: int = Field(900, gt=0, description="Upper bound of a chunk in characters.")
    chunk_overlap: int = Field(150, ge=0, description="Characters shared by consecutive split chunks.")

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkingSettings:
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError(f"chunk_overlap ({self.chunk_overlap}) must be smaller than chunk_size ({self.chunk_size})")
        return self


class HeaderSettings(Section):
    """Key fields of a document, prefixed to each of its chunks (the paper's Ver.1)."""

    enabled: bool = Field(True, description="false: no prefix (the paper's Ver.0).")
    fields: list[str] = Field(default_factory=lambda: ["Title"], description="Header field names.")
    filename_pattern: str = Field(
        "", description="Regex over the file name; named groups (spaces as _) give field values."
    )
    patterns: dict[str, str] = Field(
        default_factory=dict, description="Field -> regex over the first page/slide; group 1 is the value."
    )
    llm: bool = Field(False, description="Ask the LLM for fields no other source gave (cached).")

    @field_validator("fields")
    @classmethod
    def _names(cls, fields: list[str]) -> list[str]:
        # Each field becomes chunk metadata, and Chroma refuses keys starting with $ or # at ingest.
        for name in fields:
            if not name.strip() or name[0] in "$#":
                raise ValueError(f"{name!r} is no field name: not empty, and not starting with $ or #")
        return fields

    @field_validator("filename_pattern")
    @classmethod
    def _regex(cls, pattern: str) -> str:
        _compile(pattern)
        return pattern

    @field_validator("patterns")
    @classmethod
    def _regexes(cls, patterns: dict[str, str]) -> dict[str, str]:
        for field, pattern in patterns.items():
            _compile(pattern, field)
        return patterns

    llm_prompt_file: Annotated[Path, ConfigFile()] = Field(Path("prompts/header.txt"), description="Prompt of the LLM extraction.")


class IngestSettings(Section):
    pdf_strategy: Literal["text", "layout", "markdown", "anchored"] = Field(
        "anchored", description="PDF extraction: text layer, layout blocks, structure, structure + pages."
    )
    max_file_mb: float = Field(100, gt=0, description="Larger files are refused.")
    max_table_cells: int = Field(
        1_000_000, ge=1, description="A CSV/XLSX with more cells (rows x columns) is refused (Docling's table limit)."
    )
    max_text_chars: int = Field(
        10_000_000, ge=1, description="A document with more characters of text is refused (its embedding would "
        "hold the store's writer for many minutes: split it)."
    )
    workers: int = Field(
        -1, ge=-1, description="Conversion processes beside the one that embeds; -1: one per core beyond two; 0: none."
    )
    docling_artifacts_path: Annotated[str, ConfigPath()] = Field(
        "", description="Folder of downloaded Docling layout models; empty: model-free PDF pipeline."
    )
    ocr: Literal["auto", "off", "force"] = Field(
        "auto",
        description="auto: OCR PDF pages without a text layer and pictures; off: none (a scan is refused); "
        "force: OCR every PDF page, ignoring its text layer.",
    )
    ocr_languages: list[str] = Field(
        ["kor", "eng"], description="Tesseract languages, e.g. kor, eng, jpn (each an installed tesseract-ocr-<lang>)."
    )
    ocr_dpi: int = Field(300, ge=72, le=600, description="Resolution PDF pages are rendered at for OCR.")


class RetrievalSettings(Section):
    top_n: int = Field(20, ge=1, description="Chunks retrieved before reranking.")
    top_k: int = Field(5, ge=1, description="Chunks kept after reranking and given to the LLM.")
    min_score: float = Field(
        0.1, ge=0, le=1, description="Bi-encoder relevance under which the best kept chunk cannot ground an answer."
    )

    @model_validator(mode="after")
    def _keep_at_most_retrieved(self) -> RetrievalSettings:
        if self.top_k > self.top_n:
            raise ValueError(f"top_k ({self.top_k}) cannot exceed top_n ({self.top_n}): reranking keeps top_k of the top_n")
        return self


class ContextSettings(Section):
    """How retrieved chunks are written into the prompt (rag/context.py)."""

    context_tokens: int = Field(
        0, ge=0, description="Token budget of the evidence; 0: 300 with llama.cpp (about 5 s of prompt on 2 cores), 3000 with a server."
    )
    tables: Literal["rows", "markdown"] = Field("rows", description="Table rows as `column: value` pairs, or as Markdown rows.")
    rank_weight: float = Field(0.5, ge=0, description="How much a chunk's rank adds to its sentences' relevance.")

    def budget(self, backend: str) -> int:
        return self.context_tokens or (300 if backend == "llamacpp" else 3000)


class ScoringSettings(Section):
    """Bi-encoder cosines of e5 crowd into [0.7, 0.95]; a logistic maps them onto [0, 1]."""

    reranker: Literal["ltr", "scorer"] = Field(
        "ltr", description="Rerank stage: the learned ranker over retrieval features, or the relevance scorer alone."
    )
    ranker_file: Annotated[Path, ConfigFile()] = Field(Path("rag/ranker.json"), description="Weights of the learned ranker (ragqa train reranker).")
    reranker_path: Annotated[str, ConfigPath()] = Field("", description="Fine-tuned CrossEncoder folder; empty: bi-encoder.")
    cosine_center: float = Field(0.84, ge=-1, le=1, description="Cosine that maps to a score of 0.5.")
    cosine_scale: float = Field(0.025, gt=0, description="Cosine distance per logit unit.")
    support: Literal["learned", "llm"] = Field(
        "learned", description="Matcher's support scorer: the learned support model, or the LLM server as verifier."
    )
    support_file: Annotated[Path, ConfigFile()] = Field(Path("rag/support.json"), description="Weights of the learned support model.")
    verifier_prompt_file: Annotated[Path, ConfigFile()] = Field(Path("prompts/verify.txt"), description="Prompt of the LLM verifier.")
    verifier_concurrency: int = Field(8, ge=1, description="Verifier requests in flight (support = llm).")


class UISettings(Section):
    host: str = Field("127.0.0.1", description="Address `ragqa serve` binds; 0.0.0.0 shares it on the network.")
    port: int = Field(7860, ge=1, le=65535, description="Port of `ragqa serve`.")
    users: list[str] = Field(
        default_factory=list,
        description="USER:HASH entries (`ragqa hash-password`); any: a login is required. Env: RAGQA_UI__USERS as JSON.",
    )
    concurrency: int = Field(
        4, ge=1, description="Answers written at once with a server LLM backend; the embedded model writes one."
    )
    max_questions: int = Field(
        2, ge=1, description="Questions one login (without logins: one browser session) may have waiting or being "
        "answered; one more is refused with a message, so that one user cannot starve the others.",
    )
    login_failures: int = Field(
        5, ge=1, description="Failed logins within lockout_s that lock the user name, and the client address, for lockout_s."
    )
    lockout_s: float = Field(300, gt=0, description="How long a locked user name or address is refused, right password included.")

    def user_hashes(self) -> dict[str, str]:
        pairs = [entry.split(":", 1) for entry in self.users]
        bad = [entry for entry, pair in zip(self.users, pairs) if len(pair) != 2 or not all(pair)]
        if bad:
            raise ValueError(f"ui.users entries are USER:HASH (from `ragqa hash-password`), not {bad[0]!r}")
        return dict(pairs)


class ReferenceSettings(Section):
    threshold: float = Field(0.5, ge=0, le=1, description="Calibrated score under which a segment is unsupported.")
    max_span: int = Field(3, ge=1, description="Most sentences one segment may join.")
    margin: float = Field(0.05, ge=0, le=1, description="Other chunks within this of the best are cited too.")
    context_bonus: float = Field(
        0.1, ge=0, le=1, description="How far joining may raise a sentence's support above its own score."
    )


class EvaluationSettings(Section):
    """The LLM judge of `ragqa eval answers|judge|ragas` and its prompts."""

    judge_llm: LLMSettings | None = Field(None, description="Judge backend; absent: the [llm] backend.")
    judge_prompt_file: Annotated[Path, ConfigFile()] = Field(Path("prompts/judge.txt"), description="Single-answer grading prompt.")
    pairwise_prompt_file: Annotated[Path, ConfigFile()] = Field(Path("prompts/judge_pairwise.txt"), description="Pairwise prompt.")
    no_rag_prompt_file: Annotated[Path, ConfigFile()] = Field(Path("prompts/no_rag.txt"), description="Prompt of --no-rag runs.")
    retries: int = Field(2, ge=0, description="Extra judge calls when its reply is not the JSON asked for.")
    timeout_s: float = Field(600, gt=0, description="Longest wait for one judge call.")
    concurrency: int = Field(1, ge=1, description="Judge calls in flight (raise it for a vLLM server).")


class TrainingSettings(Section):
    """`ragqa qa generate` and `ragqa train reranker|retriever`."""

    qa_prompt_file: Annotated[Path, ConfigFile()] = Field(Path("prompts/qa_generate.txt"), description="Question generation prompt.")
    questions_per_chunk: int = Field(3, ge=1, description="Questions asked per chunk.")
    max_new_tokens: int = Field(512, ge=1, description="Generation budget of one chunk's questions and answers.")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="RAGQA_", env_nested_delimiter="__", extra="forbid"
    )

    storage_dir: Annotated[Path, ConfigPath()] = Field(Path("storage"), description="Root of all run-time state.")
    models_dir: Annotated[Path, ConfigPath()] = Field(Path(""), description="Prepared models; empty: storage_dir/models.")
    prompt_file: Annotated[Path, ConfigFile()] = Field(Path("prompts/answer.txt"), description="The generation prompt.")
    refusal: str = "I cannot answer this from the documents."
    refusals: dict[str, str] = Field(
        {"Korean": "문서에서 이 질문의 답을 찾을 수 없습니다."},
        description="The refusal in other answer languages (as answer_language names them); `refusal` for the rest.",
    )
    answer_language: str = Field(
        "auto", description="Language of the answers; auto: the question's (Korean or English)."
    )
    condense_prompt_file: Annotated[Path, ConfigFile()] = Field(
        Path("prompts/condense.txt"), description="Rewrites a follow-up into a question that stands alone."
    )
    history_turns: int = Field(3, ge=0, description="Earlier turns of a chat the rewriting sees; 0: none.")
    translate_questions: bool = Field(
        True, description="Translate a question into the corpus's language (Korean/English) before retrieval when they differ."
    )
    translate_prompt_file: Annotated[Path, ConfigFile()] = Field(Path("prompts/translate.txt"), description="Translates a question.")
    llm: LLMSettings = Field(default_factory=LLMSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings)
    headers: HeaderSettings = Field(default_factory=HeaderSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    scoring: ScoringSettings = Field(default_factory=ScoringSettings)
    references: ReferenceSettings = Field(default_factory=ReferenceSettings)
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
    def chroma_dir(self) -> Path:
        return self.storage_dir / "chroma"

    @property
    def docstore_dir(self) -> Path:
        return self.storage_dir / "docstore"

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
    """The config cannot be loaded; the message names the file or variable and says why, in one line."""


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
    """A validation error of the settings (or of the `section` model) as `key: reason; ...`, one line."""
    return "; ".join(_problem(e, section) for e in error.errors())


def _problem(error: dict, section: str = "") -> str:
    """One validation error as `key: reason`; an unknown key says where else it may come from."""
    parts = [str(part) for part in ([section] if section else []) + list(error["loc"])]
    key = ".".join(parts)
    if error["type"] == "extra_forbidden":
        variable = "RAGQA_" + "__".join(parts).upper()
        return f"{key}: unknown key (misspelt? or a {variable} variable); the keys are in rag/settings.py"
    reason = error["msg"].removeprefix("Value error, ")
    return f"{key}: {reason}" if key else reason


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
        field = fields.get(key.upper().removeprefix(prefix).lower()) if key.upper().startswith(prefix) else None
        if field is not None and getattr(field.annotation, "__origin__", None) in (list, dict):
            try:
                json.loads(value)
            except ValueError:
                bad.append(key)
    where = ", ".join(bad) or f"a {prefix}* variable"
    return f"{where}: a list or table setting from the environment must be JSON, e.g. '[\"Title\", \"Region\"]'"
