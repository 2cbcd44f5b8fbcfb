"""OCR on rendered-then-scanned pages: character accuracy and speed per engine and language,
retrieval on a scanned copy of debian-faq.en.pdf, and what OCR costs text-layer PDFs.

    .venv/bin/python benchmarks/ocr.py [--pages 12] [--engines tesseract,rapidocr] [--retrieval]
        [--seed 0] [--out FILE]    (engines: tesseract, tesseract:PSM, rapidocr)

Pages: every k-th page of devbench's debian-faq.en.pdf (English), and the Korean constitution
(devbench's konlpy_kolaw_constitution.txt) typeset with fpdf2 in NanumMyeongjo (Debian's
fonts-nanum). Each page is rasterised with pypdfium2 at 300 dpi, turned by a random angle of up
to 1.5 degrees and given Gaussian noise and specks: a page through an office scanner. Every page
is read with the configured `ingest.ocr_languages` (kor+eng), as ingestion reads it. The truth is
the page's text layer (pypdfium2); character accuracy is 1 - Levenshtein distance / truth length
after whitespace is collapsed, and again with whitespace removed (Korean word spacing apart).
OCR speed is pages per second of OCR alone, one page at a time (Tesseract on one core); the
scanned-copy conversion below is ingestion's rate, one Tesseract per core.

rapidocr is rapidocr-onnxruntime 1.4.4, the only ONNX OCR whose wheel carries its models; it is
not a dependency (`pip install --no-deps rapidocr-onnxruntime==1.4.4 pyclipper shapely` to
compare) and has no Korean recogniser.

--retrieval writes the scanned pages of the whole English PDF as an image-only PDF of the same
name, ingests it (OCR, `ingest.ocr = "auto"`) into its own bench store and compares retrieval by
stage with the text-layer original on devbench's questions. It also times converting the
original with OCR on ("auto", nothing to OCR) and off.

--headings PDF... checks the headings found on scans on PDFs the rules were not tuned on (their
outline is the truth), e.g. the Korean PDFs of Debian's texlive-lang-korean.
"""

from __future__ import annotations

import os
import random
import time
import unicodedata
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
from common import arguments, write_json
from corpora import DEVBENCH, STORES, Corpus, answerable, corpora, indexed
from PIL import Image, ImageFilter
from rapidfuzz.distance import Levenshtein

from evaluation.retrieval import evaluate_stages
from ingestion.convert import convert
from ingestion.ocr import PAGE_SEGMENTATION, read_image
from rag.settings import REPO_ROOT, load_settings

ENGLISH_PDF = DEVBENCH / "docs/debian-faq.en.pdf"
CONSTITUTION = DEVBENCH / "docs/konlpy_kolaw_constitution.txt"
KOREAN_FONT = Path("/usr/share/fonts/truetype/nanum/NanumMyeongjo.ttf")
WORK = REPO_ROOT / "storage/bench-ocr"
DPI = 300


