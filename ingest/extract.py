"""Fetched bytes → clean `Document` text (markdown-ish), one format per helper.

HTML goes through trafilatura (main text, no nav/footer/cookie banners). trafilatura flattens
`<pre>` blocks (blank lines and the language go missing), so each `<pre>` is swapped for a
placeholder before extraction and put back afterwards as a fenced block holding the exact code.
PDFs go through pypdf; READMEs and plain text are kept as they are. Near-duplicate pages
(mirrors, the same README twice) are dropped by Jaccard similarity of word shingles.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import lxml.html
import trafilatura
from lxml import etree
from trafilatura.metadata import extract_metadata
from trafilatura.settings import use_config

from core.decode import decode_body
from core.records import Document, FetchResult, Resource
from core.settings import ChunkSettings

log = logging.getLogger(__name__)

EXTRACTOR_VERSION = "1"
# Between the pages of a PDF's text (empty pages too): a form feed, then a paragraph break, so chunking still
# splits there and a chunk's page is 1 + the form feeds before it (ingest/chunk.py, assistant/fragments.py).
PAGE_BREAK = "\f\n\n"

_USABLE_STATUSES = ("ok", "not-modified")  # a 304 result carries the archived body
_TEXT_TYPES = {"text/markdown", "text/x-markdown", "text/plain", "text/x-rst", "text/prs.fallenstein.rst"}
_TEXT_SUFFIXES = (".md", ".markdown", ".rst", ".txt")
_HTML_TYPES = {"text/html", "application/xhtml+xml"}
_GENERIC_TITLES = {"", "readme", "readme.md", "index", "home", "untitled"}
_DROP_TAGS = ("script", "style", "noscript", "template", "iframe", "object", "embed", "svg", "canvas")
_LANG_CLASS = re.compile(r"(?:^|\s)(?:language|lang|highlight|sourceCode)-([A-Za-z0-9_+#.-]+)")
_SPHINX_LANG = re.compile(r"(?:^|\s)code\s+([A-Za-z0-9_+#-]+)(?:\s|$)")
# Menus, footers, banners and consent dialogs, plus arXiv's "Title:"/"Abstract:" labels. A <header>
# inside the article (a post's title block) stays; site headers sit outside <article>/<main>.
_CHROME = etree.XPath(
    "//nav | //footer | //aside | //form | //dialog"
    " | //*[@role='navigation' or @role='contentinfo' or @role='banner' or @role='search'"
    " or @role='dialog' or @role='alertdialog']"
    " | //header[not(ancestor::article or ancestor::main)]"
    " | //*[contains(translate(@class, 'COKIENSTGDPR', 'cokienstgdpr'), 'cookie')"
    " or contains(translate(@id, 'COKIENSTGDPR', 'cokienstgdpr'), 'cookie')"
    " or contains(translate(@class, 'COKIENSTGDPR', 'cokienstgdpr'), 'consent')"
    " or contains(translate(@id, 'COKIENSTGDPR', 'cokienstgdpr'), 'consent')"
    " or contains(translate(@class, 'COKIENSTGDPR', 'cokienstgdpr'), 'gdpr')]"
    " | //*[contains(concat(' ', normalize-space(@class), ' '), ' descriptor ')]"
)
# Below MIN_EXTRACTED_SIZE characters trafilatura swaps its result for a whole-page fallback that
# flattens short pages (an abstract, a talk page) to one line; chrome is pruned first, so trust it.
_TRAFILATURA_CONFIG = use_config()
_TRAFILATURA_CONFIG.set("DEFAULT", "MIN_EXTRACTED_SIZE", "25")
_TOKEN = "GGCODEBLOCK{:05d}X"
_TOKEN_RE = re.compile(r"GGCODEBLOCK(\d{5})X")
_FENCED_TOKEN = re.compile(r"(?m)^[ \t]*(`{3,}|~{3,})[^\n]*\n\s*GGCODEBLOCK(\d{5})X\s*\n[ \t]*\1[ \t]*$")
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
_MD_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class _Page:
    text: str
    title: str = ""
    authors: str = ""
    date: str = ""


def content_hash(text: str) -> str:
    """sha256 of the extracted text: equal hashes mean nothing downstream needs redoing."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def body_hash(body: bytes) -> str:
    """sha256 of the fetched bytes: lets an incremental run skip extraction of unchanged pages."""
    return hashlib.sha256(body).hexdigest()


# --- format detection --------------------------------------------------------------------------


def detect_format(fetched: FetchResult) -> str | None:
    """'html', 'pdf' or 'markdown' from the Content-Type, the URL and the first bytes."""
    mime = (fetched.content_type or "").split(";")[0].strip().lower()
    url = fetched.final_url or fetched.url
    parts = urlsplit(url)
    head = fetched.body[:1024].lstrip().lower()
    if mime == "application/pdf" or fetched.body.startswith(b"%PDF") or parts.path.lower().endswith(".pdf"):
        return "pdf"
    if parts.netloc.lower() == "raw.githubusercontent.com" or mime in _TEXT_TYPES:
        return "markdown"
    if mime in _HTML_TYPES or head.startswith((b"<!doctype html", b"<html", b"<?xml")) or b"<body" in head:
        return "html"
    if not mime and parts.path.lower().endswith(_TEXT_SUFFIXES):
        return "markdown"
    return None


