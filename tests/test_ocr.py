"""OCR of scanned PDF pages with the real Tesseract: pages made in the test by rasterising
generated pages (as a scanner would give them back), read with their page anchors, marked as
OCR, retrieved and answered; a text layer is never OCRed; `ocr = "off"` refuses a scan."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pytest
from conftest import fresh_settings
from PIL import Image, ImageDraw, ImageFont
from rapidfuzz.distance import Levenshtein

from data.sample.build import write_pdf
from ingestion import ocr
from ingestion.convert import convert
from ingestion.document import DocumentLoadError
from rag.settings import IngestSettings

pytestmark = pytest.mark.debian("tesseract-ocr", "tesseract-ocr-eng", "tesseract-ocr-kor")
NANUM = Path("/usr/share/fonts/truetype/nanum/NanumGothic.ttf")
INSPECTION = [
    [(16, "Hangar 4 Fire Door Inspection"), (11, "The inspection of hangar 4 took place on 12 March."),
     (11, "All six fire doors closed within the required time.")],
    [(14, "Findings"), (11, "Door 3 needed 41 seconds to close, the slowest of all doors."),
     (11, "The sprinkler valve in hangar 4 was replaced by the contractor Vantor.")],
]
KOREAN = ["격납고 소방문 점검 보고서", "모든 소방문은 규정 시간 안에 닫혔다.",
          "스프링클러 밸브는 협력업체가 교체하였다."]


def scanned(image: Image.Image, rng: random.Random) -> Image.Image:
    """A page as a scanner gives it back: slightly turned, with noise."""
    image = image.convert("L").rotate(rng.uniform(-1, 1), resample=Image.BICUBIC, fillcolor=255)
    pixels = (np.asarray(image, dtype=np.float32)
              + np.random.default_rng(rng.randrange(99)).normal(0, 15, image.size[::-1]))
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


def image_pdf(path: Path, images: list[Image.Image]) -> Path:
    """A PDF of page images only: no text layer."""
    images[0].save(path, save_all=True, append_images=images[1:], resolution=300)
    return path


def scan_of(pdf_path: Path, target: Path) -> Path:
    """`pdf_path` rasterised at 300 dpi and scanned: the same pages without their text layer."""
    rng = random.Random(7)
    pdf = pdfium.PdfDocument(str(pdf_path))
    images = [scanned(page.render(scale=300 / 72).to_pil(), rng) for page in pdf]
    pdf.close()
    return image_pdf(target, images)


@pytest.fixture(scope="module")
def inspection_scan(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("scans")
    original = write_pdf(folder / "original.pdf", INSPECTION)
    return scan_of(original, folder / "hangar-inspection.pdf")


def test_scanned_pages_keep_their_page_anchors_and_are_marked(inspection_scan):
    document = convert(inspection_scan, "hangar-inspection.pdf", IngestSettings())
    assert {block.page for block in document.blocks} == {1, 2}
    assert all(block.ocr for block in document.blocks)
    page_two = " ".join(b.text for b in document.blocks if b.page == 2)
    assert "41 seconds" in page_two and "Vantor" in page_two
    # Headings by type size, as a text PDF without an outline gets them: the 14-point "Findings"
    # under the 16-point title, over 11-point text.
    finding = next(b for b in document.blocks if "41 seconds" in b.text)
    assert finding.section == ("Hangar 4 Fire Door Inspection", "Findings"), finding


def test_a_text_layer_is_never_ocred_and_force_ocrs_it(tmp_path, inspection_scan):
    text_page = write_pdf(tmp_path / "text.pdf", INSPECTION[:1])
    images = [page.render(scale=300 / 72).to_pil() for page in pdfium.PdfDocument(str(inspection_scan))]
    scan_page = image_pdf(tmp_path / "scan-page.pdf", images[1:])
    from pypdf import PdfWriter

    mixed = tmp_path / "mixed.pdf"
    writer = PdfWriter()
    writer.append(str(text_page))
    writer.append(str(scan_page))
    writer.write(mixed)
    for strategy in ("anchored", "text"):
        blocks = convert(mixed, "mixed.pdf", IngestSettings(pdf_strategy=strategy)).blocks
        assert {b.page for b in blocks if not b.ocr} == {1}, strategy
        assert {b.page for b in blocks if b.ocr} == {2}, strategy
        assert any("Vantor" in b.text for b in blocks if b.ocr)
    forced = convert(mixed, "mixed.pdf", IngestSettings(ocr="force")).blocks
    assert {b.page for b in forced if b.ocr} == {1, 2}
    assert any("hangar 4" in b.text for b in forced if b.page == 1)


def test_ocr_off_refuses_a_scan_with_the_reason(inspection_scan):
    with pytest.raises(DocumentLoadError,
                       match=r"no text layer on any of its 2 pages \(a scan\?\) and OCR is off"):
        convert(inspection_scan, "hangar-inspection.pdf", IngestSettings(ocr="off"))


def test_missing_tesseract_language_is_named_with_the_install_command(inspection_scan, monkeypatch):
    monkeypatch.setattr(ocr, "installed_languages", lambda: frozenset({"eng", "osd"}))
    with pytest.raises(DocumentLoadError,
                       match="Tesseract has no kor language data.*apt-get install tesseract-ocr"):
        convert(inspection_scan, "hangar-inspection.pdf", IngestSettings())


@pytest.mark.debian("fonts-nanum")
def test_a_korean_scanned_page_round_trips(tmp_path):
    page = Image.new("L", (2480, 3508), 255)  # A4 at 300 dpi
    draw = ImageDraw.Draw(page)
    font = ImageFont.truetype(str(NANUM), 46)  # 11 points at 300 dpi
    for index, line in enumerate(KOREAN):
        draw.text((300, 300 + index * 90), line, font=font, fill=0)
    path = image_pdf(tmp_path / "korean-scan.pdf", [scanned(page, random.Random(3))])
    read = "\n".join(b.text for b in convert(path, "korean-scan.pdf", IngestSettings()).blocks)
    truth = " ".join(KOREAN)
    accuracy = 1 - Levenshtein.distance(" ".join(read.split()), truth) / len(truth)
    assert accuracy >= 0.9, read


def test_a_scanned_report_is_answered_and_cited_by_page(sample_indexed, inspection_scan, tmp_path):
    """Among the 17 sample documents (other reports and tests), the answer is cited to the scan's
    pages, and its source says the text was OCRed."""
    from app.render import render_sources
    from ingestion.pipeline import ingest
    from rag.pipeline import RagPipeline

    storage = tmp_path / "storage"
    shutil.copytree(sample_indexed.storage_dir, storage)
    settings = fresh_settings(sample_indexed, storage)
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(inspection_scan, folder / inspection_scan.name)
    report = ingest([folder], settings, progress=False)
    assert report.indexed == 1 and not report.failed
    answer = RagPipeline(settings).answer("How many seconds did door 3 of hangar 4 need to close?")
    assert answer.answerable and "41" in answer.answer, answer.answer
    cited = [ref for seg in answer.segments if seg.supported for ref in seg.references]
    # The two-page scan is shorter than a chunk, so it is one chunk that spans both pages.
    assert any(
        ref.doc == "hangar-inspection.pdf" and ref.page <= 2 <= ref.page_end and ref.ocr for ref in cited
    ), cited
    # What the CLI and the UI show: the place, with the section found by type size, and that it was OCRed.
    assert ("hangar-inspection.pdf, pp. 1-2, Hangar 4 Fire Door Inspection, OCR text"
            in render_sources(answer.to_dict()))


def test_on_a_scan_a_heading_needs_space_above_and_a_wrapped_one_is_joined():
    """Tesseract's size estimates vary line to line: a heading's two lines (62 and 58 pixels)
    make one heading, and a paragraph's short last line estimated large (55) stays in it."""
    from ingestion.pdf import Line, line_blocks

    def paragraph(top: int, count: int) -> list[Line]:
        return [Line(1, top + 50 * i, top + 50 * i + 41, 41, f"Body line {i} of the paragraph. ")
                for i in range(count)]

    first = paragraph(170, 4)
    question = Line(1, first[-1].bottom + 9, first[-1].bottom + 55, 55, "ends here. ")
    lines = [
        Line(1, 0, 62, 62, "4.1 On what hardware does "), Line(1, 70, 128, 58, "Debian run? "),
        *first, question,
        Line(1, question.bottom + 80, question.bottom + 142, 62, "4.2 What kernels? "),
        *paragraph(question.bottom + 180, 3),
    ]
    blocks = line_blocks(lines, [], ocr=True)
    assert [b.section for b in blocks if b.kind == "heading"] == [
        ("4.1 On what hardware does Debian run?",), ("4.2 What kernels?",)
    ], blocks
    short = next(b for b in blocks if "ends here." in b.text)
    assert short.kind == "text" and short.section == ("4.1 On what hardware does Debian run?",)


@pytest.mark.parametrize("turn", [90, 180])
def test_a_page_scanned_sideways_or_upside_down_is_turned_upright(tmp_path, turn):
    """Tesseract's orientation detection turns the page before it is read; without it the
    single-column segmentation reads a turned page as nothing ("OCR found none")."""
    original = write_pdf(tmp_path / "original.pdf", INSPECTION[1:])
    page = pdfium.PdfDocument(str(original))[0].render(scale=300 / 72).to_pil()
    path = image_pdf(tmp_path / "turned.pdf", [scanned(page, random.Random(5)).rotate(turn, expand=True)])
    text = " ".join(b.text for b in convert(path, "turned.pdf", IngestSettings()).blocks)
    assert "41 seconds" in text and "Vantor" in text, text
