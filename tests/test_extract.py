"""Extraction: fetched bytes → clean Document text, one format at a time, on small hand-written pages."""

from __future__ import annotations

import hashlib
import io
import logging
from pathlib import Path

import pytest
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

from core.records import Document, FetchResult, Resource
from ingest.extract import dedupe_documents, extract

PAGES = Path(__file__).parent / "fixtures" / "pages"


def resource(url: str = "https://example.com/tiling", **fields: object) -> Resource:
    values: dict[str, object] = dict(
        id="example-com-tiling", title="Tiling tutorial", url=url, authors="Listed Author", note="A note",
        topic="Matrix Multiplication", section="Tiling", tier=1, kind="blog", position=0, list_anchor="#tiling",
    )
    values.update(fields)
    return Resource(**values)  # type: ignore[arg-type]


def fetched(body: bytes, content_type: str = "text/html; charset=utf-8", url: str = "https://example.com/tiling",
            status: str = "ok") -> FetchResult:
    return FetchResult(url=url, final_url=url, status=status, http_status=200, content_type=content_type, body=body)


@pytest.fixture(scope="module")
def article() -> Document:
    doc = extract(fetched((PAGES / "article.html").read_bytes()), resource())
    assert doc is not None
    return doc


def make_pdf(lines: list[str], title: str = "", author: str = "") -> bytes:
    """A one-page PDF with real text operators, built with pypdf's writer."""
    writer = PdfWriter()
    page = writer.add_blank_page(612, 792)
    font = DictionaryObject({
        NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica"),
    })
    fonts = DictionaryObject({NameObject("/F1"): font})
    page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): fonts})
    ops = ["BT /F1 11 Tf 72 740 Td"] + [f"({line}) Tj 0 -14 Td" for line in lines] + ["ET"]
    stream = DecodedStreamObject()
    stream.set_data("\n".join(ops).encode("latin-1"))
    page.replace_contents(stream)
    if title or author:
        writer.add_metadata({"/Title": title, "/Author": author})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


# --- HTML --------------------------------------------------------------------------------------


def test_boilerplate_removed(article: Document) -> None:
    for phrase in ("cookies", "Accept all", "Archive", "About the author", "All rights reserved",
                   "Privacy policy", "Terms of service", "Related posts", "Coalescing global loads"):
        assert phrase not in article.text


def test_script_and_xss_payload_not_in_text(article: Document) -> None:
    for payload in ("alert(", "xss", "document.cookie", "track-everything", "onerror", "<script", "<img"):
        assert payload not in article.text


def test_main_text_kept(article: Document) -> None:
    assert article.text.startswith("# Tiling Shared Memory for SGEMM")
    assert "cuts global memory traffic by the tile width" in article.text
    assert article.text.rstrip().endswith("overwritten by the next iteration.")


def test_headings_kept_as_markdown(article: Document) -> None:
    assert "\n## Why tiles help\n" in article.text
    assert "\n### Choosing a tile size\n" in article.text


def test_lists_kept_as_markdown(article: Document) -> None:
    assert "- Each tile of A is loaded once per block.\n- Each tile of B is loaded once per block." in article.text


def test_tables_kept_as_markdown(article: Document) -> None:
    assert "| Tile | Shared memory | GFLOP/s |" in article.text
    assert "| 32x32 | 8 KiB | 2900 |" in article.text


def test_code_block_kept_verbatim_with_language(article: Document) -> None:
    code = (PAGES / "article.html").read_text().split('<code class="language-cuda">')[1].split("</code>")[0]
    code = code.replace("&lt;", "<").rstrip("\n")
    assert f"```cuda\n{code}\n```" in article.text
    assert "\n\n    float acc = 0.0f;" in article.text  # the blank line inside the code survives


def test_code_containing_fences_gets_a_longer_fence() -> None:
    html = (
        "<html><body><article><h1>Fences</h1><p>" + "Markdown inside a code block needs care. " * 5 + "</p>"
        "<pre><code>```python\nprint('hi')\n```</code></pre></article></body></html>"
    )
    doc = extract(fetched(html.encode()), resource())
    assert doc is not None
    assert "````\n```python\nprint('hi')\n```\n````" in doc.text


def test_title_author_date_metadata(article: Document) -> None:
    assert article.title == "Tiling Shared Memory for SGEMM"
    assert article.authors == "Ada Lovelace"
    assert article.date == "2024-03-15"
    assert article.source_kind == "html"


def test_resource_fills_missing_metadata() -> None:
    para = "Warp schedulers issue one instruction per cycle. " * 6
    html = f"<html><body><article><p>{para}</p></article></body></html>"
    doc = extract(fetched(html.encode()), resource())
    assert doc is not None
    assert (doc.title, doc.authors) == ("Tiling tutorial", "Listed Author")


def test_content_hash_is_sha256_of_text(article: Document) -> None:
    assert article.content_hash == hashlib.sha256(article.text.encode("utf-8")).hexdigest()


def test_page_without_main_text_gives_none(caplog: pytest.LogCaptureFixture) -> None:
    html = (b"<html><body><nav><a href='/'>Home</a><a href='/x'>Pricing</a></nav>"
            b"<main><article></article></main></body></html>")
    with caplog.at_level(logging.INFO, logger="ingest.extract"):
        assert extract(fetched(html), resource()) is None
    assert "example.com/tiling" in caplog.text


