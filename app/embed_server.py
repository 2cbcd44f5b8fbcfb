"""`ragqa embed-server`: the local embedder over the OpenAI `/v1/embeddings` protocol, for
deployments where several machines share one embedding service (`[embedding] backend =
"server"` on the clients). infinity-emb, the ready-made server, does not install beside this
stack (it pins numpy<2 and click<8.2).

The server embeds the texts exactly as sent: the clients add the e5 prefixes, as they do for
vLLM or TEI, so no text is prefixed twice.
"""

from __future__ import annotations

import base64
from typing import Literal

import numpy as np
from fastapi import FastAPI, HTTPException
from llama_index.core.embeddings import BaseEmbedding
from pydantic import BaseModel


class EmbeddingRequest(BaseModel):
    model: str
    input: str | list[str]
    # The openai client asks for base64 unless told otherwise.
    encoding_format: Literal["float", "base64"] = "float"


def build_app(embedding: BaseEmbedding, model_name: str, count_tokens) -> FastAPI:
    """The app serving `embedding` (built with empty prefixes) under `model_name`."""
    app = FastAPI(title="ragqa embedding server")

    @app.get("/v1/models")
    def models() -> dict:
        return {"object": "list", "data": [{"id": model_name, "object": "model", "owned_by": "ragqa"}]}

    @app.post("/v1/embeddings")
    def embeddings(request: EmbeddingRequest) -> dict:
        if request.model != model_name:
            raise HTTPException(404, f"model {request.model!r} is not served here; this server serves {model_name!r}")
        texts = [request.input] if isinstance(request.input, str) else request.input
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
