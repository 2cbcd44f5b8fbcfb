"""The `[sections]` of the settings (rag/settings.py assembles them): each field's description
is its comment in a rendered config (rag/settings_toml.py)."""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

# Tokens: the answer prompt (about 310), llama.cpp's evidence budget (300), the answer (256), a question.
MIN_CONTEXT = 1024
_COLLECTION = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9._-]{1,510}[a-zA-Z0-9]")


class ConfigFile:
    """Marks a file setting, `Annotated[Path, ConfigFile()]`: a relative path is looked up
    beside the config, then among the shipped files (a copied ragqa.toml keeps the shipped
    prompts); a file found in neither place is an error at load time, not at first use."""


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
        where = f"{field}: " if field else ""
        raise ValueError(f"{where}{pattern!r} is not a regular expression ({error})") from None


class Section(BaseModel):
    """A `[section]` of the config; a key it does not define is an error, not silently ignored."""

    model_config = ConfigDict(extra="forbid")


class ServerSettings(Section):
    """An OpenAI-compatible server (`backend = "server"`), the LLM's or the embedder's."""

    api_base: str = Field(description="The server's OpenAI-compatible URL.")
    model: str = Field(description="Model name the server serves.")
    api_key: str = "EMPTY"
    timeout_s: float = Field(gt=0, description="Longest wait for one request.")
    max_retries: int = Field(2, ge=0)


def server_block(**defaults: Any) -> Any:
    """The type of a `server` field whose keys left out of the config keep `defaults`."""

    def fill(given: Any) -> Any:
        return {**defaults, **given} if isinstance(given, dict) else given

    return Annotated[ServerSettings, BeforeValidator(fill)]


LLM_SERVER = {"api_base": "http://127.0.0.1:8000/v1", "model": "Qwen/Qwen2.5-7B-Instruct", "timeout_s": 300.0}
EMBEDDING_SERVER = {"api_base": "http://127.0.0.1:7997/v1", "model": "intfloat/multilingual-e5-small",
                    "timeout_s": 60.0}


def _no_vllm(backend: Any) -> Any:
    if backend == "vllm":
        raise ValueError('"vllm" is now "server" (any OpenAI-compatible server)')
    return backend


class LLMSettings(Section):
    backend: Annotated[Literal["llamacpp", "server"], BeforeValidator(_no_vllm)] = Field(
        "llamacpp",
        description="llamacpp: the embedded GGUF; server: an OpenAI-compatible server ([llm.server]).",
    )
    model_path: Annotated[str, ConfigPath()] = Field(
        "", description="GGUF file; empty means the prepared Qwen GGUF."
    )
    n_ctx: int = Field(4096, ge=MIN_CONTEXT, description="Context window in tokens.")
    n_threads: int = Field(0, ge=0, description="llama.cpp threads; 0 means all cores.")
    max_new_tokens: int = Field(256, ge=1)
    temperature: float = Field(
        0.0, ge=0, le=2, description="Sampling temperature; 0: greedy, the same answer every time."
    )
    server: server_block(**LLM_SERVER) = Field(  # type: ignore[valid-type]
        default_factory=lambda: ServerSettings(**LLM_SERVER), description="The server backend's."
    )

    @model_validator(mode="after")
    def _room_to_answer(self) -> LLMSettings:
        if self.max_new_tokens > self.n_ctx - MIN_CONTEXT // 2:
            raise ValueError(f"max_new_tokens ({self.max_new_tokens}) leaves under {MIN_CONTEXT // 2} "
                             f"tokens of n_ctx ({self.n_ctx}) for the prompt")
        return self


class EmbeddingSettings(Section):
    backend: Literal["torch", "onnx", "server"] = Field(
        "onnx",
        description="torch: the sentence-transformers folder; onnx: its int8 ONNX export (ragqa models), "
        "faster on CPU; server: an OpenAI-compatible /v1/embeddings server ([embedding.server]: vLLM, TEI, "
        "Infinity or `ragqa embed-server`).",
    )
    model_path: Annotated[str, ConfigPath()] = Field(
        "", description="sentence-transformers folder; empty means the prepared multilingual-e5-small."
    )
    query_prefix: str = Field("query: ", description="Applied by every backend, the server one included.")
    passage_prefix: str = "passage: "
    batch_size: int = Field(4, gt=0, description="Texts per forward pass (per request with a server).")
    server: server_block(**EMBEDDING_SERVER) = Field(  # type: ignore[valid-type]
        default_factory=lambda: ServerSettings(**EMBEDDING_SERVER), description="The server backend's."
    )


