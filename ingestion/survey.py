"""A first look at a new document set, for `ragqa init`: which key fields its files carry and
where, how its PDFs are built, and what chunk size suits its language. Each proposal carries the
evidence behind it (how many sampled files, example values), so a team can judge it, and every
proposed regex is tried on the sample before it is proposed.

Where a field can come from, in the order header extraction reads them (ingestion/headers.py):
- the file's own metadata: Markdown front matter, a PDF's or HTML page's title;
- the file name: a code ("SI-2024-03") or a date shared by the names' shape;
- the first page or slide: `Key: value` lines and two-cell table rows (`| Key | value |`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ingestion.convert import SUPPORTED_SUFFIXES, convert
from ingestion.document import ConvertedDocument, DocumentLoadError
from ingestion.sources import discover
from rag.text import hangul_script
from rag.settings import IngestSettings

# A `Key: value` line or a two-cell row; a key is a short name (letters first, at most 4 words).
_KEY_VALUE = re.compile(r"^\W*?([^\W\d_][\w().&/\- ]{0,30}?)\s*(?::|\*\*:|:\*\*)\s*(\S.{0,100}?)\W*$")
_ROW = re.compile(r"^\s*\|\s*([^|]{1,32}?)\s*\|\s*([^|]{1,100}?)\s*\|\s*$")
_NOT_KEYS = {"http", "https", "ftp", "mailto", "note", "notes", "example", "warning", "q", "a", "see", "tip"}
_CODE = re.compile(r"(?<![A-Za-z0-9])[A-Z]{1,6}[-_]?\d+(?:[-_]\d+)*(?![A-Za-z0-9])")
_DATE = re.compile(r"(?<!\d)(?:19|20)\d\d(?:[-_.]?)(?:0[1-9]|1[0-2])(?:[-_.]?\d\d)?(?!\d)")
E5_WINDOW = 512  # tokens e5 embeds; text beyond them is cut off unseen


@dataclass
class FieldProposal:
    name: str
    source: str  # "metadata", "file name" or "first page"
    values: list[str]  # one per sampled file it was found in (per file, for "file name")
    pattern: str = ""  # first page: the regex (group 1: the value)

    @property
    def files(self) -> int:
        return len(self.values)

    @property
    def evidence(self) -> str:
        """Where it was found and two values, as `ragqa init` prints it and writes it in the config."""
        examples = ", ".join(repr(v) for v in self.values[:2])
        return f"from the {self.source} in {self.files} file(s), e.g. {examples}"


@dataclass
class Survey:
    files: int  # supported files found
    sampled: list[str]  # doc ids read
    formats: dict[str, int]
    unsupported: list[str]
    failed: dict[str, str]  # doc id -> reason, among the sampled
    fields: list[FieldProposal]
    filename_pattern: str
    pdf_strategy: str
    pdf_reason: str
    chunk_size: int
    chunk_reason: str
    hangul_files: int  # sampled files written mostly in Hangul

    @property
    def header_fields(self) -> list[str]:
        """Title first, then each field once (a field may come from the name and the page)."""
        return list(dict.fromkeys(["Title"] + [f.name for f in self.fields if f.name.lower() != "title"]))

    @property
    def patterns(self) -> dict[str, str]:
        return {f.name: f.pattern for f in self.fields if f.pattern}


def survey(paths: list[Path], sample: int = 12, tokens_per_char=None) -> Survey:
    """Read up to `sample` supported files (spread over formats and names) and propose the
    header fields, a PDF strategy and a chunk size. `tokens_per_char(text) -> float` is the
    embedding tokenizer's density; without it the chunk size stays the default."""
    found = discover(paths)
    supported = [(f, d) for f, d in found if f.suffix.lower() in SUPPORTED_SUFFIXES]
    if not supported:
        raise ValueError(f"no supported document under {', '.join(map(str, paths))}")
    chosen = _spread(supported, sample)
    converted, failed = {}, {}
    for file, doc_id in chosen:
        try:  # the text layer is enough to look at; Docling's structure is not needed here
            converted[doc_id] = convert(file, doc_id, IngestSettings(pdf_strategy="text"))
        except DocumentLoadError as error:
            failed[doc_id] = str(error)
    docs = list(converted.values())
    fields = _metadata_fields(docs) + _first_page_fields(docs)
    filename_pattern, by_name = _filename_fields([d for _, d in supported], fields)
    pdfs = [f for f, _ in chosen if f.suffix.lower() == ".pdf"]
    strategy, strategy_reason = _pdf_strategy(pdfs)
    hangul = sum(hangul_script(d.markdown) for d in docs)
    chunk_size, chunk_reason = _chunk_size(docs, tokens_per_char)
    return Survey(
        files=len(supported), sampled=[d for _, d in chosen],
        formats=dict(Counter(f.suffix.lower() for f, _ in supported)),
        unsupported=[d for f, d in found if f.suffix.lower() not in SUPPORTED_SUFFIXES],
        failed=failed, fields=fields + by_name, filename_pattern=filename_pattern,
        pdf_strategy=strategy, pdf_reason=strategy_reason, chunk_size=chunk_size,
        chunk_reason=chunk_reason, hangul_files=hangul,
    )


