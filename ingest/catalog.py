"""The tiered reading list as `Resource` records.

Parses both formats the list has been published in:

* current: `- [Title](URL) - Authors. Note` under `## Topic` / `### Section` / `#### Tier N`;
* legend (older): `### Tier 1: Essential Tutorials` under `## 2. Matrix Multiplication (The Gateway)`,
  entries `📝 **Title** - Author 🔥` followed by `- [text](URL)` and `- description` bullets.

The bundled catalog (`ingest/data/catalog.json`) makes the app work with no network; `catalog sync`
writes an override into the data dir.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import unicodedata
from dataclasses import dataclass, field
from importlib import resources as package_files
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from core.errors import UserError
from core.files import atomic_write_text
from core.records import Resource
from core.settings import CrawlSettings, Settings
from core.urls import url_key

log = logging.getLogger(__name__)

LIST_ATTRIBUTION = (
    "Learning Guide: Performance Engineering for AI Infra, by the Wafer team "
    "(https://github.com/wafer-ai/gpu-perf-engineering-resources), MIT licence."
)
KINDS = ("paper", "blog", "docs", "repo", "book", "video", "community", "model", "site")
NON_RESOURCE_TOPICS = {
    "table of contents",
    "contents",
    "purpose",
    "how to read",
    "contributing",
    "license",
    "licence",
    "maintainer",
    "maintainers",
}
TYPE_EMOJI = {"📄": "paper", "📝": "blog", "🎥": "video", "📚": "book", "💻": "code"}
TAG_EMOJI = {"🔥": "favourite", "✨": "new"}
_TYPE_TO_KIND = {"paper": "paper", "blog": "blog", "video": "video", "book": "book", "code": "repo"}

_HEADING = re.compile(r"^(#{2,4})\s+(.+?)\s*#*\s*$")
_CURRENT_ENTRY = re.compile(r"^\s*[-*]\s+\[(?P<title>[^\]]+)\]\((?P<url>[^)\s]+)\)\s*(?:[-–—:]\s*(?P<note>.*))?$")
_LEGEND_ENTRY = re.compile(r"^\s*(?P<emoji>[📄📝🎥📚💻])\ufe0f?\s*\*\*(?P<title>.+?)\*\*\s*(?P<rest>.*)$")
_LINK_ONLY_BULLET = re.compile(r"^\s*[-*]\s+\[(?P<text>[^\]]*)\]\((?P<url>[^)\s]+)\)\s*$")
_BULLET = re.compile(r"^\s*[-*]\s+(?P<text>.+)$")
_MD_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)\)")
_TIER_HEADING = re.compile(r"^tier\s+(\d+)\s*(?::\s*(.*))?$", re.IGNORECASE)
_NUMBERED_TOPIC = re.compile(r"^\d+[.)]\s+")
_VENUE = re.compile(r"^(OSDI|SOSP|MLSys|NeurIPS|ICML|ICLR|ISCA|MICRO|CGO|PPoPP|SC|ASPLOS|HPCA)\b", re.IGNORECASE)
_NAME_PARTICLES = {"et", "al.", "al", "van", "de", "von", "der", "team"}
_NOT_NAME_WORDS = {"for", "of", "the", "with", "and", "to", "in", "on", "a", "an", "via", "from", "up"}


class CatalogError(UserError):
    """The list could not be used at all; the message is one line naming the input."""


@dataclass
class CatalogParse:
    resources: list[Resource]
    warnings: list[str] = field(default_factory=list)
    format: str = "current"


# --- helpers shared by both formats -------------------------------------------------------------


def github_anchor(heading: str) -> str:
    """GitHub's heading slug: lowercase, punctuation dropped, spaces to hyphens (no dedup suffix)."""
    text = heading.strip().lower()
    text = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return text.replace(" ", "-")