class StoreSettings(Section):
    collection: str = Field(
        "ragqa", description="Chroma collection: 3-512 of a-z A-Z 0-9 . _ -, a letter or digit at each end."
    )
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
            raise ValueError(f"chunk_overlap ({self.chunk_overlap}) must be smaller than "
                             f"chunk_size ({self.chunk_size})")
        return self


class HeaderSettings(Section):
    """Key fields of a document, prefixed to each of its chunks (the paper's Ver.1). Values come
    from Markdown front matter, then the file name, then the first page or slide."""

    enabled: bool = Field(True, description="false: no prefix (the paper's Ver.0).")
    fields: list[str] = Field(default_factory=lambda: ["Title"], description="Header field names.")
    filename_pattern: str = Field(
        "", description="Regex over the file name; named groups (spaces as _) give field values."
    )
    patterns: dict[str, str] = Field(
        default_factory=dict, description="Field = regex over the first page/slide; group 1 is the value."
    )
    llm: bool = Field(False, description="Ask the LLM for fields no other source gave (cached).")
    llm_prompt_file: Annotated[Path, ConfigFile()] = Field(
        Path("prompts/header.txt"), description="Prompt of the LLM extraction."
    )

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


class CurrencySettings(Section):
    """Document currency read at ingest (ingestion/currency.py): effective date, version, status,
    what a document supersedes or corrects. Built-in spellings (English, Korean) always apply;
    these add a document set's own."""

    fields: dict[str, list[str]] = Field(
        default_factory=lambda: {
            "effective_date": ["effective", "effective date", "effective_date", "valid from", "date",
                               "시행일", "적용일", "날짜", "일자"],
            "version": ["version", "revision", "rev", "버전", "개정"],
            "status": ["status", "상태"],
            "supersedes": ["supersedes", "replaces", "대체"],
            "corrects": ["corrects", "erratum to", "정정"],
        },
        description="Currency field = front matter or header field names read for it, first found wins.",
    )
    patterns: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Currency field (version, supersedes, corrects) = extra regexes over the first page's "
        "lines; group 1 is the value.",
    )
    first_lines: int = Field(15, ge=1, description="How many lines of the first page are read.")
    prefer_current: bool = Field(True, description="A newer version or erratum ranked above the older, the "
                                 "context saying which is current (rag/currency.py); false: ignored.")
    conflicts: bool = Field(True, description="A figure another shown document gives otherwise, no currency "
                            "ordering them, reported in the Answer's conflicts (rag/conflicts.py).")
    conflict_candidates: int = Field(5, ge=0, description="Chunks ranked after the kept ones that are read "
                                     "for such a figure too; one giving it joins the sources.")

    @field_validator("fields", "patterns")
    @classmethod
    def _known(cls, named: dict[str, list[str]], info) -> dict[str, list[str]]:
        allowed = {"effective_date", "version", "status", "supersedes", "corrects"}
        if unknown := set(named) - allowed:
            raise ValueError(f"unknown currency field(s) {sorted(unknown)}: one of {sorted(allowed)}")
        if info.field_name == "patterns":
            for key, patterns in named.items():
                for pattern in patterns:
                    _compile(pattern, key)
        return named


