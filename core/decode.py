"""The one byte → text decoder, used by the crawler (which records the charset it detects) and the extractor.

Built on w3lib's encoding helpers, in the order browsers use:

1. a byte-order mark (UTF-8, UTF-16, UTF-32) wins over any label;
2. the Content-Type header's charset, if it names a codec (labels resolved the WHATWG way, so `latin-1` and
   `iso-8859-1` decode as windows-1252, their superset);
3. for HTML (or a body of unknown type), a `<meta charset>`, `<meta http-equiv>` or XML declaration;
4. UTF-8 if the bytes are valid UTF-8 (a sequence cut off by a size cap at the very end still counts when
   the text before it has UTF-8 non-ASCII characters), else windows-1252, what browsers assume for
   unlabelled legacy pages.

Undecodable bytes become U+FFFD rather than failing the page; the BOM is never part of the text.
"""

from __future__ import annotations

from email.message import Message

from w3lib.encoding import html_body_declared_encoding, http_content_type_encoding, read_bom, to_unicode

__all__ = ["HTML_TYPES", "decode_body", "detect_charset"]

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml", ""})  # "": unlabelled, may be HTML
_FALLBACK = "cp1252"
_TRUNCATION = 3  # a UTF-8 sequence is at most 4 bytes: up to 3 may be missing at a cut


def _mime(content_type: str) -> str:
    if not content_type.strip():
        return ""
    message = Message()
    message["content-type"] = content_type
    return message.get_content_type().lower()


def _utf8_or_legacy(body: bytes) -> str:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        cut = exc.reason == "unexpected end of data" and exc.start >= len(body) - _TRUNCATION
        if cut and not body[: exc.start].isascii():  # valid UTF-8 with non-ASCII text, then cut by a size cap
            return "utf-8"
        return _FALLBACK
    return "utf-8"


def detect_charset(body: bytes, content_type: str = "") -> str:
    """The codec name (Python's spelling, e.g. 'utf-8', 'cp1252') to decode `body` with."""
    bom_encoding, _ = read_bom(body)
    if bom_encoding:
        return bom_encoding
    declared = http_content_type_encoding(content_type or None)
    if declared:
        return declared
    if _mime(content_type) in HTML_TYPES:
        meta = html_body_declared_encoding(body[:4096])
        if meta:
            return meta
    return _utf8_or_legacy(body)


def decode_body(body: bytes, content_type: str = "") -> str:
    """`body` as text, by `detect_charset`; the BOM removed, undecodable bytes replaced."""
    bom_encoding, bom = read_bom(body)
    if bom_encoding and bom:
        return to_unicode(body[len(bom):], bom_encoding)
    encoding = detect_charset(body, content_type)
    if encoding in ("utf-16", "utf-32"):  # no BOM: big-endian, as the standard says
        encoding += "-be"
    return to_unicode(body, encoding)
