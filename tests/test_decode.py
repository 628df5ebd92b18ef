"""core/decode.py: the one byte → text decoder the crawler and the extractor share."""

from __future__ import annotations

import codecs

from core.decode import decode_body, detect_charset
from ingest import extract, fetch

LATIN = "Caf\u00e9 na\u00efve"
QUOTED = "r\u00e9sum\u00e9 of the \u201cfused\u201d kernels"  # the curly quotes exist in cp1252, not in latin-1


def test_a_latin1_label_decodes_as_its_windows_1252_superset() -> None:
    assert detect_charset(b"x", "text/html; charset=ISO-8859-1") == "cp1252"
    assert decode_body(QUOTED.encode("cp1252"), "text/html; charset=latin-1") == QUOTED


def test_the_header_charset_wins_over_a_meta_charset() -> None:
    body = f'<meta charset="utf-8"><p>{LATIN}</p>'.encode("cp1252")
    assert LATIN in decode_body(body, "text/html; charset=windows-1252")


def test_unlabelled_bytes_that_are_not_utf8_decode_as_windows_1252() -> None:
    assert decode_body(QUOTED.encode("cp1252"), "text/html") == QUOTED
    assert decode_body(QUOTED.encode("cp1252"), "text/plain") == QUOTED


def test_a_lone_legacy_byte_after_ascii_is_windows_1252() -> None:
    assert decode_body(b"cafe caf\xe9", "text/plain") == "cafe caf\u00e9"


def test_unlabelled_utf8_decodes_as_utf8() -> None:
    assert decode_body(QUOTED.encode("utf-8"), "") == QUOTED


def test_a_utf8_sequence_cut_at_the_end_is_still_utf8() -> None:
    body = QUOTED.encode("utf-8") + "\u20ac".encode("utf-8")[:2]
    assert detect_charset(body, "text/plain") == "utf-8"
    assert decode_body(body, "text/plain") == QUOTED + "\ufffd"


def test_a_utf8_bom_wins_over_the_label_and_is_not_part_of_the_text() -> None:
    body = codecs.BOM_UTF8 + LATIN.encode("utf-8")
    assert detect_charset(body, "text/html; charset=latin-1") == "utf-8"
    assert decode_body(body, "text/html; charset=latin-1") == LATIN


def test_a_utf16_bom_is_read() -> None:
    assert decode_body(LATIN.encode("utf-16"), "") == LATIN


def test_a_meta_charset_is_read_in_html() -> None:
    body = '<html><head><meta charset="iso-8859-2"></head><p>\u0141\u00f3d\u017a</p>'.encode("iso-8859-2")
    assert detect_charset(body, "text/html") == "iso8859-2"
    assert "\u0141\u00f3d\u017a" in decode_body(body, "text/html")


def test_a_meta_http_equiv_charset_is_read_in_an_unlabelled_body() -> None:
    body = '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251"><p>\u0416</p>'.encode("cp1251")
    assert "\u0416" in decode_body(body, "")


def test_a_meta_charset_in_plain_text_is_ignored() -> None:
    body = '<meta charset="iso-8859-2"> caf\u00e9'.encode("utf-8")
    assert decode_body(body, "text/plain").endswith("caf\u00e9")


def test_an_unknown_charset_label_is_ignored() -> None:
    assert decode_body("caf\u00e9".encode(), "text/html; charset=x-no-such-codec") == "caf\u00e9"


def test_undecodable_bytes_become_replacement_characters() -> None:
    assert decode_body(b"ok \xff\xfe bad", "text/html; charset=utf-8") == "ok \ufffd\ufffd bad"


def test_the_crawler_and_the_extractor_use_this_decoder() -> None:
    assert extract.decode_body is decode_body
    assert fetch.detect_charset is detect_charset
