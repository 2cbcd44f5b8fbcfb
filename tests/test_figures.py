"""Charts and pictures in PPTX, DOCX and XLSX become searchable blocks: real Docling, real
Tesseract, and a real store where a question is asked. The files are written here."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from conftest import fresh_settings
from llama_index.core.llms import MockLLM
from llama_index.core.schema import QueryBundle
from PIL import Image, ImageDraw, ImageFont

from ingestion import ocr
from ingestion.convert import convert
from ingestion.document import DocumentLoadError
from ingestion.pipeline import ingest
from rag.models import build_embedding
from rag.postprocessors import build_rerank_stage
from rag.retrieval import hybrid_retriever
from rag.settings import IngestSettings
from rag.store import Store

pytestmark = pytest.mark.debian("tesseract-ocr", "tesseract-ocr-eng")

CFG = IngestSettings()
NO_OCR = IngestSettings(ocr="off")


def text_picture(words: str, background=(255, 255, 255, 255)) -> io.BytesIO:
    """A PNG of `words` in black, drawn with PIL's own scalable font."""
    image = Image.new("RGBA", (1000, 200), background)
    ImageDraw.Draw(image).text((30, 60), words, fill="black", font=ImageFont.load_default(size=48))
    png = io.BytesIO()
    image.save(png, "PNG")
    png.seek(0)
    return png


def photo() -> io.BytesIO:
    """A real photograph (matplotlib's sample data): a portrait, no text."""
    import matplotlib.cbook

    return io.BytesIO(Path(matplotlib.cbook.get_sample_data("grace_hopper.jpg", asfileobj=False))
                      .read_bytes())


def revenue_deck(path: Path) -> Path:
    """Slide 1 text, slide 2 a titled chart of two series, slide 3 a picture with alt text."""
    from pptx import Presentation
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    deck = Presentation()
    intro = deck.slides.add_slide(deck.slide_layouts[1])
    intro.shapes.title.text = "Business review"
    intro.placeholders[1].text = "Sales grew in every region this year."
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Revenue"
    data = CategoryChartData()
    data.categories = ["Q1", "Q2", "Q3", "Q4"]
    data.add_series("2023", (10.5, 11, 12, 13))
    data.add_series("2024", (12, 14, 17.25, 19))
    chart = slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(2), Inches(8), Inches(4),
                                   data).chart
    chart.has_title = True
    chart.chart_title.text_frame.text = "Quarterly revenue (million EUR)"
    team = deck.slides.add_slide(deck.slide_layouts[5])
    team.shapes.title.text = "Team"
    picture = team.shapes.add_picture(text_picture("Zeppelin hangar"), Inches(1), Inches(2), Inches(6))
    picture._element.nvPicPr.cNvPr.set("descr", "Photo of the hangar door")
    deck.save(path)
    return path


def manual_docx(path: Path, alt: str = "Diagram of the cooling loop") -> Path:
    """A heading, a picture whose words appear nowhere else (with alt text), a photo, a paragraph."""
    from docx import Document

    document = Document()
    document.add_heading("Pump manual", level=1)
    document.add_heading("Cooling", level=2)
    document.add_paragraph("The pump is serviced once a year.")
    document.add_picture(text_picture("Marmalade turbine 42"))
    document.inline_shapes[0]._inline.docPr.set("descr", alt)
    document.add_picture(photo())
    document.add_paragraph("Replace the seals after five years.")
    document.save(path)
    return path


def sales_xlsx(path: Path) -> Path:
    """Sheet "Notes" with text; sheet "Sales" with a table and a bar chart of it."""
    import openpyxl
    from openpyxl.chart import BarChart, Reference

    workbook = openpyxl.Workbook()
    workbook.active.title = "Notes"
    workbook.active.append(["Figures are unaudited."])
    sheet = workbook.create_sheet("Sales")
    sheet.append(["Month", "Units"])
    for month, units in (("Jan", 5), ("Feb", 7), ("Mar", 9)):
        sheet.append([month, units])
    chart = BarChart()
    chart.title = "Units sold"
    chart.add_data(Reference(sheet, min_col=2, min_row=1, max_row=4), titles_from_data=True)
    chart.set_categories(Reference(sheet, min_col=1, min_row=2, max_row=4))
    sheet.add_chart(chart, "D2")
    workbook.save(path)
    return path


