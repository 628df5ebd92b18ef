"""Inlink text for resources known only by their card: what other crawled pages say when they link to them.

Why: a resource whose page could not be fetched (paywall, login wall, JavaScript site, a PDF that will not
parse) has only its one-line card, and a learner who describes it in other words does not find it. Pages that
were fetched often link to it, and the anchor text and the sentence around each such link describe it in other
people's words, as web search engines use inlinks. The list's own context adds the entries listed next to it
in the same section.

The links are read from the raw fetched HTML (the extracted text keeps no links), outside page chrome (nav,
header, footer, menus), and kept per page in the data dir (`inlinks.json`), so a partial crawl or a catalog
refresh rebuilds the same cards. Links are matched by URL key (core/urls.py).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin

from lxml import html as lxml_html

from core.files import atomic_write_text
from core.records import FetchResult, Resource
from core.urls import url_key

log = logging.getLogger(__name__)

INLINKS_FILE = "inlinks.json"
SENTENCE_WORDS = 40  # words of context kept around one link
_CHROME_TAGS = ("nav", "header", "footer", "aside", "script", "style", "noscript", "form", "button")
_CHROME_CLASS = re.compile(r"\b(?:nav|navbar|menu|footer|cookie|banner|sidebar|breadcrumbs?|share|subscribe)\b", re.I)
_BLOCKS = {"p", "li", "td", "th", "dd", "dt", "blockquote", "figcaption", "h1", "h2", "h3", "h4", "h5", "h6", "div"}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_MD_LINK = re.compile(r"\[([^\]\n]{1,200})\]\((https?://[^)\s]+)\)")


@dataclass(frozen=True)
class OutLink:
    """One link of a crawled page: where it points (URL key), its anchor text and the sentence around it."""

    target: str
    anchor: str
    sentence: str


def _clean(text: str) -> str:
    return " ".join(text.split())


def _around(block: str, anchor: str) -> str:
    """The sentence of `block` that holds the anchor, cut to SENTENCE_WORDS words centred on it."""
    sentences = _SENTENCE_END.split(block) or [block]
    sentence = next((s for s in sentences if anchor and anchor in s), sentences[0])
    words = sentence.split()
    if len(words) <= SENTENCE_WORDS:
        return sentence
    at = len(sentence[: max(sentence.find(anchor), 0)].split())
    start = max(0, min(at - SENTENCE_WORDS // 2, len(words) - SENTENCE_WORDS))
    return " ".join(words[start : start + SENTENCE_WORDS])


def _is_chrome(element: lxml_html.HtmlElement) -> bool:
    return element.tag in _CHROME_TAGS or bool(_CHROME_CLASS.search(f"{element.get('class', '')} {element.get('id', '')}"))


def html_links(body: bytes | str, page_url: str) -> list[OutLink]:
    """Links of an HTML page outside its chrome, each with its anchor and surrounding sentence."""
    try:
        root = lxml_html.fromstring(body)
    except (ValueError, lxml_html.etree.ParserError):
        return []
    for element in list(root.iter(*_CHROME_TAGS)) + [e for e in root.iter("div", "section", "ul") if _is_chrome(e)]:
        if element.getparent() is not None:
            element.drop_tree()
    out = []
    for a in root.iter("a"):
        href, anchor = a.get("href") or "", _clean(a.text_content())
        if not href or href.startswith(("#", "mailto:", "javascript:")) or not anchor:
            continue
        block = a.getparent()
        while block is not None and block.tag not in _BLOCKS:
            block = block.getparent()
        context = _clean(block.text_content()) if block is not None else anchor
        out.append(OutLink(url_key(urljoin(page_url, href)), anchor, _around(context, anchor)))
    return out


def markdown_links(text: str) -> list[OutLink]:
    """`[anchor](url)` links of a markdown page, each with the paragraph sentence around it."""
    out = []
    for paragraph in re.split(r"\n\s*\n", text):
        plain = _clean(_MD_LINK.sub(r"\1", paragraph))
        for match in _MD_LINK.finditer(paragraph):
            anchor = _clean(match.group(1))
            out.append(OutLink(url_key(match.group(2)), anchor, _around(plain, anchor)))
    return out


def page_links(result: FetchResult) -> list[OutLink]:
    """The outgoing links of one fetched page (HTML or markdown; other bodies have none we read)."""
    kind = result.content_type.lower()
    page = result.final_url or result.url
    if "markdown" in kind or page.endswith(".md"):
        return markdown_links(result.body.decode("utf-8", "replace"))
    if "html" in kind or result.body[:200].lstrip().lower().startswith((b"<!doctype html", b"<html")):
        return html_links(result.body, page)
    return []


# --- kept per page in the data dir ---------------------------------------------------------------


def load_links(path: Path) -> dict[str, dict]:
    """page URL → {"resource_id", "links": [[target, anchor, sentence], ...]}; empty when none kept yet."""
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("pages", {})
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("ignoring unreadable %s (%s); inlinks are rebuilt at the next crawl", path, exc)
        return {}


def update_links(path: Path, fetched: Iterable[FetchResult], catalog_ids: set[str]) -> dict[str, dict]:
    """Replace the kept links of every page fetched with a body now, drop pages of resources no longer in the
    catalog, write the file atomically and return what it holds (a page not fetched this time keeps its links)."""
    pages = {url: p for url, p in load_links(path).items() if p.get("resource_id") in catalog_ids}
    for result in fetched:
        if result.status == "ok" and result.body and result.resource_id in catalog_ids:
            links = page_links(result)
            pages[result.final_url or result.url] = {
                "resource_id": result.resource_id,
                "links": [[link.target, link.anchor, link.sentence] for link in links],
            }
    atomic_write_text(path, json.dumps({"version": 1, "pages": pages}, ensure_ascii=False))
    return pages


def continued_pages(pages: Mapping[str, dict]) -> set[str]:
    """Keys (core.urls.url_key) of the kept pages that are the opening page of a multi-page document: they
    link onward ("next ...") to a page under their own path that was not fetched ("next 1. Introduction" on a
    manual's landing page). Its words are then a small part of the document's."""
    kept = {url_key(url) for url in pages}
    out: set[str] = set()
    for url, page in pages.items():
        own = url_key(url)
        for target, anchor, _ in page.get("links", []):
            if _NEXT_ANCHOR.match(anchor or "") and target.startswith(own + "/") and url_key(target) not in kept:
                out.add(own)
                break
    return out


_NEXT_ANCHOR = re.compile(r"\s*next\b", re.IGNORECASE)


# --- what a card gets ----------------------------------------------------------------------------


def inlink_lines(pages: Mapping[str, dict], resources: Sequence[Resource], wanted: set[str], most: int) -> dict[str, list[str]]:
    """Per wanted resource id, up to `most` distinct lines "anchor: sentence" from pages of other resources
    that link to its URL (the sentence alone when it already holds the anchor)."""
    by_key: dict[str, str] = {url_key(r.url): r.id for r in resources if r.url and r.id in wanted}
    out: dict[str, list[str]] = {}
    for page in sorted(pages):
        source = pages[page]
        for target, anchor, sentence in source.get("links", []):
            rid = by_key.get(target)
            if rid is None or rid == source.get("resource_id"):
                continue
            line = sentence if anchor in sentence else f"{anchor}: {sentence}"
            lines = out.setdefault(rid, [])
            if line not in lines and len(lines) < most:
                lines.append(line)
    return out


def neighbour_lines(resources: Sequence[Resource], wanted: set[str], each_side: int) -> dict[str, list[str]]:
    """Per wanted resource id, the entries listed next to it in the same list section (title and note)."""
    out: dict[str, list[str]] = {}
    if each_side <= 0:
        return out
    for i, res in enumerate(resources):
        if res.id not in wanted:
            continue
        near = resources[max(0, i - each_side) : i] + resources[i + 1 : i + 1 + each_side]
        same = [r for r in near if (r.topic, r.section) == (res.topic, res.section)]
        if same:
            out[res.id] = [f"{r.title}: {r.note}" if r.note else r.title for r in same]
    return out


def card_enrichment(
    pages: Mapping[str, dict], resources: Sequence[Resource], card_only: set[str], inlinks: int, neighbours: int
) -> dict[str, str]:
    """Text added to the card chunk of each card-only resource: inlink lines, then the list's neighbours."""
    links = inlink_lines(pages, resources, card_only, inlinks) if inlinks > 0 else {}
    near = neighbour_lines(resources, card_only, neighbours)
    out = {}
    for rid in card_only:
        parts = []
        if links.get(rid):
            parts.append("Pages that link here say:\n" + "\n".join(f"- {line}" for line in links[rid]))
        if near.get(rid):
            parts.append("Listed beside it in the guide:\n" + "\n".join(f"- {line}" for line in near[rid]))
        if parts:
            out[rid] = "\n".join(parts)
    return out


def stored_enrichment(home_file: Path, resources: Sequence[Resource], card_only: set[str], inlinks: int,
                      neighbours: int) -> dict[str, str]:
    """`card_enrichment` from the links kept in the data dir (a catalog refresh, nothing crawled)."""
    return card_enrichment(load_links(home_file), resources, card_only, inlinks, neighbours)
