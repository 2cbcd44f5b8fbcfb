"""Model factory: the LLM and the embedding model named by the settings, loaded once."""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Callable, Sequence
from contextlib import closing
from functools import lru_cache
from pathlib import Path
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, CompletionResponse, CompletionResponseGen
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.llms import LLM
from llama_index.llms.llama_cpp import LlamaCPP

from rag.settings import LLMSettings, Settings


class ModelNotPreparedError(RuntimeError):
    """A model file is missing: `ragqa models` has not been run for this models folder."""


def _require(path: Path, what: str) -> Path:
    if not path.exists():
        raise ModelNotPreparedError(f"{what} not found at {path}: run `ragqa models` first")
    return path


def chatml_messages_to_prompt(messages: Sequence[ChatMessage], system_prompt: str | None = None) -> str:
    """Qwen's ChatML. llama-index's LlamaCPP wrapper ignores the GGUF's own chat template. That
    template adds Qwen's default system message to a conversation without one; it is left out
    here (measured: no better on the sample QA, worse across languages, docs/BENCHMARKS.md)."""
    parts = []
    if system_prompt:
        parts.append(f"<|im_start|>system\n{system_prompt}<|im_end|>\n")
    for message in messages:
        parts.append(f"<|im_start|>{message.role.value}\n{message.content}<|im_end|>\n")
    parts.append("<|im_start|>assistant\n")
    return "".join(parts)


def chatml_completion_to_prompt(completion: str, system_prompt: str | None = None) -> str:
    return chatml_messages_to_prompt([ChatMessage(role="user", content=completion)], system_prompt)


def build_llm(settings: Settings, cfg: LLMSettings | None = None) -> LLM:
    """The generation backend named by `llm.backend` (or by `cfg`, e.g. the judge's)."""
    cfg = cfg or settings.llm
    if cfg.backend == "server":
        # vLLM's OpenAI-compatible server; llama.cpp's server speaks the same protocol.
        from llama_index.llms.openai_like import OpenAILike

        return OpenAILike(
            model=cfg.server.model,
            api_base=cfg.server.api_base,
            api_key=cfg.server.api_key,
            is_chat_model=True,
            context_window=cfg.n_ctx,
            max_tokens=cfg.max_new_tokens,
            temperature=cfg.temperature,
            timeout=cfg.server.timeout_s,
            max_retries=cfg.server.max_retries,
        )
    # A judge section may name its own GGUF; empty means the prepared one.
    gguf = Path(cfg.model_path) if cfg.model_path else settings.gguf_path
    return _llamacpp(str(_require(gguf, "the Qwen GGUF")), cfg.n_ctx, cfg.n_threads,
                     cfg.max_new_tokens, cfg.temperature)


REWRITE_CTX, REWRITE_TOKENS = 2048, 128  # three turns of history fit; a rewritten question is one line


def build_rewriting_llm(settings: Settings) -> LLM:
    """The LLM that rewrites questions (follow-ups, translations). With llama.cpp, a second
    context on the same memory-mapped weights: the answer context keeps its evaluated prompt
    prefix (the instructions and examples) instead of evaluating it again after every rewrite."""
    cfg = settings.llm
    if cfg.backend != "llamacpp":
        return build_llm(settings)
    gguf = str(_require(settings.gguf_path, "the Qwen GGUF"))
    return _llamacpp(gguf, REWRITE_CTX, cfg.n_threads, REWRITE_TOKENS, cfg.temperature)


class SerialLlamaCPP(LlamaCPP):
    """LlamaCPP that decodes one request at a time. One llama.cpp context is not thread-safe
    (two decodes at once crash the process), and every caller shares the one instance per model:
    the UI's answer threads, evaluation's judge threads, header extraction. A stream holds the
    lock while it is read and releases it when it is closed, so an abandoned answer that stops
    reading frees the model for the next one."""

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        with self._lock:
            return super().complete(prompt, formatted=formatted, **kwargs)

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        def serial() -> CompletionResponseGen:
            with self._lock:  # taken before the call: one stream at a time
                with closing(LlamaCPP.stream_complete(self, prompt, formatted=formatted, **kwargs)) as stream:
                    yield from stream

        return serial()

    def count_tokens(self, text: str) -> int:
        return len(self._model.tokenize(text.encode("utf-8"), add_bos=False, special=True))


def token_counter(llm: LLM) -> Callable[[str], int]:
    """Tokens of a text for this LLM: llama.cpp's own tokenizer, else (a server's model) a
    bound from UTF-8 bytes that holds for English and Korean (about 2 or more bytes a token)."""
    if isinstance(llm, SerialLlamaCPP):
        return llm.count_tokens
    return lambda text: len(text.encode("utf-8")) // 2 + 1


@lru_cache(maxsize=3)
def _llamacpp(path: str, n_ctx: int, n_threads: int, max_new_tokens: int, temperature: float) -> LLM:
    """One llama.cpp instance per model and shape: loading it costs seconds and 1+ GB."""
    llm = SerialLlamaCPP(
        model_path=path,
        temperature=temperature,
        max_new_tokens=max_new_tokens,
        context_window=n_ctx,
        model_kwargs={"n_threads": n_threads or os.cpu_count(), "n_gpu_layers": 0},
        messages_to_prompt=chatml_messages_to_prompt,
        completion_to_prompt=chatml_completion_to_prompt,
        verbose=False,
    )
    # Free the model before interpreter teardown: llama-cpp-python's __del__ fails once its
    # C bindings are gone and prints a traceback at every exit.
    atexit.register(llm._model.close)
    return llm


def build_embedding(settings: Settings) -> BaseEmbedding:
    """The embedder `[embedding] backend` names: the same vectors from each, within the int8
    export's rounding (docs/BENCHMARKS.md, issue 15)."""
    cfg = settings.embedding
    if cfg.backend == "server":
        from rag.embeddings import ServerEmbedding

        return ServerEmbedding(
            model_name=cfg.server.model,
            api_base=cfg.server.api_base,
            api_key=cfg.server.api_key,
            timeout=cfg.server.timeout_s,
            max_retries=cfg.server.max_retries,
            embed_batch_size=cfg.batch_size,
            query_prefix=cfg.query_prefix,
            passage_prefix=cfg.passage_prefix,
        )
    if cfg.backend == "onnx":
        path = _require(settings.embedding_onnx_path, "the ONNX export of the embedding model")
        return _onnx_embedding(str(path), cfg.query_prefix, cfg.passage_prefix, cfg.batch_size)
    return _embedding(
        str(_require(settings.embedding_path, "the embedding model")),
        cfg.query_prefix,
        cfg.passage_prefix,
        cfg.batch_size,
    )


@lru_cache(maxsize=2)
def _embedding(path: str, query_prefix: str, passage_prefix: str, batch_size: int) -> BaseEmbedding:
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    return HuggingFaceEmbedding(
        model_name=path,
        query_instruction=query_prefix,
        text_instruction=passage_prefix,
        embed_batch_size=batch_size,
        normalize=True,
        device="cpu",
    )


@lru_cache(maxsize=2)
def _onnx_embedding(path: str, query_prefix: str, passage_prefix: str, batch_size: int) -> BaseEmbedding:
    from rag.embeddings import OnnxEmbedding

    return OnnxEmbedding(
        folder=path, query_prefix=query_prefix, passage_prefix=passage_prefix, embed_batch_size=batch_size
    )