class IngestSettings(Section):
    pdf_strategy: Literal["text", "layout", "markdown", "anchored"] = Field(
        "anchored", description="PDF extraction: text layer, layout blocks, structure, structure + pages."
    )
    max_file_mb: float = Field(100, gt=0, description="Larger files are refused.")
    max_table_cells: int = Field(
        1_000_000, ge=1,
        description="A CSV/XLSX with more cells (rows x columns) is refused (Docling's table limit).",
    )
    max_text_chars: int = Field(
        10_000_000, ge=1, description="A document with more characters of text is refused (its embedding "
        "would hold the store's writer for many minutes: split it)."
    )
    workers: int = Field(
        -1, ge=-1,
        description="Conversion processes beside the one that embeds; -1: one per core beyond two; 0: none.",
    )
    docling_artifacts_path: Annotated[str, ConfigPath()] = Field(
        "", description="Folder of downloaded Docling layout models; empty: model-free PDF pipeline."
    )
    ocr: Literal["auto", "off", "force"] = Field(
        "auto",
        description="auto: OCR PDF pages without a text layer and pictures in PPTX/DOCX/XLSX; off: none "
        "(a scanned PDF is refused); force: OCR every PDF page, ignoring its text layer.",
    )
    ocr_languages: list[str] = Field(
        ["kor", "eng"],
        description="Tesseract languages, e.g. kor, eng, jpn (each an installed tesseract-ocr-<lang>).",
    )
    ocr_dpi: int = Field(300, ge=72, le=600, description="Resolution PDF pages are rendered at for OCR.")


class RetrievalSettings(Section):
    retrieve_k: int = Field(20, ge=1, description="Chunks retrieved before reranking.")
    keep_k: int = Field(5, ge=1, description="Chunks kept after reranking and given to the LLM.")
    min_score: float = Field(
        0.1, ge=0, le=1, description="Refuse without generating when no kept chunk's bi-encoder relevance "
        "(calibrated cosine) reaches this."
    )
    named_codes: bool = Field(
        True, description="Ask a question that names a site, team or system with the code the corpus gives "
        "it "
        "(\"Kellbrook Water Treatment Works (KBW)\"): registers often hold only the code (rag/codes.py)."
    )

    @model_validator(mode="after")
    def _keep_at_most_retrieved(self) -> RetrievalSettings:
        if self.keep_k > self.retrieve_k:
            raise ValueError(f"keep_k ({self.keep_k}) cannot exceed retrieve_k ({self.retrieve_k}): "
                             "reranking keeps keep_k of the retrieve_k")
        return self


class RerankSettings(Section):
    """The rerank stage. The bi-encoder's cosines (e5's crowd into 0.7-0.95) are mapped onto
    scores in 0-1 by a logistic: cosine_center, cosine_scale."""

    method: Literal["ltr", "bi-encoder", "cross-encoder"] = Field(
        "ltr", description="ltr: the learned ranker over dense and BM25 scores and wording; bi-encoder: the "
        "calibrated cosine alone; cross-encoder: the CrossEncoder at cross_encoder_path alone."
    )
    ranker_file: Annotated[Path, ConfigFile()] = Field(
        Path("rag/ranker.json"),
        description="Weights of the learned ranker (`ragqa qa mine` + `ragqa train reranker` refit them).",
    )
    refit: bool = Field(False, description="After `ragqa ingest`, refit the ranker on questions mined from "
                        "the store; adopt it, or dense or BM25 order, where it beats ranker_file on held-out "
                        "ones (training/refit.py; off by default: docs/BENCHMARKS.md, Ranker refit).")
    refit_min_change: float = Field(0.2, ge=0, le=1, description="Share of documents changed that refits.")
    refit_margin: float = Field(0.02, ge=0, le=1, description="Held-out S@1 by which to beat ranker_file.")
    refit_questions: int = Field(200, ge=20, description="Mined questions at most (each one a retrieval).")
    cross_encoder_path: Annotated[str, ConfigPath()] = Field("", description="CrossEncoder folder from "
                                                             "`ragqa train reranker --cross-encoder`, e.g. "
                                                             "storage/models/reranker.")
    cosine_center: float = Field(0.84, ge=-1, le=1, description="Cosine that maps to a score of 0.5.")
    cosine_scale: float = Field(0.025, gt=0, description="Cosine distance per logit unit (a model from "
                                "`ragqa train retriever` carries its own fit).")

    @model_validator(mode="after")
    def _cross_encoder_named(self) -> RerankSettings:
        if self.method == "cross-encoder" and not self.cross_encoder_path:
            raise ValueError('method = "cross-encoder" needs cross_encoder_path (a CrossEncoder folder)')
        return self


