"""Korean PDFs keep the word spacing of their text layer in every PDF strategy (issue 16): a PDF
that parts words by gaps alone, as ko.TeX does, lost spaces in Docling's lines."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest

from ingestion.convert import convert
from ingestion.pdf import pdf_text_layer
from ingestion.spacing import respace, spacing
from rag.settings import IngestSettings

pytestmark = pytest.mark.debian("fonts-nanum")
FONT = Path("/usr/share/fonts/truetype/nanum/NanumGothic.ttf")  # fonts-nanum, which make test installs
PARAGRAPHS = [
    ["장(chapter)이 오른쪽 페이지(홀수면)에서 시작하게 할 것인지 정한다.",
     "한국어 문서의 띄어쓰기는 검색과 읽기에 중요하다. 이 문장은 줄이 바뀌어도"],
    ["같은 문단으로 이어진다. 다음 문단은 한 줄 띄우고 시작한다."],
]


def korean_pdf(path: Path, paragraphs: list[list[str]], size: float = 10.0) -> Path:
    """One page; each word a text object of its own, 0.3 em after the one before and no space
    character between them (pdfium reads such a gap as a space, docling-parse did not)."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    pdf = pdfium.PdfDocument.new()
    data = FONT.read_bytes()
    font = raw.FPDFText_LoadFont(pdf, (ctypes.c_uint8 * len(data)).from_buffer_copy(data), len(data),
                                 raw.FPDF_FONT_TRUETYPE, True)
    page = pdf.new_page(595, 842)
    y = 780.0
    for lines in paragraphs:
        for line in lines:
            x = 72.0
            for word in line.split():
                text = raw.FPDFPageObj_CreateTextObj(pdf, font, size)
                wide = ctypes.create_string_buffer((word + "\0").encode("utf-16-le"))
                raw.FPDFText_SetText(text, ctypes.cast(wide, ctypes.POINTER(raw.FPDF_WCHAR)))
                raw.FPDFPageObj_Transform(text, 1, 0, 0, 1, x, y)
                raw.FPDFPage_InsertObject(page, text)
                left, bottom, right, top = (ctypes.c_float() for _ in range(4))
                raw.FPDFPageObj_GetBounds(text, left, bottom, right, top)
                x = right.value + 0.3 * size
            y -= 1.5 * size
        y -= 1.5 * size  # a blank line between paragraphs
    raw.FPDFPage_GenerateContent(page)
    raw.FPDFFont_Close(font)
    pdf.save(str(path))
    pdf.close()
    return path


@pytest.fixture(scope="module")
def pdf(tmp_path_factory) -> Path:
    return korean_pdf(tmp_path_factory.mktemp("korean") / "korean.pdf", PARAGRAPHS)


@pytest.mark.parametrize("strategy", ["text", "layout", "anchored", "markdown"])
def test_a_korean_pdf_keeps_its_word_spacing(pdf, strategy):
    layer = pdf_text_layer(pdf).pages[0]  # its one page
    assert "이 오른쪽 페이지(홀수면)에서 시작하게" in layer  # the gaps are spaces to pdfium
    document = convert(pdf, "korean.pdf", IngestSettings(pdf_strategy=strategy))
    kept = spacing(layer, document.markdown)
    assert kept.spaces >= 20 and kept.share >= 0.99 and kept.added == 0, (kept, document.markdown)
    if strategy != "text":  # the paragraphs stay whole, the wrapped line within the first
        assert [b.text[:5] for b in document.blocks] == ["장(cha", "같은 문단"]


def test_lines_take_the_layers_spacing_and_keep_their_characters():
    layer = "장(chapter)이 오른쪽 “페이지”에서\n기\n본 값"
    lines = ["장(chapter)이오른쪽", '"페이', '지"에서 기', "본값", "덧붙은 줄"]
    # A word split over two lines runs on; characters the layer lacks keep the lines' spacing.
    assert respace(layer, lines) == ["장(chapter)이 오른쪽 ", '"페이', '지"에서 기 ', "본 값 ", "덧붙은 줄 "]
