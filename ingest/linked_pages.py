"""Linked pages: the pages to fetch behind a catalog URL, the ones a learner actually needs.

Pure functions over a URL and (for multi-part posts) the fetched page text; no network here.

* an arXiv abstract page → the paper's PDF (`/pdf/<id>`), since the abstract alone is thin;
* a GitHub repository page → its README as raw markdown, much cleaner than the rendered page;
* a post that is one part of a series ("Part 1", "Parts 1-3") → same-site links to its other parts,
  only when `crawl.follow_depth >= 1`.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import SplitResult, urljoin, urlsplit, urlunsplit

from core.settings import CrawlSettings
from core.urls import url_key

MAX_PART_LINKS = 10

_ARXIV_ABS = re.compile(r"^/abs/(?P<id>(?:\d{4}\.\d{4,5}|[a-z.-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?)/?$", re.IGNORECASE)
# github.com/<name> pages that are not user or organisation accounts.
_GITHUB_RESERVED = frozenset(
    {
        "about", "apps", "collections", "contact", "customer-stories", "enterprise", "events", "explore",
        "features", "login", "join", "marketplace", "new", "notifications", "orgs", "organizations",
        "pricing", "readme", "search", "security", "settings", "site", "sponsors", "topics", "trending",
        "users",
    }
)
_SERIES_MENTION = re.compile(
    r"\bparts?\s+(?:\d+|one|two|three|four|five|i{1,3}|iv|v)\b(?:\s*(?:of|[-–—&,]|to|and)\s*\d+)?",
    re.IGNORECASE,
)
_PART_LINK_TEXT = re.compile(r"\bpart\s*(?:\d+|one|two|three|four|five|six|i{1,3}|iv|vi?)\b", re.IGNORECASE)
_PART_LINK_PATH = re.compile(r"part[-_]?(?:\d+|one|two|three|four|five|six|i{1,3}|iv|vi?)(?:\b|[-_/.])", re.IGNORECASE)


def _split(url: str) -> SplitResult | None:
    """urlsplit that gives None for a malformed URL (a bad IPv6 bracket) instead of raising."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018  (raises for a non-numeric port)
    except ValueError:
        return None
    return parts


def arxiv_pdf_url(url: str) -> str | None:
    """https://arxiv.org/abs/2402.13499v2 → https://arxiv.org/pdf/2402.13499v2 (else None)."""
    parts = _split(url)
    if parts is None:
        return None
    host = (parts.hostname or "").lower().removeprefix("www.")
    if host not in {"arxiv.org", "export.arxiv.org"}:
        return None
    match = _ARXIV_ABS.match(parts.path)
    if not match:
        return None
    return urlunsplit((parts.scheme or "https", parts.netloc, f"/pdf/{match.group('id')}", "", ""))


def github_readme_url(url: str) -> str | None:
    """https://github.com/owner/repo → its README at HEAD on raw.githubusercontent.com (else None).

    Only a repository's front page counts: deeper paths (issues, a file, a tree) are not followed.
    """
    parts = _split(url)
    if parts is None:
        return None
    host = (parts.hostname or "").lower().removeprefix("www.")
    if host != "github.com":
        return None
    segments = [s for s in parts.path.split("/") if s]
    if len(segments) != 2 or segments[0].lower() in _GITHUB_RESERVED:
        return None
    owner, repo = segments[0], segments[1].removesuffix(".git")
    if not repo:
        return None
    return f"https://raw.githubusercontent.com/{owner}/{repo}/HEAD/README.md"


class _LinkParser(HTMLParser):
    """Collects <title>, headings and <a href> links with their text; tolerant of broken markup."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.links: list[tuple[str, str]] = []
        self.text_parts: list[str] = []
        self._in_title = False
        self._href: str | None = None
        self._anchor_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag == "a":
            self._close_anchor()
            self._href = dict(attrs).get("href") or None
            self._anchor_text = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag == "a":
            self._close_anchor()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if self._href is not None:
            self._anchor_text.append(data)
        self.text_parts.append(data)

    def _close_anchor(self) -> None:
        if self._href is not None:
            self.links.append((self._href, " ".join("".join(self._anchor_text).split())))
        self._href = None

    def close(self) -> None:
        super().close()
        self._close_anchor()


def _site(url: str) -> str:
    parts = _split(url)
    return (parts.hostname or "").lower().removeprefix("www.") if parts else ""


def _without_fragment(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))


def is_series_page(html: str) -> bool:
    """Whether a page says it is one part of a series ('Part 1', 'Part 2 of 3', 'Parts 1-3')."""
    parser = _LinkParser()
    parser.feed(html)
    parser.close()
    return bool(_SERIES_MENTION.search(parser.title) or _SERIES_MENTION.search(" ".join(parser.text_parts)))


def series_part_links(page_url: str, html: str, same_site: bool = True) -> list[str]:
    """Links from a series page to its other parts, in page order, deduplicated.

    A link counts when its text or its path names a part ('Part 2', '/part-3/'); the page itself,
    non-http(s) links and (with `same_site`) links to other sites are dropped.
    """
    parser = _LinkParser()
    parser.feed(html)
    parser.close()
    if not (_SERIES_MENTION.search(parser.title) or _SERIES_MENTION.search(" ".join(parser.text_parts))):
        return []
    here = url_key(page_url)
    out: list[str] = []
    for href, text in parser.links:
        try:
            target = _without_fragment(urljoin(page_url, href.strip()))
        except ValueError:
            continue  # a malformed href
        parts = _split(target)
        if parts is None or parts.scheme not in ("http", "https") or url_key(target) == here:
            continue
        if same_site and _site(target) != _site(page_url):
            continue
        if not (_PART_LINK_TEXT.search(text) or _PART_LINK_PATH.search(parts.path)):
            continue
        if target not in out:
            out.append(target)
        if len(out) >= MAX_PART_LINKS:
            break
    return out


def url_followups(url: str, crawl: CrawlSettings) -> list[str]:
    """Follow-ups known from the URL alone (arXiv PDF, GitHub README), as the settings allow."""
    found: list[str] = []
    if crawl.follow_arxiv_pdf and (pdf := arxiv_pdf_url(url)):
        found.append(pdf)
    if crawl.follow_github_readme and (readme := github_readme_url(url)):
        found.append(readme)
    return found


def page_followups(page_url: str, html: str, content_type: str, crawl: CrawlSettings) -> list[str]:
    """Follow-ups found in a fetched page (other parts of a series), as the settings allow."""
    if crawl.follow_depth < 1 or not content_type.startswith(("text/html", "application/xhtml+xml")):
        return []
    return series_part_links(page_url, html, same_site=crawl.same_site)