def resource_id(url: str, title: str) -> str:
    """A stable slug from the URL (from the title when the list gives no link)."""
    if url:
        parts = urlsplit(url)
        host = parts.netloc.lower().removeprefix("www.")
        base = host + parts.path.rstrip("/") + (f"-{parts.query}" if parts.query else "")
    else:
        base = "title-" + title
    slug = re.sub(r"[^a-z0-9]+", "-", unicodedata.normalize("NFKD", base).lower()).strip("-")
    if len(slug) > 80:
        digest = hashlib.sha1(base.encode()).hexdigest()[:8]
        slug = slug[:71].rstrip("-") + "-" + digest
    return slug or hashlib.sha1(base.encode()).hexdigest()[:12]


def infer_kind(url: str, title: str, entry_type: str | None = None) -> str:
    """Classify a resource from its host, path and title (the legend's type emoji breaks ties)."""
    if not url:
        return _TYPE_TO_KIND.get(entry_type or "", "blog")
    parts = urlsplit(url)
    host = parts.netloc.lower().removeprefix("www.")
    path = parts.path.rstrip("/")
    segments = [s for s in path.split("/") if s]
    low_title = title.lower()
    if host.endswith("arxiv.org") or host in {"openreview.net", "dl.acm.org"} or path.lower().endswith(".pdf"):
        return "paper"
    if host == "usenix.org" and "/conference/" in path:
        return "paper"
    if host == "github.com":
        return "repo" if len(segments) >= 2 else "community"
    if host == "huggingface.co":
        if segments and segments[0] in {"blog", "docs", "learn", "papers"}:
            return "blog" if segments[0] == "blog" else "docs"
        return "model"
    if host.startswith("discord.") or host in {"discord.gg", "discord.com", "reddit.com", "news.ycombinator.com"}:
        return "community"
    if host in {"youtube.com", "youtu.be", "vimeo.com"} or re.search(r"\b(talk|lecture video)\b", low_title):
        return "video"
    if "/books/" in path or host in {"oreilly.com", "manning.com"} or re.search(r"\btextbook\b", low_title):
        return "book"
    if host.startswith("docs.") or ".readthedocs." in host or "/docs/" in path or "/tutorials/" in path:
        return "docs"
    if "documentation" in low_title or "guide" in low_title and host.endswith("nvidia.com") and "/blog" not in path:
        return "docs"
    if not segments or (len(segments) == 1 and re.fullmatch(r"[A-Za-z]+", segments[0])):
        return "site"  # the root or one plain word (/blog, /index, /<product>) is a section landing page
    return "blog"


def _plain(text: str) -> str:
    """Markdown inline links to their text; emphasis and tag emoji dropped."""
    text = _MD_LINK.sub(lambda m: m.group(1), text)
    text = text.replace("**", "")
    for emoji in TAG_EMOJI:
        text = text.replace(emoji, "")
    return re.sub(r"\s+", " ", text).strip()


def split_authors(note: str) -> tuple[str, str]:
    """('Hwu, Kirk, El Hajj', 'The canonical textbook') from 'Hwu, Kirk, El Hajj. The canonical textbook'."""
    match = re.match(r"^(.*?\bet al\.)\s+(.*)$", note) or re.match(r"^(.*?)\.\s+(.*)$", note)
    if not match:
        return "", note
    prefix, rest = match.group(1).strip(), match.group(2).strip()
    words = prefix.split()
    if (
        not prefix
        or len(words) > 5
        or ":" in prefix
        or "(" in prefix
        or _VENUE.match(prefix)
        or any(w.lower() in _NOT_NAME_WORDS for w in words)
        or re.fullmatch(r"[\d\s.,%x+-]+", prefix)
        or (len(words) > 1 and not all(_looks_like_name_word(w) for w in words))
    ):
        return "", note
    return prefix, rest


def _looks_like_name_word(word: str) -> bool:
    """'Gordić', 'vLLM', 'al.' yes; 'kernels' no: multi-word author prefixes are capitalised names."""
    return any(ch.isupper() for ch in word) or word.lower().strip(",") in _NAME_PARTICLES