class ContextSettings(Section):
    """How retrieved chunks are written into the prompt (rag/context.py)."""

    context_tokens: int = Field(
        0, ge=0, description="Token budget of the evidence; 0: 300 with llama.cpp (about 5 s of prompt on "
        "2 cores), 3000 with a server."
    )
    tables: Literal["rows", "markdown"] = Field(
        "rows", description="Table rows as `column: value` pairs, or as Markdown rows."
    )
    rank_weight: float = Field(
        0.5, ge=0, description="How much a chunk's rank adds to its sentences' relevance."
    )
    widen_steps: int = Field(
        0, ge=0, le=4, description="Most times the evidence is widened for one question (each step keeps "
        "widen_factor times the chunks and budget) when it lacks what is asked, the model finds no "
        "answer in it, or nothing it wrote is supported; 0: never."
    )
    widen_factor: float = Field(3.0, gt=1, le=10, description="How much each widening step multiplies by.")
    widen_time_s: float = Field(
        12.0, gt=0, description="No widening step, nor the other-language round, starts after this long."
    )

    def budget(self, backend: str) -> int:
        return self.context_tokens or (300 if backend == "llamacpp" else 3000)


class AnswerSettings(Section):
    """The answer prompt, its refusal and language, and the question's rewriting."""

    mode: Literal["compose", "generate"] = Field(
        "generate", description="generate: the model writes the answer (prompt_file); compose: it picks "
        "the evidence units that answer and the answer quotes them (rag/compose.py; docs/BENCHMARKS.md)."
    )
    prompt_file: Annotated[Path, ConfigFile()] = Field(
        Path("prompts/answer.txt"), description="The generation prompt."
    )
    compose_prompt_file: Annotated[Path, ConfigFile()] = Field(
        Path("prompts/compose.txt"), description="The prompt of mode = compose."
    )
    refusal: str = Field("I cannot answer this from the documents.", description="The refusal, in English.")
    refusals: dict[str, str] = Field(
        {"Korean": "문서에서 이 질문의 답을 찾을 수 없습니다."},
        description="The refusal in other answer languages (as `language` names them); `refusal` for "
        "the rest.",
    )
    language: str = Field(
        "auto", description="Language of the answers, e.g. English; auto: the question's (Korean or English)."
    )
    condense_prompt_file: Annotated[Path, ConfigFile()] = Field(
        Path("prompts/condense.txt"), description="Rewrites a follow-up into a question that stands alone."
    )
    history_turns: int = Field(
        3, ge=0, description="Earlier turns of a chat (`ragqa chat`, the UI) the rewriting sees; 0: none."
    )
    translate_questions: bool = Field(
        True, description="Translate a question into the corpus's language (Korean/English) before retrieval "
        "when they differ; the answer keeps the asker's language."
    )
    translate_prompt_file: Annotated[Path, ConfigFile()] = Field(
        Path("prompts/translate.txt"), description="Translates a question."
    )
    quote_paraphrases: bool = Field(
        True, description="A draft no chunk supports in its words is answered by quoting the one evidence "
        "unit that states all it claims and is about what was asked (rag/quotes.py); false: refused."
    )
    quote_min_shared: int = Field(
        2, ge=1, description="Words of the question the quoted unit (with its heading) must share."
    )


class SupportSettings(Section):
    """The reference matcher's support scorer: how well a chunk supports a segment of the answer."""

    method: Literal["learned", "llm"] = Field(
        "learned", description="learned: the support model (e5 cosines, wording, numbers; any language "
        "pair); llm: the [llm] server (backend = server) answers yes/no."
    )
    model_file: Annotated[Path, ConfigFile()] = Field(
        Path("rag/support.json"), description="Weights of the learned support model."
    )
    verifier_prompt_file: Annotated[Path, ConfigFile()] = Field(
        Path("prompts/verify.txt"), description="Prompt of the LLM verifier."
    )
    verifier_concurrency: int = Field(8, ge=1, description="Verifier requests in flight (method = llm).")
    threshold: float = Field(
        0.5, ge=0, le=1, description="Calibrated support under which a segment is marked unsupported."
    )


class ReferenceSettings(Section):
    max_span: int = Field(3, ge=1, description="Most sentences one segment may join.")
    margin: float = Field(0.05, ge=0, le=1, description="Other chunks within this of the best are cited too.")
    context_bonus: float = Field(
        0.1, ge=0, le=1, description="How far joining may raise a sentence's support above its own score."
    )