def _spread(files: list[tuple[Path, str]], sample: int) -> list[tuple[Path, str]]:
    """Up to `sample` files, taking each format in turn and spreading evenly within it."""
    by_format: dict[str, list] = defaultdict(list)
    for pair in files:
        by_format[pair[0].suffix.lower()].append(pair)
    chosen: list = []
    queues = {k: _even(v, sample) for k, v in by_format.items()}
    while len(chosen) < sample and any(queues.values()):
        for queue in queues.values():
            if queue and len(chosen) < sample:
                chosen.append(queue.pop(0))
    return chosen


def _even(items: list, most: int) -> list:
    step = max(1.0, len(items) / most)
    return [items[int(i * step)] for i in range(min(most, len(items)))]


def _common(having: list[ConvertedDocument], docs: list[ConvertedDocument]) -> bool:
    """Found in enough files to be a field of the set, not of one file: in 30% of the sample,
    or in half of one format's files (the test reports' decks, not the meeting notes)."""
    if len(having) < min(2, len(docs)):
        return False
    per_format, found = Counter(d.format for d in docs), Counter(d.format for d in having)
    return len(having) >= 0.3 * len(docs) or any(
        n >= 2 and n >= 0.5 * per_format[f] for f, n in found.items())


def _metadata_fields(docs: list[ConvertedDocument]) -> list[FieldProposal]:
    having: dict[str, list[tuple[ConvertedDocument, str]]] = defaultdict(list)
    for doc in docs:
        for key, value in doc.fields.items():
            if isinstance(value, (str, int, float)) and str(value).strip() and len(str(value)) <= 120:
                having[str(key)].append((doc, str(value)))
    return [FieldProposal(key, "metadata", [v for _, v in found]) for key, found in having.items()
            if _common([d for d, _ in found], docs)]


def key_values(text: str) -> list[tuple[str, str]]:
    """(key, value) of each `Key: value` line and two-cell table row of a first page."""
    pairs = []
    for line in text.splitlines():
        match = _ROW.match(line) or _KEY_VALUE.match(line)
        if not match or set(match.group(2)) <= set("-: "):  # a table's separator row
            continue
        key = " ".join(match.group(1).strip("*_ ").split())
        if key and len(key.split()) <= 4 and key.lower() not in _NOT_KEYS:
            pairs.append((key, match.group(2).strip("*_ ")))
    return pairs


def field_pattern(key: str) -> str:
    """The regex header extraction uses for a first-page field: the key, then `:` or a cell
    border, then the value (group 1)."""
    words = r"\W+".join(re.escape(w) for w in key.lower().split())
    return rf"(?im)^\W*{words}\W*[:|]\W*(.+?)\W*$"


def _first_page_fields(docs: list[ConvertedDocument]) -> list[FieldProposal]:
    spellings: dict[str, Counter[str]] = defaultdict(Counter)  # lowered key -> its spellings
    having: dict[str, list[ConvertedDocument]] = defaultdict(list)
    for doc in docs:
        pairs = key_values(doc.first_page_text)
        repeated = Counter(k.lower() for k, _ in pairs)
        for key in {k for k, _ in pairs if repeated[k.lower()] == 1}:  # a field appears once
            spellings[key.lower()][key] += 1
            having[key.lower()].append(doc)
    # A key some files carry as metadata keeps that spelling: one field, two sources.
    metadata = {str(f).lower(): str(f) for doc in docs for f in doc.fields}
    proposals = []
    for lowered, found in having.items():
        if not _common(found, docs):
            continue
        name = metadata.get(lowered) or spellings[lowered].most_common(1)[0][0]
        pattern = field_pattern(name)
        matched = [(doc, m.group(1)) for doc in docs if (m := re.search(pattern, doc.first_page_text))]
        if _common([d for d, _ in matched], docs):  # the regex finds what the survey saw
            proposals.append(FieldProposal(name, "first page", [v for _, v in matched], pattern))
    return sorted(proposals, key=lambda p: -p.files)


