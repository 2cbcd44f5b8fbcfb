"""Charts and pictures in Office files (PPTX, DOCX, XLSX) -> blocks that retrieval can find.

Docling already reads what a chart shows (the title as its caption; series names, categories and
cached values as `meta.tabular_chart`) in all three formats, and keeps each picture's image. It
drops the pictures' alt text, so that is read here from the file's drawing XML. A chart becomes
a Markdown table headed by its title ("Chart: Quarterly revenue"); a picture becomes a text
block of its alt text, its caption and the text Tesseract reads in it (marked `ocr`).
"""

from __future__ import annotations

import hashlib
import logging
import posixpath
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

from PIL import Image, UnidentifiedImageError

from ingestion.document import Block, DocumentLoadError
from ingestion.ocr import OcrUnavailable, check_languages, read_image
from ingestion.office import OFFICE_FORMATS
from ingestion.tables import markdown_table
from rag.settings import IngestSettings

logger = logging.getLogger(__name__)

CHART_CORNER = "Category"  # Docling leaves the header cell above the categories blank
MIN_PICTURE_SIDE = 16  # pixels; smaller pictures are bullets and icons, too small to hold text
_PICTURE_ELEMENTS = {"inline", "anchor", "pic"}  # wp:inline/anchor (DOCX), p:pic, xdr:pic, pic:pic
_NAME_ELEMENTS = {"docPr", "cNvPr"}  # where Office keeps a picture's alt text (descr) and title
# What tools write when nobody wrote an alt text: "Picture" (openpyxl), "Picture 3" (Office), the
# file's name (python-pptx, older PowerPoint).
_PLACEHOLDER = re.compile(
    r"(picture|image|graphic|chart|그림|이미지|차트)\s*\d*|\S+\.(png|jpe?g|gif|bmp|tiff?|emf|wmf|svg)",
    re.IGNORECASE,
)
_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}embed"


def picture_captions(document) -> set[str]:
    """References of the caption items of pictures: their text goes into the picture's block."""
    return {caption.cref for picture in document.pictures for caption in picture.captions}


def figure_block(
    item, document, pictures: PictureReader, section: tuple[str, ...], **location
) -> Block | None:
    """The block of a PictureItem: a chart's data table, or a picture's text; None for a
    picture with nothing to read (a photo without alt text)."""
    table = chart_table(item, document)
    if table is not None:
        return Block(table, "table", section=section, table_id=item.self_ref, **location)
    text, ocr = pictures.text(item, document)
    return Block(text, "text", section=section, ocr=ocr, **location) if text else None


def chart_table(item, document) -> str | None:
    """"Chart: <title>" and the chart's data as a Markdown table, categories down the first
    column and one column per series; None for a picture that is not a chart."""
    chart = item.meta.tabular_chart if item.meta else None
    if chart is None or not chart.chart_data.grid:
        return None
    rows = [[" ".join(c.text.split()) for c in row] for row in chart.chart_data.grid]
    rows[0][0] = rows[0][0] or CHART_CORNER
    title = item.caption_text(document).strip()
    return f"Chart{': ' + title if title else ''}\n\n" + markdown_table(rows[0], rows[1:])