def test_failed_fetch_gives_none(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="ingest.extract"):
        assert extract(fetched(b"", status="failed"), resource()) is None
    assert "status failed" in caplog.text


# --- charsets ----------------------------------------------------------------------------------


def test_charset_from_meta_when_header_has_none() -> None:
    doc = extract(fetched((PAGES / "cp1252.html").read_bytes(), content_type="text/html"), resource())
    assert doc is not None
    assert "Na\u00efve r\u00e9sum\u00e9 of the \u201cfused\u201d kernels" in doc.text
    assert doc.title == "Caf\u00e9 kernels"


# --- PDF and markdown --------------------------------------------------------------------------


def test_pdf_text_extracted() -> None:
    lines = ["Warp specialization assigns producer and consumer roles to warps,",
             "so TMA loads overlap with tensor core math in the main loop of a GEMM."]
    body = make_pdf(lines, title="Warp Specialization", author="Jane Doe")
    doc = extract(fetched(body, content_type="application/pdf", url="https://arxiv.org/pdf/1234.5678"), resource())
    assert doc is not None
    assert doc.source_kind == "pdf"
    assert "TMA loads overlap with tensor core math" in doc.text
    assert (doc.title, doc.authors) == ("Warp Specialization", "Jane Doe")


def test_pdf_recognised_by_magic_bytes() -> None:
    body = make_pdf(["Shared memory bank conflicts serialise accesses to the same bank by different",
                     "threads of a warp, so padding the tile by one column removes them."])
    doc = extract(fetched(body, content_type="application/octet-stream"), resource())
    assert doc is not None and doc.source_kind == "pdf"


def test_corrupt_pdf_gives_none_with_reason(caplog: pytest.LogCaptureFixture) -> None:
    body = b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\ngarbage \x00\x01 trailer <<>>"
    with caplog.at_level(logging.INFO, logger="ingest.extract"):
        assert extract(fetched(body, content_type="application/pdf"), resource()) is None
    assert "PDF" in caplog.text


def test_truncated_pdf_gives_none() -> None:
    body = make_pdf(["A perfectly good page of text that is about to lose its tail in transit."])
    assert extract(fetched(body[: len(body) // 2], content_type="application/pdf"), resource()) is None


def test_markdown_readme_kept_as_is() -> None:
    text = (PAGES / "readme.md").read_text()
    url = "https://raw.githubusercontent.com/example/fastkernels/main/README.md"
    doc = extract(fetched(text.encode(), content_type="text/plain; charset=utf-8", url=url), resource(url=url))
    assert doc is not None
    assert doc.source_kind == "markdown"
    assert doc.text == text.strip()
    assert doc.title == "FastKernels"


def test_plain_text_by_content_type() -> None:
    text = "Occupancy is the ratio of active warps to the maximum number of warps per multiprocessor. " * 2
    doc = extract(fetched(text.encode(), content_type="text/plain"), resource())
    assert doc is not None and doc.text == text.strip()


# --- near duplicates ---------------------------------------------------------------------------


def _doc(url: str, text: str) -> Document:
    return Document(resource_id=url, url=url, title=url, text=text,
                    content_hash=hashlib.sha256(text.encode()).hexdigest())


def test_near_duplicate_dropped_keeping_the_first() -> None:
    words = [f"word{i}" for i in range(400)]
    first = _doc("https://a.example/post", " ".join(words))
    mirror = _doc("https://mirror.example/post", " ".join(words[:-1] + ["changed"]))
    assert dedupe_documents([first, mirror], threshold=0.9) == [first]


def test_distinct_documents_kept() -> None:
    a = _doc("https://a.example/1", " ".join(f"alpha{i}" for i in range(200)))
    b = _doc("https://a.example/2", " ".join(f"beta{i}" for i in range(200)))
    half = _doc("https://a.example/3", " ".join([f"alpha{i}" for i in range(100)] + [f"gamma{i}" for i in range(100)]))
    assert dedupe_documents([a, b, half], threshold=0.9) == [a, b, half]


def test_xhtml_with_xml_declaration() -> None:
    para = "Tensor memory accelerators copy tiles between global and shared memory asynchronously. " * 3
    body = f'<?xml version="1.0" encoding="utf-8"?>\n<html><body><article><p>{para}</p></article></body></html>'
    doc = extract(fetched(body.encode(), content_type="application/xhtml+xml"), resource())
    assert doc is not None and "Tensor memory accelerators" in doc.text


def test_not_modified_result_with_archived_body_is_extracted() -> None:
    doc = extract(fetched((PAGES / "article.html").read_bytes(), status="not-modified"), resource())
    assert doc is not None and doc.text.startswith("# Tiling Shared Memory for SGEMM")


def test_code_lines_broken_with_br_tags() -> None:
    para = "The launch configuration below uses one block per row of the matrix. " * 3
    code = "dim3 grid(N);<br>dim3 block(256);<br>k&lt;&lt;&lt;grid, block&gt;&gt;&gt;();"
    html = f"<html><body><article><p>{para}</p><pre>{code}</pre></article></body></html>"
    doc = extract(fetched(html.encode()), resource())
    assert doc is not None
    assert "```\ndim3 grid(N);\ndim3 block(256);\nk<<<grid, block>>>();\n```" in doc.text