def chart_docx(path: Path) -> Path:
    """A chart between two sections: python-docx cannot draw one, so python-pptx writes the
    chart part and it is linked in as Word does (`w:drawing` -> `c:chart r:id`)."""
    from docx import Document
    from docx.opc.constants import RELATIONSHIP_TYPE
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part
    from docx.oxml import parse_xml
    from pptx.chart.data import CategoryChartData
    from pptx.chart.xmlwriter import ChartXmlWriter
    from pptx.enum.chart import XL_CHART_TYPE

    data = CategoryChartData()
    data.categories = ["North", "South"]
    data.add_series("Units", (31, 47))
    xml = ChartXmlWriter(XL_CHART_TYPE.COLUMN_CLUSTERED, data).xml.replace(
        "<c:chart>", "<c:chart><c:title><c:tx><c:rich><a:bodyPr/><a:p><a:r><a:t>Units by region</a:t>"
        "</a:r></a:p></c:rich></c:tx></c:title>", 1)
    document = Document()
    document.add_heading("Sales", level=1)
    document.add_paragraph("Text before the chart.")
    part = Part(PackURI("/word/charts/chart1.xml"),
                "application/vnd.openxmlformats-officedocument.drawingml.chart+xml",
                xml.encode(), document.part.package)
    rel = document.part.relate_to(part, RELATIONSHIP_TYPE.CHART)
    document.add_paragraph().add_run()._r.append(parse_xml(
        '<w:drawing xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
        ' xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"'
        ' xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"'
        ' xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart"'
        ' xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
        '<wp:inline><wp:extent cx="5000000" cy="3000000"/><wp:docPr id="1" name="Chart 1"/>'
        '<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/chart">'
        f'<c:chart r:id="{rel}"/></a:graphicData></a:graphic></wp:inline></w:drawing>'))
    document.add_heading("Outlook", level=1)
    document.add_paragraph("Text after the chart.")
    document.save(path)
    return path


# ------------------------------------------------------------------------ conversion


def test_pptx_chart_is_a_table_on_its_slide(tmp_path):
    blocks = convert(revenue_deck(tmp_path / "review.pptx"), "review.pptx", NO_OCR).blocks
    [chart] = [b for b in blocks if b.kind == "table"]
    assert (chart.slide, chart.section, chart.ocr) == (2, ("Revenue",), False)
    assert chart.text == (
        "Chart: Quarterly revenue (million EUR)\n\n| Category | 2023 | 2024 |\n|---|---|---|\n"
        "| Q1 | 10.5 | 12 |\n| Q2 | 11 | 14 |\n| Q3 | 12 | 17.25 |\n| Q4 | 13 | 19 |"
    )
    assert sum("Quarterly revenue" in b.text for b in blocks) == 1  # the title is not also a paragraph


def test_xlsx_chart_is_a_table_under_its_sheet(tmp_path):
    blocks = convert(sales_xlsx(tmp_path / "sales.xlsx"), "sales.xlsx", CFG).blocks
    charts = [b for b in blocks if b.text.startswith("Chart:")]
    assert [(b.kind, b.section, b.text) for b in charts] == [
        ("table", ("Sales",),
         "Chart: Units sold\n\n| Category | Units |\n|---|---|\n| Jan | 5 |\n| Feb | 7 |\n| Mar | 9 |")
    ]


def test_docx_chart_keeps_its_place_in_reading_order(tmp_path):
    blocks = convert(chart_docx(tmp_path / "sales.docx"), "sales.docx", CFG).blocks
    assert [(b.kind, b.section, b.text.splitlines()[0]) for b in blocks] == [
        ("heading", ("Sales",), "## Sales"),
        ("text", ("Sales",), "Text before the chart."),
        ("table", ("Sales",), "Chart: Units by region"),
        ("heading", ("Outlook",), "## Outlook"),
        ("text", ("Outlook",), "Text after the chart."),
    ]
    assert "| South | 47 |" in blocks[2].text


def test_picture_text_is_read_and_marked_as_ocr_and_a_photo_adds_nothing(tmp_path):
    blocks = convert(manual_docx(tmp_path / "manual.docx"), "manual.docx", CFG).blocks
    assert [(b.kind, b.ocr) for b in blocks] == [("heading", False), ("heading", False), ("text", False),
                                                  ("text", True), ("text", False)]
    assert blocks[3].text == "Picture: Diagram of the cooling loop\n\nMarmalade turbine 42"
    assert blocks[3].section == ("Pump manual", "Cooling")


