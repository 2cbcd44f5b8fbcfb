"""`ragqa embed-server`: the local embedder over the OpenAI `/v1/embeddings` protocol, for
deployments where several machines share one embedding service (`[embedding] backend =
"server"` on the clients). infinity-emb, the ready-made server, does not install beside this
stack (it pins numpy<2 and click<8.2).

The server embeds the texts exactly as sent: the clients add the e5 prefixes, as they do for
vLLM or TEI, so no text is prefixed twice. Like the local embedders it reads an input's first
512 tokens (the model's window), and `usage` counts the tokens it read. A request it will not
serve gets OpenAI's error body, `{"error": {"message", "type", "param", "code"}}`: too many
inputs (413), an input too long, `dimensions` other than the model's, a malformed body (400),
another model (404).
"""

from __future__ import annotations

import base64
from typing import Literal

import numpy as np
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from llama_index.core.embeddings import BaseEmbedding
from pydantic import BaseModel

MAX_INPUTS = 256  # per request: 10,000 took 112 s on 2 cores; clients send [embedding] batch_size
MAX_INPUT_CHARS = 32_768  # 512 tokens of any text fit in far fewer; a longer input is not a chunk


class EmbeddingRequest(BaseModel):
    model: str
    input: str | list[str]
    # The openai client asks for base64 unless told otherwise.
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: int | None = None


class Refused(Exception):
    """A request the server will not serve, answered as OpenAI answers one."""

    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code

    def response(self) -> JSONResponse:
        error = {"message": self.message, "type": "invalid_request_error", "param": self.param,
                 "code": self.code}
        return JSONResponse({"error": error}, status_code=self.status)


def build_app(embedding: BaseEmbedding, model_name: str, count_tokens) -> FastAPI:
    """The app serving `embedding` (built with empty prefixes) under `model_name`;
    `count_tokens(text)` is how many tokens of `text` the embedder reads."""
    app = FastAPI(title="ragqa embedding server")
    size = len(embedding.get_text_embedding("dimensions"))

    @app.exception_handler(Refused)
    def refused(request: Request, error: Refused) -> JSONResponse:
        return error.response()

    @app.exception_handler(RequestValidationError)
    def malformed(request: Request, error: RequestValidationError) -> JSONResponse:
        first = error.errors()[0]
        field = next((str(part) for part in first["loc"][1:2]), None)  # after "body"; a union adds its member
        return Refused(400, f"{field or 'body'}: {first['msg']}", field).response()

    @app.get("/v1/models")
    def models() -> dict:
        return {"object": "list", "data": [{"id": model_name, "object": "model", "owned_by": "ragqa"}]}

    @app.post("/v1/embeddings")
    def embeddings(request: EmbeddingRequest) -> dict:
        if request.model != model_name:
            raise Refused(404, f"model {request.model!r} is not served here; "
                          f"this server serves {model_name!r}", "model", "model_not_found")
        texts = [request.input] if isinstance(request.input, str) else request.input
        if not texts:
            raise Refused(400, "input is empty: give a text or a list of texts", "input")
        if len(texts) > MAX_INPUTS:
            raise Refused(413, f"{len(texts)} inputs in one request; at most {MAX_INPUTS}: "
                          "send them in batches", "input")
        long = next((i for i, text in enumerate(texts) if len(text) > MAX_INPUT_CHARS), None)
        if long is not None:
            raise Refused(400, f"input {long} has {len(texts[long]):,} characters; "
                          f"at most {MAX_INPUT_CHARS:,} (the model reads the first 512 tokens)", "input")
        if request.dimensions not in (None, size):
            raise Refused(400, f"this model's vectors have {size} dimensions and cannot be shortened to "
                          f"{request.dimensions}: leave dimensions out", "dimensions")
        vectors = np.asarray(embedding.get_text_embedding_batch(texts), dtype=np.float32)
        tokens = sum(count_tokens(t) for t in texts)
        return {
            "object": "list",
            "data": [
                {"object": "embedding", "index": i,
                 "embedding": base64.b64encode(v.tobytes()).decode() if request.encoding_format == "base64"
                 else v.tolist()}
                for i, v in enumerate(vectors)
            ],
            "model": model_name,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    return app
