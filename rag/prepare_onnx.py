"""The embedding folder as an int8 ONNX graph for the `onnx` embedding backend: exported with
pooling and normalisation inside (no PyTorch needed to run it), BERT's kernels fused by
onnxruntime, weights quantised to int8."""

from __future__ import annotations

import shutil
from pathlib import Path

from tqdm.auto import tqdm

from rag.files import replaced_folder
from rag.model_stamp import inventory, stamp_ok, write_stamp

ONNX_FILE = "model_int8.onnx"
ONNX_OPSET = 17
# Per-channel weight scales: per-tensor ones lost agreement with PyTorch on long passages
# (docs/BENCHMARKS.md, "Embedding backends").
ONNX_QUANTIZATION = {"weights": "QInt8", "per_channel": True, "activations": "dynamic uint8", "fused": "bert"}


def export_onnx(folder: Path, target: Path) -> Path:
    """The sentence-transformers folder as one fp32 ONNX graph, token ids and attention mask in,
    the mean-pooled, normalised embedding out, so running it needs no PyTorch; BERT's attention,
    GELU and layer norms fused into onnxruntime's kernels. optimum's exporter would do this but
    no optimum-onnx release installs beside transformers 5."""
    import torch
    from onnxruntime.transformers.optimizer import optimize_model
    from transformers import AutoModel

    class Pooled(torch.nn.Module):
        def __init__(self, encoder: torch.nn.Module):
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, dim=-1)

    # Eager attention traces to the pattern onnxruntime's fusion recognises (SDPA's does not).
    encoder = AutoModel.from_pretrained(str(folder), attn_implementation="eager").eval()
    example = torch.tensor([[0, 35378, 2], [0, 6, 2]]), torch.ones(2, 3, dtype=torch.long)
    tokens = {0: "batch", 1: "tokens"}
    traced = target.with_name(target.stem + "-traced.onnx")
    # The TorchScript exporter: the dynamo one needs onnxscript, one more package for no gain here.
    torch.onnx.export(
        Pooled(encoder), example, str(traced), dynamo=False, opset_version=ONNX_OPSET,
        input_names=["input_ids", "attention_mask"], output_names=["sentence_embedding"],
        dynamic_axes={"input_ids": tokens, "attention_mask": tokens, "sentence_embedding": {0: "batch"}},
    )
    config = encoder.config
    fused = optimize_model(str(traced), model_type="bert", num_heads=config.num_attention_heads,
                           hidden_size=config.hidden_size, opt_level=1)
    fused.save_model_to_file(str(target))
    traced.unlink()
    return target


def export_e5_onnx(source: Path, target: Path) -> Path:
    """Write `target`: the dynamically quantised int8 ONNX export of the embedding folder
    `source` and its tokenizer; redone when the source folder changes."""
    expected = {"source_files": inventory(source), "quantization": ONNX_QUANTIZATION, "opset": ONNX_OPSET}
    if stamp_ok(target, expected):
        return target

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tqdm(total=2, desc="export e5 to int8 ONNX") as bar, replaced_folder(target) as partial:
        fp32 = export_onnx(source, partial / "model_fp32.onnx")
        bar.update()
        # The fused kernels are onnxruntime's own, unknown to ONNX's shape inference: their
        # outputs are declared float so that the quantiser can follow them.
        quantize_dynamic(fp32, partial / ONNX_FILE, weight_type=QuantType.QInt8, per_channel=True,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        fp32.unlink()
        shutil.copy(source / "tokenizer.json", partial / "tokenizer.json")
        bar.update()
    write_stamp(target, expected)
    return target