def test_alt_text_is_kept_without_ocr(tmp_path):
    deck = convert(revenue_deck(tmp_path / "review.pptx"), "review.pptx", NO_OCR).blocks
    assert [(b.slide, b.text, b.ocr) for b in deck if b.text.startswith("Picture")] == [
        (3, "Picture: Photo of the hangar door", False)
    ]
    manual = convert(manual_docx(tmp_path / "manual.docx", alt=""), "manual.docx", NO_OCR).blocks
    assert not [b for b in manual if b.text.startswith("Picture")]  # neither alt text nor OCR: no block


def test_text_on_a_transparent_picture_is_read(tmp_path):
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    slide.shapes.add_picture(text_picture("Quokka ledger", background=(0, 0, 0, 0)), Inches(1), Inches(1),
                             Inches(6))
    deck.save(tmp_path / "logo.pptx")
    [block] = convert(tmp_path / "logo.pptx", "logo.pptx", CFG).blocks
    assert (block.text, block.slide, block.ocr) == ("Picture\n\nQuokka ledger", 1, True)


def test_without_tesseract_the_rest_is_indexed_unless_ocr_is_forced(tmp_path, monkeypatch, caplog):
    manual = manual_docx(tmp_path / "manual.docx")
    monkeypatch.setenv("PATH", str(tmp_path))  # no tesseract on it
    ocr.installed_languages.cache_clear()
    try:
        blocks = convert(manual, "manual.docx", CFG).blocks
        assert "Picture: Diagram of the cooling loop" in [b.text for b in blocks]
        assert not any(b.ocr for b in blocks)
        assert "manual.docx: text in pictures left out: OCR needs Tesseract" in caplog.text
        with pytest.raises(DocumentLoadError, match="text in pictures cannot be read: OCR needs Tesseract"):
            convert(manual, "manual.docx", IngestSettings(ocr="force"))
    finally:
        ocr.installed_languages.cache_clear()


# ------------------------------------------------------------------------- retrieval


@pytest.fixture(scope="module")
def store(base_settings, tmp_path_factory):
    """The deck, the manual and the workbook among documents on the same topics."""
    folder = tmp_path_factory.mktemp("figures")
    revenue_deck(folder / "review.pptx")
    manual_docx(folder / "manual.docx")
    sales_xlsx(folder / "sales.xlsx")
    (folder / "targets.md").write_text(
        "# Revenue targets\n\nFor 2025 the board expects revenue to grow by a tenth in every quarter; "
        "the third quarter stays the strongest.", encoding="utf-8")
    (folder / "costs.md").write_text(
        "# Quarterly costs\n\nCosts in 2024 were 8 million EUR in Q1, 9 in Q2, 9 in Q3 and 11 in Q4.",
        encoding="utf-8")
    (folder / "pumps.md").write_text(
        "# Pump types\n\nCentrifugal pumps move coolant; the cooling loop is checked monthly.",
        encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("storage"))
    report = ingest([folder], settings, progress=False)
    assert report.indexed == 6 and not report.failed
    return settings


def retrieve(settings, question: str):
    """Hybrid retrieval and the reranker, as the pipeline runs them before the LLM."""
    embedding = build_embedding(settings)
    nodes = hybrid_retriever(settings, embedding, MockLLM()).retrieve(QueryBundle(question))
    rerank = build_rerank_stage(settings, Store(settings), embedding)
    return rerank.postprocess_nodes(nodes, query_bundle=QueryBundle(question))


def test_a_chart_value_answers_a_question(store):
    [first, *_] = retrieve(store, "What was the revenue in Q3 2024?")
    assert (first.node.metadata["doc"], first.node.metadata["slide"]) == ("review.pptx", 2)
    assert "| Q3 | 12 | 17.25 |" in first.node.text


def test_words_only_in_a_picture_are_found(store):
    [first, *_] = retrieve(store, "Where is the marmalade turbine?")  # words only in the picture
    assert first.node.metadata["doc"] == "manual.docx" and first.node.metadata["ocr"] is True
    assert "Marmalade turbine 42" in first.node.text
