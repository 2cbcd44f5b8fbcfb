"""A text file's bytes (TXT, Markdown, CSV, JSON, HTML) -> its text, or a one-line refusal.

What the file itself says decides: a byte-order mark; for HTML its declared charset (`<meta
charset>`, `http-equiv`, an XML declaration), read as browsers read it (WHATWG: "iso-8859-1"
means windows-1252, "shift_jis" windows-31j, "euc-kr" windows-949); UTF-16 without a mark is
told by its zero bytes (every other byte of Latin text). Anything else must be UTF-8. A guessed
encoding would index garbled text without anyone noticing (cp1250 and cp1252 read the same
bytes, differently: "crème" or "crčme"), so other text is refused, naming what it looks like.
"""

from __future__ import annotations

import codecs
import re

from ingestion.document import DocumentLoadError

_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_DECLARED = re.compile(
    rb"<meta[^>]*?charset\s*=\s*[\"']?\s*([\w.:-]+)|<\?xml[^>]*?encoding\s*=\s*[\"']([\w.:-]+)", re.IGNORECASE
)
_DECLARED_WITHIN = 4096  # bytes; HTML puts the declaration in the first 1024
_WHATWG = {"iso8859-1": "cp1252", "ascii": "cp1252", "shift_jis": "cp932", "euc_kr": "cp949", "gb2312": "gbk"}
_NAMES = {"cp1252": "latin-1 (cp1252)", "cp932": "Shift_JIS (cp932)", "cp949": "EUC-KR (cp949)"}
_SAMPLE = 65536  # bytes looked at to guess what an undeclared encoding is


def declared_charset(raw: bytes) -> str | None:
    """The codec an HTML page declares, as browsers take it; None when it declares none (or
    UTF-16, which a page that could be read to find the declaration cannot be)."""
    match = _DECLARED.search(raw[:_DECLARED_WITHIN])
    if match is None:
        return None
    label = (match.group(1) or match.group(2)).decode("ascii", "replace")
    try:
        name = codecs.lookup(label).name
    except LookupError:
        raise DocumentLoadError(f"declares an unknown charset '{label}': save it as UTF-8") from None
    return None if name.startswith("utf-16") else _WHATWG.get(name, name)


def decode(raw: bytes, declared: str | None = None) -> str:
    """The text of `raw`: by its byte-order mark, else as `declared`, else UTF-16 when its zero
    bytes say so, else UTF-8; raises DocumentLoadError saying why not."""
    encoding = next((name for bom, name in _BOMS if raw.startswith(bom)), None) or declared
    encoding = encoding or _utf16_without_bom(raw) or "utf-8"
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as error:
        raise DocumentLoadError(_refusal(raw, encoding, declared, error.start)) from error
    if "\x00" in text:
        raise DocumentLoadError("binary content in a text file")
    return text


def _refusal(raw: bytes, encoding: str, declared: str | None, offset: int) -> str:
    if encoding == declared:
        return f"not valid {declared} text, as the page declares, at byte {offset}: save it as UTF-8"
    if encoding == "utf-16":
        return (
            f"not UTF-8 text: a UTF-16 byte-order mark, but invalid UTF-16 at byte {offset}: save it as UTF-8"
        )
    guess = looks_like(raw)
    hint = f" (looks like {_NAMES.get(guess, guess)})" if guess else ""
    return f"not UTF-8 text{hint}, invalid byte at offset {offset}: save it as UTF-8"


def looks_like(raw: bytes) -> str | None:
    """charset_normalizer's guess at the encoding, for a refusal's hint. Among single-byte code
    pages it cannot tell Western from Central European text ("Café crème" reads without a flaw
    as cp1250's "Café crčme"), so cp1252, by far the more common, is named when it reads as well."""
    from charset_normalizer import from_bytes
    from charset_normalizer.md import mess_ratio
    from charset_normalizer.utils import is_multi_byte_encoding

    sample = raw[:_SAMPLE]
    best = from_bytes(sample).best()
    if best is None:
        return None
    if best.encoding != "cp1252" and not is_multi_byte_encoding(best.encoding):
        try:
            if mess_ratio(sample.decode("cp1252")) <= best.chaos:
                return "cp1252"
        except UnicodeDecodeError:
            pass
    return best.encoding


def _utf16_without_bom(raw: bytes) -> str | None:
    """UTF-16 by its zero bytes: the high byte of every ASCII character (a space, a digit,
    Latin letters), so one half of the bytes holds many zeros and the other almost none."""
    sample = raw[:_SAMPLE - _SAMPLE % 2]
    if len(raw) % 2 or len(sample) < 8:
        return None
    half = len(sample) / 2
    even, odd = sample[0::2].count(0) / half, sample[1::2].count(0) / half
    if odd >= 0.1 and even <= 0.01:
        return "utf-16-le"
    if even >= 0.1 and odd <= 0.01:
        return "utf-16-be"
    return None
