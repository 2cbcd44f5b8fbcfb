"""The embedding backends besides sentence-transformers (`[embedding] backend`).

- `OnnxEmbedding`: the int8 ONNX export `ragqa models` writes, run by onnxruntime.
- `ServerEmbedding`: an OpenAI-compatible `/v1/embeddings` server (vLLM, TEI, Infinity,
  `ragqa embed-server`). Servers embed what they are sent, so the e5 prefixes are added here.

Both also offer `_embed(texts, prompt_name)`, the batched call `rag.scoring.BiEncoderScorer`
uses on HuggingFaceEmbedding for many queries at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import openai
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.embeddings import BaseEmbedding
from llama_index.embeddings.openai_like import OpenAILikeEmbedding

from rag.prepare_e5 import E5_MAX_TOKENS
from rag.prepare_onnx import ONNX_FILE


class OnnxEmbedding(BaseEmbedding):
    """A sentence-embedding ONNX graph (ids and mask in, normalised vector out) and its tokenizer."""

    folder: str = Field(description="Folder holding the ONNX graph and tokenizer.json.")
    file_name: str = ONNX_FILE
    query_prefix: str = "query: "
    passage_prefix: str = "passage: "
    max_tokens: int = E5_MAX_TOKENS

    _session: Any = PrivateAttr()
    _tokenizer: Any = PrivateAttr()

    def __init__(self, **data: Any):
        super().__init__(**data)
        import onnxruntime
        from tokenizers import Tokenizer

        folder = Path(self.folder)
        options = onnxruntime.SessionOptions()
        # Threads that spin between passes hold cores another process (or the LLM) needs.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(
            str(folder / self.file_name), options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(self.max_tokens)
        self._tokenizer.no_padding()

    @classmethod
    def class_name(cls) -> str:
        return "OnnxEmbedding"

    def encode(self, texts: list[str]) -> np.ndarray:
        """Normalised vectors of `texts` (prefixes already applied), one forward pass each: the
        int8 graph quantises activations with one scale per pass, so in a batch a text's vector
        would depend on its neighbours (cosine 0.997 measured); singly it is as fast on CPU (no
        padding) and a chunk gets the same vector at ingestion, in the matcher and from a server."""
        vectors = np.empty((len(texts), self._session.get_outputs()[0].shape[1]), np.float32)
        for row, encoding in enumerate(self._tokenizer.encode_batch(texts)):
            ids = np.asarray([encoding.ids], np.int64)
            inputs = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            vectors[row] = self._session.run(None, inputs)[0][0]
        return vectors

    def _embed(self, texts: list[str], prompt_name: str | None = None) -> list[list[float]]:
        prefix = self.query_prefix if prompt_name == "query" else self.passage_prefix
        return self.encode([prefix + t for t in texts]).tolist()

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embed([query], "query")[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._embed([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._embed(texts)


class EmbeddingServerError(RuntimeError):
    """The embedding server did not answer; the message names its URL."""


def _refused(error: BaseException | None) -> bool:
    """Whether the client's error comes from a refused connection (nothing listens there)."""
    while error is not None:
        if isinstance(error, ConnectionRefusedError):
            return True
        error = error.__cause__ or error.__context__
    return False


class ServerEmbedding(OpenAILikeEmbedding):
    """OpenAILikeEmbedding that adds the query and passage prefixes, retries only in
    LlamaIndex's retry loop (`max_retries` attempts in all, not that times the client's own
    retries) and names the server when it cannot be reached."""

    query_prefix: str = "query: "
    passage_prefix: str = "passage: "

    @classmethod
    def class_name(cls) -> str:
        return "ServerEmbedding"

    def _get_credential_kwargs(self, is_async: bool = False) -> dict[str, Any]:
        return {**super()._get_credential_kwargs(is_async), "max_retries": 0}

    @contextmanager
    def _reached(self) -> Iterator[None]:
        try:
            yield
        except (openai.APIConnectionError, openai.APITimeoutError) as error:
            if _refused(error):
                raise EmbeddingServerError(
                    f"the embedding server refused the connection at {self.api_base}: is it running? "
                    "(check [embedding.server] api_base)"
                ) from error
            raise EmbeddingServerError(
                f"the embedding server at {self.api_base} did not answer within {self.timeout:g} s "
                f"({self.max_retries} attempts): {error}; check [embedding.server] api_base"
            ) from error

    def _embed(self, texts: list[str], prompt_name: str | None = None) -> list[list[float]]:
        prefix = self.query_prefix if prompt_name == "query" else self.passage_prefix
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.embed_batch_size):
            batch = [prefix + t for t in texts[start : start + self.embed_batch_size]]
            with self._reached():
                vectors += super()._get_text_embeddings(batch)
        return vectors

    def _get_query_embedding(self, query: str) -> list[float]:
        with self._reached():
            return super()._get_query_embedding(self.query_prefix + query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        with self._reached():
            return await super()._aget_query_embedding(self.query_prefix + query)

    def _get_text_embedding(self, text: str) -> list[float]:
        with self._reached():
            return super()._get_text_embedding(self.passage_prefix + text)

    async def _aget_text_embedding(self, text: str) -> list[float]:
        with self._reached():
            return await super()._aget_text_embedding(self.passage_prefix + text)

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        with self._reached():
            return super()._get_text_embeddings([self.passage_prefix + t for t in texts])

    async def _aget_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        with self._reached():
            return await super()._aget_text_embeddings([self.passage_prefix + t for t in texts])