# --- HTML --------------------------------------------------------------------------------------


def _code_language(pre: lxml.html.HtmlElement) -> str:
    for el in [pre, *pre.iterchildren("code")]:
        classes = el.get("class") or ""
        if match := _LANG_CLASS.search(classes) or _SPHINX_LANG.search(classes):
            return match.group(1).lower()
    parent = pre.getparent()
    if parent is not None and (match := _LANG_CLASS.search(parent.get("class") or "")):
        return match.group(1).lower()
    return ""


def _fence(code: str, language: str) -> str:
    """A fenced block longer than any backtick run inside the code, so the fence cannot close early."""
    longest = max((len(run) for run in re.findall(r"`{3,}", code)), default=2)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{code}\n{ticks}"


def _protect_code(tree: lxml.html.HtmlElement) -> list[str]:
    """Swap every `<pre>` for a placeholder; return the fenced blocks, indexed by placeholder number."""
    blocks: list[str] = []
    for pre in tree.iter("pre"):
        if "lineno" in (pre.get("class") or ""):  # line-number gutters of highlighted code
            pre.drop_tree()
            continue
        for br in pre.iter("br"):  # some highlighters break lines with <br>
            br.tail = "\n" + (br.tail or "")
        code = pre.text_content().replace("\r\n", "\n").replace("\xa0", " ").strip("\n").rstrip()
        if not code.strip():
            continue
        token = _TOKEN.format(len(blocks))
        blocks.append(_fence(code, _code_language(pre)))
        for child in list(pre):
            pre.remove(child)
        pre.text = token
    return blocks


def _clean_tree(tree: lxml.html.HtmlElement) -> None:
    """Drop page chrome before trafilatura sees it.

    trafilatura already skips most of it, but on a page whose article is short or empty it falls
    back to whole-page heuristics and returns the menus; removing them first leaves nothing to leak.
    """
    for el in list(tree.iter(*_DROP_TAGS)):
        el.drop_tree()
    for el in _CHROME(tree):
        if el.getparent() is not None:
            el.drop_tree()


def _restore_code(text: str, blocks: list[str]) -> tuple[str, int]:
    """Put the protected code back as fenced blocks; returns the text and how many came back."""
    restored: set[int] = set()

    def fenced(match: re.Match[str]) -> str:
        index = int(match.group(2))
        restored.add(index)
        return blocks[index]

    def bare(match: re.Match[str]) -> str:
        index = int(match.group(1))
        restored.add(index)
        return f"\n\n{blocks[index]}\n\n"

    text = _FENCED_TOKEN.sub(fenced, text)
    text = _TOKEN_RE.sub(bare, text)
    return text, len(restored)


