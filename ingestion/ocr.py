"""OCR: text in pictures and scanned pages, offline, with Tesseract (Debian's `tesseract-ocr`,
`tesseract-ocr-kor`, `tesseract-ocr-eng`), run as a command that reads a PNG and writes hOCR.

Tesseract was chosen over rapidocr-onnxruntime, the only ONNX OCR whose PyPI wheel carries its
models: that wheel has no Korean recogniser, and on English pages Tesseract was as accurate
(docs/BENCHMARKS.md, "OCR"). A page is rendered at `dpi` (300: Tesseract's models are trained on
text of about that resolution); a picture smaller than that is enlarged first, and a page scanned
sideways or upside down is turned upright (Tesseract's orientation detection).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from xml.etree import ElementTree

from rag.text import HANGUL

INSTALL_HINT = "install it with: apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-kor"
MIN_WORD_CONFIDENCE = 30  # Tesseract's 0-100 word confidence; lower is mostly specks read as letters
MIN_TEXT_HEIGHT = 1000  # pixels; a smaller picture (a slide's 72-dpi image) is enlarged towards this,
MAX_UPSCALE = 4  # by at most this: 72 dpi to about 300 (a thin banner is not made 50 times larger)
# Page segmentation "single column of text of variable sizes": the automatic mode (3) drops whole
# lines of Hangul as noise (tesseract-ocr/tesseract#3423); see docs/BENCHMARKS.md, "OCR".
PAGE_SEGMENTATION = 4
MAX_SKEW = 3  # degrees: a page fed askew through a scanner is turned by a degree or two
# Tesseract's orientation confidence: about 3.5 on a page of 11-point text, upright or turned,
# under 1 where a picture holds too little text to tell.
MIN_ORIENTATION_CONFIDENCE = 1.5
UPRIGHT_CONFIDENCE = 85  # mean word confidence under which a page's orientation is checked
SYLLABLE_GAP = 0.3  # of the line's median word height: a narrower gap beside Hangul is inside a word
XHTML = "{http://www.w3.org/1999/xhtml}"  # Tesseract's hOCR namespace
_TITLE_FIELD = {
    "bbox": re.compile(r"bbox (\d+) (\d+) (\d+) (\d+)"),
    "x_size": re.compile(r"x_size ([\d.]+)"),
    "x_wconf": re.compile(r"x_wconf ([\d.]+)"),
}


class OcrUnavailable(RuntimeError):
    """Tesseract or one of the configured languages is not installed."""


@dataclass
class OcrLine:
    text: str
    top: int  # pixels, the line's box
    bottom: int
    size: float  # Tesseract's estimate of the type size (x_size), pixels: alike on every line of one font
    confidence: float  # mean word confidence, 0-100


@dataclass
class OcrParagraph:
    lines: list[OcrLine]

    @property
    def text(self) -> str:
        return " ".join(line.text for line in self.lines)


@cache
def installed_languages() -> frozenset[str]:
    if shutil.which("tesseract") is None:
        return frozenset()
    listed = subprocess.run(["tesseract", "--list-langs"], capture_output=True, text=True, check=False)
    listing = listed.stdout
    return frozenset(line.strip() for line in listing.splitlines()[1:] if line.strip())


def check_languages(languages: Sequence[str]) -> None:
    """Raise OcrUnavailable, saying what to install, unless Tesseract reads all `languages`."""
    have = installed_languages()
    if not have:
        raise OcrUnavailable(f"OCR needs Tesseract, which is not installed: {INSTALL_HINT}")
    missing = [lang for lang in languages if lang not in have]
    if missing:
        raise OcrUnavailable(
            f"Tesseract has no {', '.join(missing)} language data "
            f"(installed: {', '.join(sorted(have))}): {INSTALL_HINT}"
        )


def read_image(image, languages: Sequence[str], psm: int = PAGE_SEGMENTATION) -> list[OcrParagraph]:
    """The paragraphs of text in a PIL image, in Tesseract's reading order."""
    check_languages(languages)
    image = _on_white(image).convert("L")
    if image.height < MIN_TEXT_HEIGHT:
        scale = min(MAX_UPSCALE, MIN_TEXT_HEIGHT / image.height)
        image = image.resize((round(image.width * scale), round(image.height * scale)))
    paragraphs = _read(_straightened(image), languages, psm)
    if _confident(paragraphs):
        return paragraphs
    # Little read, or read unsure: the page may be turned (a turned page reads as nothing or as
    # letters of 70-80% confidence, an upright one at 95%), which is asked only then (it costs a
    # Tesseract run).
    turned = _upright(image)
    return paragraphs if turned is image else _read(_straightened(turned), languages, psm)


def _confident(paragraphs: list[OcrParagraph]) -> bool:
    lines = [line for paragraph in paragraphs for line in paragraph.lines]
    chars = sum(len(line.text) for line in lines)
    weighted = sum(line.confidence * len(line.text) for line in lines)
    return bool(chars) and weighted / chars >= UPRIGHT_CONFIDENCE