def _shape(token: str) -> str:
    """A token's regex shape: letters and digits by class and count, separators as they are."""
    def run(match: re.Match) -> str:
        text = match.group()
        kind = r"\d" if text[0].isdigit() else "[A-Z]" if text.isupper() else "[A-Za-z]"
        return f"{kind}{{{len(text)}}}" if len(text) > 1 else kind
    return re.sub(r"\d+|[A-Z]+|[A-Za-z]+|[^A-Za-z\d]",
                  lambda m: run(m) if m.group()[0].isalnum() else re.escape(m.group()), token)


def _filename_fields(doc_ids: list[str], fields: list[FieldProposal]) -> tuple[str, list[FieldProposal]]:
    """A regex of named groups over the file names: a code or a date many names share the
    shape of. A code that is also a first-page or metadata value gets that field's name
    ("SI-2024-03" is the "Test Name" on the first slide); the name is read first, the page's
    regex stays for files named otherwise."""
    stems = [PurePosixPath(d).stem for d in doc_ids]
    groups, proposals = [], []
    for default, token in (("Code", _CODE), ("Date", _DATE)):
        found: dict[str, list[str]] = defaultdict(list)  # shape -> the names' tokens of that shape
        for stem in stems:
            for shape, text in {_shape(m.group()): m.group() for m in token.finditer(stem)}.items():
                found[shape].append(text)
        stems = [_CODE.sub(" ", stem) for stem in stems]  # a code's digits are no date
        if not found:
            continue
        shape, values = max(found.items(), key=lambda item: len(item[1]))
        if len(values) < max(2, 0.2 * len(doc_ids)):
            continue
        seen = {v.lower() for v in values}
        name = next((f.name for f in fields if any(x.lower() in seen for x in f.values)), default)
        groups.append(f"(?P<{name.replace(' ', '_')}>{shape})")
        proposals.append(FieldProposal(name, "file name", values))
    return "|".join(groups), proposals


def _pdf_strategy(pdfs: list[Path]) -> tuple[str, str]:
    if not pdfs:
        return "anchored", "no PDF in the sample: the default"
    import pypdfium2 as pdfium

    outlined, scanned = 0, 0
    for path in pdfs:
        try:
            pdf = pdfium.PdfDocument(str(path))
        except pdfium.PdfiumError:
            continue
        try:
            outlined += any(True for _ in pdf.get_toc())
            first = pdf[0].get_textpage()
            scanned += not first.get_text_range().strip()
            first.close()
        finally:
            pdf.close()
    note = (f"; {scanned} of them without a text layer on page 1 (scans: OCR reads them, ingest.ocr)"
            if scanned else "")
    if outlined * 2 >= len(pdfs):
        return "anchored", (f"{outlined} of {len(pdfs)} sampled PDFs have an outline: "
                            f"sections from it, pages kept{note}")
    return "text", (f"{len(pdfs) - outlined} of {len(pdfs)} sampled PDFs have no outline to give sections: "
                    f"the text layer page by page{note}")


def _chunk_size(docs: list[ConvertedDocument], tokens_per_char) -> tuple[int, str]:
    """The default 900 characters, less where the language packs more tokens per character
    (Korean) so that a chunk and its header stay within e5's window with room to spare."""
    text = "\n".join(d.markdown[:4000] for d in docs)
    if tokens_per_char is None or not text.strip():
        return 900, "the default (the embedding model was not prepared, so its tokenizer was not read)"
    density = tokens_per_char(text)
    fits = int(0.6 * E5_WINDOW / density) // 100 * 100  # 40% left for the header and a long tail
    size = max(300, min(900, fits))
    return size, (f"{density:.2f} tokens per character in the sample: "
                  f"{size} characters stay within e5's {E5_WINDOW} tokens")