def _normalise_markdown(text: str) -> str:
    """Unix newlines, no trailing spaces, at most one blank line, blank lines around fences."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = re.sub(r"[ \t]+\n", "\n", text)
    # trafilatura glues consecutive code blocks ("```\n```"); a blank line keeps them apart.
    text = re.sub(r"(?m)^(```[^\n]*)\n(GGCODEBLOCK)", r"\1\n\2", text)
    text = re.sub(r"(?m)^(`{3,})\n(`{3,})", r"\1\n\n\2", text)
    # Multi-line inline code inside a list item comes out as "1. Step ```" : fences start a line.
    text = re.sub(r"(?m)^([^`\n]*\S)[ \t]*(```)[ \t]*$", r"\1\n\2", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _meta_authors(value: str | None) -> str:
    return ", ".join(part.strip() for part in (value or "").split(";") if part.strip())


def extract_html(html: str, url: str = "") -> _Page | None:
    """Main text of an HTML page as markdown, with code blocks intact, plus title/author/date."""
    html = _XML_DECLARATION.sub("", html, count=1)  # lxml refuses str input that declares an encoding
    try:
        tree = lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError) as exc:
        log.info("%s: unparsable HTML (%s)", url, exc)
        return None
    try:
        meta = extract_metadata(
            lxml.html.document_fromstring(html), default_url=url or None,
            date_config={"original_date": True, "extensive_search": False},
        )
    except Exception as exc:  # metadata is a bonus; a quirk there must not lose the text
        log.debug("%s: metadata extraction failed (%s)", url, exc)
        meta = None
    html_title = (tree.findtext(".//title") or "").strip()
    _clean_tree(tree)
    blocks = _protect_code(tree)
    text = trafilatura.extract(
        tree, url=url or None, output_format="markdown", include_formatting=True, include_tables=True,
        include_links=False, include_images=False, include_comments=False, deduplicate=False,
        config=_TRAFILATURA_CONFIG,
    )
    if not text:
        return None
    text, restored = _restore_code(_normalise_markdown(text), blocks)
    if restored < len(blocks):
        log.debug("%s: %d of %d code blocks were outside the main text", url, len(blocks) - restored, len(blocks))
    title = (meta.title if meta else "") or ""
    if title.strip().lower() in _GENERIC_TITLES:
        title = html_title
    return _Page(
        text=re.sub(r"\n{3,}", "\n\n", text).strip(),
        title=title.strip(),
        authors=_meta_authors(meta.author if meta else ""),
        date=(meta.date if meta else "") or "",
    )


# --- PDF and plain text ------------------------------------------------------------------------


def extract_pdf(body: bytes, url: str = "", max_pages: int = 500) -> _Page | None:
    """Text of a PDF, its pages separated by PAGE_BREAK. Any parser error means no document, never an exception."""
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(body), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            log.info("%s: encrypted PDF, skipped", url)
            return None
        pages = [page.extract_text() or "" for page in reader.pages[:max_pages]]
        info = reader.metadata
        title = str(info.title or "") if info else ""
        authors = str(info.author or "") if info else ""
    except Exception as exc:  # pypdf raises many types on broken files; all mean 'unreadable'
        log.info("%s: unreadable PDF (%s: %s)", url, exc.__class__.__name__, exc)
        return None
    text = PAGE_BREAK.join(re.sub(r"[ \t]+\n", "\n", p.replace("\f", " ")).strip() for p in pages).strip(" \t\n")
    return _Page(text=text, title=title.strip(), authors=authors.strip())


def extract_markdown(text: str) -> _Page:
    """READMEs and plain text are already what chunking wants; only the newlines are normalised."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    heading = _MD_HEADING.search(text)
    return _Page(text=text, title=heading.group(1).strip() if heading else "")


# --- the stage ---------------------------------------------------------------------------------


def extract(
    fetched: FetchResult, resource: Resource, settings: ChunkSettings | None = None
) -> Document | None:
    """One fetched page as a Document, or None (with the reason logged) when nothing usable came."""
    settings = settings or ChunkSettings()
    url = fetched.final_url or fetched.url
    if fetched.status not in _USABLE_STATUSES or not fetched.body:
        log.info("%s: nothing to extract (status %s%s)", fetched.url, fetched.status,
                 ", empty body" if fetched.status in _USABLE_STATUSES else "")
        return None
    fmt = detect_format(fetched)
    if fmt == "pdf":
        page = extract_pdf(fetched.body, url, settings.max_pdf_pages)
    elif fmt == "markdown":
        page = extract_markdown(decode_body(fetched.body, fetched.content_type))
    elif fmt == "html":
        page = extract_html(decode_body(fetched.body, fetched.content_type), url)
    else:
        log.info("%s: unsupported content type %r", fetched.url, fetched.content_type)
        return None
    if page is None:
        log.info("%s: no main text found", fetched.url)
        return None
    words = len(_WORD.findall(page.text))
    if words < settings.min_document_words:
        log.info("%s: only %d words of text (< %d), skipped", fetched.url, words, settings.min_document_words)
        return None
    return Document(
        resource_id=resource.id or fetched.resource_id,
        url=fetched.url,
        title=page.title or resource.title,
        text=page.text,
        authors=page.authors or resource.authors,
        date=page.date,
        source_kind=fmt,
        content_hash=content_hash(page.text),
    )


# --- near duplicates ---------------------------------------------------------------------------


def shingles(text: str, size: int = 5) -> set[int]:
    """Hashed word n-grams; a text shorter than `size` words is one shingle."""
    words = [w.lower() for w in _WORD.findall(text)]
    if len(words) <= size:
        return {hash(" ".join(words))} if words else set()
    return {hash(" ".join(words[i : i + size])) for i in range(len(words) - size + 1)}


def jaccard(a: set[int], b: set[int]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def dedupe_documents(docs: Iterable[Document], threshold: float = 0.9) -> list[Document]:
    """Keep the first of each group of near-identical texts (Jaccard of 5-word shingles ≥ threshold)."""
    kept: list[tuple[Document, set[int]]] = []
    for doc in docs:
        sh = shingles(doc.text)
        duplicate_of = None
        for other, other_sh in kept:
            small, large = sorted((len(sh), len(other_sh)))
            if large and small / large < threshold:  # Jaccard ≤ |small|/|large|: cannot reach it
                continue
            if doc.content_hash and doc.content_hash == other.content_hash or jaccard(sh, other_sh) >= threshold:
                duplicate_of = other
                break
        if duplicate_of is not None:
            log.info("%s: near-duplicate of %s, dropped", doc.url, duplicate_of.url)
            continue
        kept.append((doc, sh))
    return [doc for doc, _ in kept]