def _read(image, languages: Sequence[str], psm: int) -> list[OcrParagraph]:
    png = io.BytesIO()
    image.save(png, "PNG")
    # One thread: Tesseract's OpenMP threads spin against the embedder and the other pages' work
    # (a page took 3x longer with them on 2 busy cores). hOCR, not TSV: it has each line's type size.
    done = subprocess.run(
        ["tesseract", "stdin", "stdout", "--psm", str(psm), "-l", "+".join(languages), "hocr"],
        input=png.getvalue(), capture_output=True, env={**os.environ, "OMP_THREAD_LIMIT": "1"}, check=False,
    )
    if done.returncode != 0:
        raise OcrUnavailable(f"tesseract failed: {done.stderr.decode(errors='replace').strip()[-300:]}")
    paragraphs = []
    for par in ElementTree.fromstring(done.stdout).iter(f"{XHTML}p"):
        lines = [line for span in par if (line := _line(span)) is not None]
        if lines:
            paragraphs.append(OcrParagraph(lines))
    return paragraphs


def _line(span) -> OcrLine | None:
    """An hOCR line: its confident words, joined with a space only where the gap is one.
    Tesseract's Korean model splits Hangul words into syllables ("국 교 는"); the gap between a
    word's syllables is a fraction of the gap between words (0-12 against 16-32 pixels on
    11-point text at 300 dpi, words about 43 pixels high)."""
    _, top, _, bottom = _box(span)
    words = []
    for word in span.findall(f"{XHTML}span"):
        text = "".join(word.itertext()).strip()
        confidence = float(_TITLE_FIELD["x_wconf"].search(word.get("title", "")).group(1))
        if text and confidence >= MIN_WORD_CONFIDENCE:
            left, word_top, right, word_bottom = _box(word)
            words.append((left, right, text, confidence, word_bottom - word_top))
    if not words:
        return None
    height = sorted(w[4] for w in words)[len(words) // 2]
    text = words[0][2]
    for (_, right, before, *_), (left, _, token, *_) in zip(words, words[1:]):
        hangul = bool(HANGUL.match(before[-1]) or HANGUL.match(token[0]))
        joined = left - right < SYLLABLE_GAP * height and hangul
        text += token if joined else " " + token
    if not any(ch.isalnum() for ch in text):
        return None
    size = float(_TITLE_FIELD["x_size"].search(span.get("title", "")).group(1))
    return OcrLine(text, top, bottom, size, sum(w[3] for w in words) / len(words))


def _box(element) -> tuple[int, int, int, int]:
    return tuple(map(int, _TITLE_FIELD["bbox"].search(element.get("title", "")).groups()))


def _upright(image):
    """The image turned by the quarter turns Tesseract's orientation detection (psm 0, the `osd`
    data every tesseract-ocr package brings) finds: a page scanned sideways or upside down reads
    as nothing to the single-column segmentation. Without `osd`, or text to tell by, unchanged."""
    if "osd" not in installed_languages():
        return image
    png = io.BytesIO()
    image.save(png, "PNG")
    done = subprocess.run(
        ["tesseract", "stdin", "stdout", "--psm", "0"],
        input=png.getvalue(), capture_output=True, env={**os.environ, "OMP_THREAD_LIMIT": "1"}, check=False,
    )
    # "Rotate: 90", "Orientation confidence: 3.47"; nothing on a failure
    report = done.stdout.decode(errors="replace")
    rotate = re.search(r"Rotate: (\d+)", report)
    confidence = re.search(r"Orientation confidence: ([\d.]+)", report)
    if not rotate or not confidence or int(rotate.group(1)) % 360 == 0:
        return image
    if float(confidence.group(1)) < MIN_ORIENTATION_CONFIDENCE:
        return image
    # "Rotate" is clockwise, PIL's angle counter-clockwise
    return image.rotate(-int(rotate.group(1)), expand=True)


def _straightened(image):
    """The image turned so its lines are level: the angle within MAX_SKEW at which rows of ink
    are most uneven (lines and the gaps between them), found on an 800-pixel-wide copy. The
    single-column segmentation mixes up sloping lines (docs/BENCHMARKS.md, "OCR")."""
    import numpy as np
    from PIL import Image

    if image.width < 200:
        return image
    small = image.resize((800, max(1, round(image.height * 800 / image.width))))
    ink = Image.fromarray(((np.asarray(small) < 128) * 255).astype(np.uint8))

    def unevenness(angle: float) -> float:
        return float(np.var(np.asarray(ink.rotate(angle), dtype=np.int32).sum(axis=1)))

    angle = max(np.arange(-MAX_SKEW, MAX_SKEW + 0.01, 0.1), key=unevenness)
    return image.rotate(angle, resample=Image.BICUBIC, fillcolor=255) if abs(angle) > 0.05 else image


def _on_white(image):
    """A transparent picture flattened onto white: Tesseract reads transparent pixels as black,
    so dark text on a transparent background (a common PNG) would vanish."""
    if "A" not in image.getbands() and "transparency" not in image.info:
        return image
    from PIL import Image

    flat = Image.new("RGBA", image.size, "white")
    flat.alpha_composite(image.convert("RGBA"))
    return flat.convert("RGB")


def render_page(page, dpi: int):
    """A pypdfium2 page as a PIL image at `dpi`."""
    return page.render(scale=dpi / 72, grayscale=True).to_pil()