@dataclass
class PictureReader:
    """A document's picture text: alt text by image, and OCR in `languages` (none: no OCR);
    `required` (ingest.ocr = "force") fails the document when Tesseract cannot read them."""

    alt_texts: dict[str, str] = field(default_factory=dict)
    languages: tuple[str, ...] = ()
    required: bool = False
    source: str = ""  # the file's name, for the log
    _read: dict[str, list[str]] = field(default_factory=dict)  # OCR by image: a logo repeats on every slide

    @classmethod
    def of(cls, path: Path, fmt: str, cfg: IngestSettings) -> PictureReader:
        alt = alt_texts(path) if fmt in OFFICE_FORMATS else {}
        return cls(alt, () if cfg.ocr == "off" else tuple(cfg.ocr_languages), cfg.ocr == "force", path.name)

    def text(self, item, document) -> tuple[str, bool]:
        """The picture's text ("Picture: <alt text or caption>" and the OCR paragraphs), and
        whether any of it came from OCR."""
        image = item.get_image(document)
        key = image_key(image) if image is not None else None
        named = (self.alt_texts.get(key, ""), item.caption_text(document).strip())
        labels = dict.fromkeys(t for t in named if t)
        read = self._ocr(image, key) if image is not None and min(image.size) >= MIN_PICTURE_SIDE else []
        if not labels and not read:
            return "", False
        head = "Picture: " + " - ".join(labels) if labels else "Picture"
        return "\n\n".join([head, *read]), bool(read)

    def _ocr(self, image, key: str) -> list[str]:
        if not self.languages:
            return []
        if key not in self._read:
            try:
                check_languages(self.languages)
            except OcrUnavailable as error:
                if self.required:
                    raise DocumentLoadError(f"text in pictures cannot be read: {error}") from error
                # As for a scanned page in a text PDF: the document's own text is indexed and the
                # log says what was left out, once per document.
                logger.warning("%s: text in pictures left out: %s", self.source, error)
                self.languages = ()
                return []
            self._read[key] = [p.text for p in read_image(image, self.languages)]
        return self._read[key]


def image_key(image) -> str:
    """Identifies a picture by its pixels: Docling re-encodes the file's images, so their bytes
    differ, but the pixels do not."""
    pixels = image.convert("RGB").tobytes() + repr(image.size).encode()
    return hashlib.blake2b(pixels, digest_size=16).hexdigest()


def alt_texts(path: Path) -> dict[str, str]:
    """Alt text (title and description) of the pictures in an Office file, by `image_key`.

    One reader for the three formats: each keeps a picture as a drawing element (DOCX
    `wp:inline`/`wp:anchor`, PPTX `p:pic`, XLSX `xdr:pic`) holding its name element
    (`wp:docPr` or `*:cNvPr`, with `descr` and `title`) and an `a:blip` that points, through the
    part's relationships, to the image file.
    """
    alt: dict[str, str] = {}
    with zipfile.ZipFile(path) as package:
        names = set(package.namelist())
        for part in sorted(n for n in names if n.endswith(".xml") and not n.startswith("[")):
            data = package.read(part)
            if b"blip" not in data:
                continue
            try:
                root, targets = ElementTree.fromstring(data), _relationships(package, part, names)
            except ElementTree.ParseError:
                continue  # alt text is a bonus: a part Docling got past must not fail the file
            for media, text in _described_pictures(root, targets):
                try:
                    with Image.open(package.open(media)) as image:
                        alt.setdefault(image_key(image), text)
                except (UnidentifiedImageError, OSError):
                    continue  # a metafile PIL cannot draw: Docling has no image either
    return alt


def _described_pictures(root, targets: dict[str, str]):
    """(image file, alt text) of each picture element with an alt text."""
    for element in root.iter():
        if _local(element.tag) not in _PICTURE_ELEMENTS:
            continue
        texts = [
            value
            for name in element.iter()
            if _local(name.tag) in _NAME_ELEMENTS
            for value in (name.get("title", "").strip(), name.get("descr", "").strip())
            if value and not _PLACEHOLDER.fullmatch(value)
        ]
        blip = next((b for b in element.iter() if _local(b.tag) == "blip" and b.get(_REL) in targets), None)
        if texts and blip is not None:
            yield targets[blip.get(_REL)], " - ".join(dict.fromkeys(texts))


def _relationships(package: zipfile.ZipFile, part: str, names: set[str]) -> dict[str, str]:
    """Relationship id -> file in the package, for the internal targets of `part`."""
    folder, name = posixpath.split(part)
    rels = posixpath.join(folder, "_rels", name + ".rels")
    if rels not in names:
        return {}
    targets = {}
    for rel in ElementTree.fromstring(package.read(rels)):
        target = rel.get("Target", "")
        if rel.get("TargetMode") == "External":
            continue
        absolute = target.startswith("/")
        resolved = target.lstrip("/") if absolute else posixpath.normpath(posixpath.join(folder, target))
        if resolved in names:
            targets[rel.get("Id")] = resolved
    return targets


def _local(tag) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""