def korean_pdf(path: Path) -> Path:
    """The constitution typeset on A4 pages in 11-point NanumMyeongjo."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_margins(25, 25)
    pdf.add_font("NanumMyeongjo", fname=str(KOREAN_FONT))
    pdf.set_font("NanumMyeongjo", size=11)
    pdf.add_page()
    for paragraph in CONSTITUTION.read_text(encoding="utf-8").splitlines():
        if paragraph.strip():
            pdf.multi_cell(0, 6, paragraph.strip(), new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)
    pdf.output(str(path))
    return path


def scanned(image: Image.Image, rng: random.Random) -> Image.Image:
    """The page as a scanner gives it back: slightly turned, noisy, with specks."""
    image = image.convert("L").rotate(rng.uniform(-1.5, 1.5), resample=Image.BICUBIC, expand=True,
                                      fillcolor=255)
    image = image.filter(ImageFilter.GaussianBlur(0.6))
    pixels = np.asarray(image, dtype=np.float32)
    noise = np.random.default_rng(rng.randrange(2**32)).normal(0, 18, pixels.shape)
    specks = np.random.default_rng(rng.randrange(2**32)).random(pixels.shape) < 0.001
    pixels = np.clip(pixels + noise, 0, 255)
    pixels[specks] = 0
    return Image.fromarray(pixels.astype(np.uint8))


def pages(pdf_path: Path, numbers: list[int], rng: random.Random) -> list[tuple[int, str, Image.Image]]:
    """(page number, text-layer truth, scanned image) for each page number."""
    pdf = pdfium.PdfDocument(str(pdf_path))
    result = []
    for number in numbers:
        page = pdf[number - 1]
        textpage = page.get_textpage()
        truth = textpage.get_text_range()
        image = page.render(scale=DPI / 72, grayscale=True).to_pil()
        result.append((number, truth, scanned(image, rng)))
        textpage.close()
        page.close()
    pdf.close()
    return result


def normal(text: str, spaces: bool) -> str:
    text = unicodedata.normalize("NFKC", text)
    return " ".join(text.split()) if spaces else "".join(text.split())


def accuracy(truth: str, read: str, spaces: bool) -> float:
    truth, read = normal(truth, spaces), normal(read, spaces)
    return max(0.0, 1 - Levenshtein.distance(truth, read) / max(1, len(truth)))


def engine(name: str, languages: list[str]):
    """A function image -> text for the named engine: tesseract (its page segmentation mode may
    follow, "tesseract:3") or rapidocr."""
    if name.startswith("tesseract"):
        psm = int(name.partition(":")[2] or PAGE_SEGMENTATION)
        return lambda image: "\n".join(p.text for p in read_image(image, languages, psm))
    from rapidocr_onnxruntime import RapidOCR

    reader = RapidOCR()

    def rapid(image: Image.Image) -> str:
        result, _ = reader(np.asarray(image.convert("RGB")))
        return "\n".join(text for _box, text, _score in result or [])

    return rapid


def measure(name: str, languages: list[str], sample: list[tuple[int, str, Image.Image]]) -> dict:
    read = engine(name, languages)
    scores, spaceless, seconds = [], [], 0.0
    for _number, truth, image in sample:
        clock = time.perf_counter()
        text = read(image)
        seconds += time.perf_counter() - clock
        scores.append(accuracy(truth, text, True))
        spaceless.append(accuracy(truth, text, False))
    return {
        "pages": len(sample),
        "accuracy": round(float(np.mean(scores)), 4),
        "accuracy_min": round(min(scores), 4),
        "accuracy_no_spaces": round(float(np.mean(spaceless)), 4),
        "pages_per_s": round(len(sample) / seconds, 3),
    }


def scanned_copy(rng: random.Random) -> Path:
    """An image-only copy of debian-faq.en.pdf, every page scanned, under the same file name."""
    target = WORK / "scan" / ENGLISH_PDF.name
    if not target.is_file():
        count = len(pdfium.PdfDocument(str(ENGLISH_PDF)))
        images = [image for _, _, image in pages(ENGLISH_PDF, list(range(1, count + 1)), rng)]
        target.parent.mkdir(parents=True, exist_ok=True)
        images[0].save(target, save_all=True, append_images=images[1:], resolution=DPI)
    return target


def retrieval(rng: random.Random) -> dict:
    # Noisy 300-dpi pages compress badly: the scanned copy is 150 MB, over the default limit.
    os.environ["RAGQA_INGEST__MAX_FILE_MB"] = "1000"
    original = corpora(["debian_faq_en_pdf"])[0]
    copy = scanned_copy(rng)
    scan = Corpus("debian_faq_en_pdf_scan", copy.parent, (ENGLISH_PDF.name,), original.qa)
    count = len(pdfium.PdfDocument(str(copy)))
    clock = time.perf_counter()
    convert(copy, copy.name, load_settings().ingest)
    seconds = time.perf_counter() - clock
    print(f"converting the scanned copy: {count} pages in {seconds:.1f} s = {count / seconds:.2f} pages/s")
    result: dict = {"scan_convert": {"pages": count, "seconds": round(seconds, 1),
                                     "pages_per_s": round(count / seconds, 3)}}
    qa = answerable(original.qa)
    for corpus in (original, scan):
        clock = time.perf_counter()
        settings = indexed(corpus, STORES)
        built = time.perf_counter() - clock
        stages, _ = evaluate_stages(settings, qa, 20, progress=False)
        result[corpus.name] = {stage: round(row["map@1"], 3) for stage, row in stages.items()}
        result[corpus.name + "_success@5"] = {
            stage: round(row["success@5"], 3) for stage, row in stages.items()}
        print(f"{corpus.name}: MAP@1 by stage {result[corpus.name]} (store ready in {built:.0f} s)")
    return result


def headings(pdf_path: Path, first: int, count: int, rng: random.Random) -> dict:
    """Headings found on a scan, checked on a PDF the heading rules were not tuned on: pages
    first..first+count-1 are scanned into an image-only PDF and converted with OCR. An outline
    heading of those pages is found when a heading block reads like it (whitespace removed, the
    best-aligned part at least 80% alike, not over twice as long); a found heading that reads
    like none of them is counted as spurious."""
    from rapidfuzz import fuzz

    numbers = list(range(first, min(first + count, len(pdfium.PdfDocument(str(pdf_path))) + 1)))
    scan = WORK / f"headings-{pdf_path.stem}.pdf"
    images = [image for _, _, image in pages(pdf_path, numbers, rng)]
    images[0].save(scan, save_all=True, append_images=images[1:], resolution=DPI)
    pdf = pdfium.PdfDocument(str(pdf_path))
    outline = [
        " ".join(mark.get_title().split())
        for mark in pdf.get_toc()
        if mark.get_dest() is not None and (mark.get_dest().get_index() or 0) + 1 in numbers
    ]
    pdf.close()
    blocks = convert(scan, scan.name, load_settings().ingest).blocks
    found = [b.text.lstrip("# ") for b in blocks if b.kind == "heading"]

    def alike(title: str, heading: str) -> bool:
        """The heading reads like the title, its number ("4.2", "제4장") and spacing aside."""
        title, heading = normal(title, False).lower(), normal(heading, False).lower()
        return len(heading) <= 2 * len(title) + 6 and fuzz.partial_ratio(title, heading) >= 80

    hits = sum(any(alike(title, heading) for heading in found) for title in outline)
    spurious = sum(not any(alike(title, heading) for title in outline) for heading in found)
    row = {"pages": len(numbers), "outline": len(outline), "found": hits, "headings": len(found),
           "spurious": spurious}
    print(f"headings on scanned {pdf_path.name} pp. {numbers[0]}-{numbers[-1]}: {hits} of {len(outline)} "
          f"outline headings found; {spurious} of {len(found)} headings match none")
    return row


def text_layer_cost() -> dict:
    """Seconds to convert the text-layer PDF with OCR on (nothing to OCR) and off, best of 3."""
    cfg = load_settings().ingest
    timings = {}
    for mode in ("off", "auto"):
        cfg.ocr = mode
        runs = []
        for _ in range(3):
            clock = time.perf_counter()
            convert(ENGLISH_PDF, ENGLISH_PDF.name, cfg)
            runs.append(time.perf_counter() - clock)
        timings[mode] = round(min(runs), 2)
    print(f"converting debian-faq.en.pdf (text layer): ocr=off {timings['off']} s, "
          f"ocr=auto {timings['auto']} s")
    return timings


def main() -> None:
    parser = arguments("ocr")
    parser.add_argument("--pages", type=int, default=12, help="Pages per language.")
    parser.add_argument(
        "--engines", default="tesseract",
        help="tesseract[:psm] and/or rapidocr (comma-separated), e.g. tesseract:3,tesseract:4",
    )
    parser.add_argument("--retrieval", action="store_true", help="Also the scanned-PDF retrieval comparison.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--headings", type=Path, nargs="*", default=[],
        help="PDFs with an outline: heading recall on up to 20 scanned pages of each, from page 10.",
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    WORK.mkdir(parents=True, exist_ok=True)
    english_count = len(pdfium.PdfDocument(str(ENGLISH_PDF)))
    korean = korean_pdf(WORK / "constitution.ko.pdf")
    korean_count = len(pdfium.PdfDocument(str(korean)))
    languages = load_settings().ingest.ocr_languages  # what ingestion reads every page with
    samples = {
        "en": pages(ENGLISH_PDF, spread(english_count, args.pages), rng),
        "ko": pages(korean, spread(korean_count, args.pages), rng),
    }
    results: dict = {"ocr": {}}
    print(f"{'engine':10} {'lang':4} {'pages':>5} {'accuracy':>9} {'min':>7} {'no-space':>9} {'pages/s':>8}")
    for name in filter(None, args.engines.split(",")):
        for language, sample in samples.items():
            row = measure(name, languages, sample)
            results["ocr"][f"{name}/{language}"] = row
            print(f"{name:10} {language:4} {row['pages']:>5} {row['accuracy']:>9.4f} "
                  f"{row['accuracy_min']:>7.4f} {row['accuracy_no_spaces']:>9.4f} {row['pages_per_s']:>8.3f}")
    results["text_layer_convert_s"] = text_layer_cost()
    if args.retrieval:
        results["retrieval_map@1"] = retrieval(rng)
    results["headings"] = {path.name: headings(path, 10, 20, rng) for path in args.headings}
    write_json(args.out, results)


def spread(count: int, wanted: int) -> list[int]:
    """`wanted` page numbers spread evenly over 1..count."""
    step = max(1, count // wanted)
    return list(range(1, count + 1, step))[:wanted]


if __name__ == "__main__":
    main()