class _Headings:
    """Tracks the current topic/section/tier and GitHub's de-duplicated anchors."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}
        self.topic = ""
        self.section = ""
        self.anchor = ""
        self.tier: int | None = None

    def anchor_for(self, text: str) -> str:
        base = github_anchor(_plain(text))
        count = self.seen.get(base, 0)
        self.seen[base] = count + 1
        return f"#{base}" if count == 0 else f"#{base}-{count}"

    @property
    def in_resources(self) -> bool:
        return bool(self.topic) and bool(self.section) and self.topic.lower() not in NON_RESOURCE_TOPICS


# --- the two formats ---------------------------------------------------------------------------


def _detect_format(lines: list[str]) -> str:
    legend = sum(1 for line in lines if _LEGEND_ENTRY.match(line))
    current = sum(1 for line in lines if _CURRENT_ENTRY.match(line))
    return "legend" if legend > current else "current"


def parse_markdown(text: str, source: str = "<list>") -> CatalogParse:
    """Parse a tiered list. Raises CatalogError when it names no resource at all."""
    lines = text.splitlines()
    fmt = _detect_format(lines)
    parse = _parse_legend(lines, source) if fmt == "legend" else _parse_current(lines, source)
    parse.format = fmt
    if not parse.resources:
        raise CatalogError(f"{source}: no resources found; is this the tiered list's markdown?")
    parse.resources = _dedupe(parse.resources, parse.warnings, source)
    for warning in parse.warnings:
        log.warning(warning)
    return parse


def _heading(match: re.Match[str], state: _Headings, legend: bool) -> None:
    level, raw = len(match.group(1)), match.group(2)
    anchor = state.anchor_for(raw)
    title = _plain(raw)
    if level == 2:
        state.topic = _NUMBERED_TOPIC.sub("", title) if legend else title
        state.section, state.anchor, state.tier = "", "", None
    elif level == 3:
        tier = _TIER_HEADING.match(title) if legend else None
        if tier:
            state.tier = int(tier.group(1))
            state.section = (tier.group(2) or f"Tier {tier.group(1)}").strip()
        else:
            state.section, state.tier = title, None
        state.anchor = anchor
    elif level == 4:
        tier = _TIER_HEADING.match(title)
        state.tier = int(tier.group(1)) if tier else None


def _parse_current(lines: list[str], source: str) -> CatalogParse:
    state, out, warnings = _Headings(), [], []
    for lineno, line in enumerate(lines, start=1):
        if heading := _HEADING.match(line):
            _heading(heading, state, legend=False)
            continue
        if not state.in_resources or not line.lstrip().startswith(("- ", "* ")):
            continue
        entry = _CURRENT_ENTRY.match(line)
        if not entry or entry.group("url").startswith("#"):
            if not (entry and entry.group("url").startswith("#")):
                warnings.append(f"{source}:{lineno}: skipped malformed entry (expected '- [Title](URL) - note'): {line.strip()[:80]}")
            continue
        title, url = _plain(entry.group("title")), entry.group("url").strip()
        authors, note = split_authors(_plain(entry.group("note") or ""))
        out.append(_resource(title, url, authors, note, state, len(out)))
    return CatalogParse(out, warnings)


def _parse_legend(lines: list[str], source: str) -> CatalogParse:
    state, out, warnings = _Headings(), [], []
    pending: dict[str, Any] | None = None

    def flush() -> None:
        nonlocal pending
        if pending is not None:
            note = " ".join(d.rstrip(".") + "." for d in pending["notes"]).strip()
            out.append(
                _resource(
                    pending["title"], pending["url"], pending["authors"], note.rstrip("."), pending["state"],
                    len(out), entry_type=pending["type"], tags=pending["tags"],
                )
            )
        pending = None

    for lineno, line in enumerate(lines, start=1):
        if heading := _HEADING.match(line):
            flush()
            _heading(heading, state, legend=True)
            continue
        if not state.in_resources:
            continue
        if entry := _LEGEND_ENTRY.match(line):
            flush()
            rest = entry.group("rest").strip()
            tags = tuple(name for emoji, name in TAG_EMOJI.items() if emoji in rest)
            url, authors = "", ""
            byline = re.sub(r"^[-–—]\s*", "", rest)
            if link := _MD_LINK.search(byline):
                url = link.group(2)
                byline = byline.replace(link.group(0), "")
            authors = _plain(byline).strip(" -–—")
            snapshot = _Headings()
            snapshot.topic, snapshot.section, snapshot.tier, snapshot.anchor = (
                state.topic, state.section, state.tier, state.anchor,
            )
            pending = {
                "title": _plain(entry.group("title")), "url": url, "authors": authors, "notes": [],
                "type": TYPE_EMOJI[entry.group("emoji")], "tags": tags, "state": snapshot,
            }
            continue
        if pending is None:
            if line.lstrip().startswith(("- ", "* ")) and state.section:
                warnings.append(f"{source}:{lineno}: skipped bullet outside an entry: {line.strip()[:80]}")
            continue
        if link_only := _LINK_ONLY_BULLET.match(line):
            if not pending["url"]:
                pending["url"] = link_only.group("url")
            continue
        if bullet := _BULLET.match(line):
            pending["notes"].append(_plain(bullet.group("text")))
        elif line.strip() in {"---", "***"}:
            flush()
    flush()
    return CatalogParse(out, warnings)


def _resource(
    title: str, url: str, authors: str, note: str, state: _Headings, position: int,
    entry_type: str | None = None, tags: tuple[str, ...] = (),
) -> Resource:
    return Resource(
        id=resource_id(url, title), title=title, url=url, authors=authors, note=note,
        topic=state.topic, section=state.section, tier=state.tier,
        kind=infer_kind(url, title, entry_type), position=position, list_anchor=state.anchor,
        entry_type=entry_type, tags=tags,
    )


def _dedupe(resources: list[Resource], warnings: list[str], source: str) -> list[Resource]:
    seen_urls: dict[str, Resource] = {}
    seen_ids: set[str] = set()
    out: list[Resource] = []
    for res in resources:
        key = url_key(res.url)
        if key and key in seen_urls:
            warnings.append(f"{source}: duplicate URL {res.url} ({res.title!r}) kept once, as {seen_urls[key].title!r}")
            continue
        if res.id in seen_ids:  # two link-less entries with one title
            warnings.append(f"{source}: duplicate entry {res.title!r} kept once")
            continue
        if key:
            seen_urls[key] = res
        seen_ids.add(res.id)
        out.append(Resource(**{**res.__dict__, "position": len(out)}))
    return out


# --- loading and storing -----------------------------------------------------------------------


def read_list_text(source: str, crawl: CrawlSettings | None = None) -> str:
    """The markdown of a list given as a path or an http(s) URL.

    A URL goes through the crawler's SSRF guard on every redirect hop: a list URL a user pastes must
    not reach loopback, private or link-local hosts (e.g. a cloud metadata endpoint).
    """
    if re.match(r"^[a-z][a-z0-9+.-]*://", source, re.IGNORECASE):
        return _download_list(source, crawl or CrawlSettings())
    path = Path(source).expanduser()
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CatalogError(f"{source}: no such file; pass the tiered list's README.md") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"{source}: cannot read the list ({exc.__class__.__name__}: {exc})") from None


def _download_list(url: str, crawl: CrawlSettings) -> str:
    import httpx

    from ingest.netguard import AddressBook, check_url_sync, pinned_sync_transport

    timeout = httpx.Timeout(crawl.read_timeout_s, connect=crawl.connect_timeout_s)
    headers = {"User-Agent": crawl.user_agent}
    book = AddressBook()  # connections go to the addresses the guard approved (no second DNS lookup)
    transport = pinned_sync_transport(crawl, book)
    with httpx.Client(timeout=timeout, headers=headers, follow_redirects=False, transport=transport, trust_env=False) as client:
        for _ in range(crawl.max_redirects + 1):
            refused = check_url_sync(url, crawl, book)
            if refused:
                raise CatalogError(f"{url}: refused ({refused}); pass a public http(s) URL or a local file")
            try:
                response = client.get(url)
            except httpx.HTTPError as exc:
                raise CatalogError(f"{url}: cannot download the list ({exc.__class__.__name__}); check the URL or pass a local file") from None
            if response.is_redirect and "location" in response.headers:
                url = str(response.url.join(response.headers["location"]))
                continue
            if response.status_code != 200:
                raise CatalogError(f"{url}: cannot download the list (HTTP {response.status_code})")
            if len(response.content) > crawl.max_body_bytes:
                raise CatalogError(f"{url}: the list is larger than crawl.max_body_bytes")
            return response.text
    raise CatalogError(f"{url}: too many redirects")


def parse_source(source: str, crawl: CrawlSettings | None = None) -> CatalogParse:
    return parse_markdown(read_list_text(source, crawl), source)


def catalog_payload(resources: list[Resource], source: str) -> dict[str, Any]:
    return {
        "source": source,
        "attribution": LIST_ATTRIBUTION,
        "license": "MIT",
        "count": len(resources),
        "resources": [r.to_dict() for r in resources],
    }


def _load_json(text: str, where: str) -> list[Resource]:
    try:
        data = json.loads(text)
        return [Resource.from_dict(item) for item in data["resources"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise CatalogError(
            f"{where}: corrupt catalog file ({exc.__class__.__name__}); run 'gpuguide catalog sync --from LIST'"
        ) from None


def bundled_catalog() -> list[Resource]:
    text = package_files.files("ingest").joinpath("data/catalog.json").read_text(encoding="utf-8")
    return _load_json(text, "bundled catalog")


def load_catalog(source: str | None = None, synced_file: Path | None = None) -> list[Resource]:
    """The catalog in use: an explicit source, else the synced copy in the data dir, else the bundled one."""
    if source:
        return parse_source(source).resources
    if synced_file is not None and synced_file.exists():
        return _load_json(synced_file.read_text(encoding="utf-8"), str(synced_file))
    return bundled_catalog()


def current_catalog(settings: Settings) -> list[Resource]:
    """The catalog every command and the app use: `catalog.source` if set, else the synced copy, else the bundled list."""
    return load_catalog(settings.catalog.source, synced_file=settings.catalog_file)


def sync_catalog(
    source: str, target: Path, force: bool = False, max_shrink: float = 0.5, crawl: CrawlSettings | None = None
) -> CatalogParse:
    """Re-parse a list into the data dir, atomically; refuse a list that lost too many entries."""
    parse = parse_source(source, crawl)
    previous = load_catalog(synced_file=target)
    if not force and previous and len(parse.resources) < len(previous) * (1 - max_shrink):
        raise CatalogError(
            f"{source}: has {len(parse.resources)} resources, the catalog in use has {len(previous)}; "
            "refusing to drop that many (pass --force if the list really shrank)"
        )
    atomic_write_text(target, json.dumps(catalog_payload(parse.resources, source), ensure_ascii=False, indent=1))
    return parse


def filter_resources(
    resources: list[Resource], tier: int | None = None, topic: str | None = None, kind: str | None = None
) -> list[Resource]:
    """Case-insensitive substring match on topic; exact tier and kind."""
    out = resources
    if tier is not None:
        out = [r for r in out if r.tier == tier]
    if topic:
        out = [r for r in out if topic.lower() in r.topic.lower()]
    if kind:
        out = [r for r in out if r.kind == kind.lower()]
    return out
