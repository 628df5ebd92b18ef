"""The polite crawler: catalog `Resource`s in, one `FetchResult` per URL out (follow-ups included).

Politeness and safety come first because the URLs are third-party input: robots.txt is obeyed,
requests to one host are limited and spaced out, every URL and redirect hop passes the SSRF guard,
bodies are size-capped while streaming, and only text/HTML/PDF is accepted. Every response goes
into the WARC archive as it arrives, which is also what makes a killed crawl resumable and an
offline run (`replay`) possible.

Statuses: `ok`, `not-modified` (304 to a conditional re-fetch; the body is the archived copy),
`failed` (with `reason`), `robots-disallowed`, `skipped-offline` (replay: not in the archives).
A resource with an empty URL gets `failed` with reason "no URL" and is not archived.
"""

from __future__ import annotations

import asyncio
import codecs
import logging
import re
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from email.message import Message
from email.utils import parsedate_to_datetime
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx
from protego import Protego
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
)
from tqdm import tqdm

from core.decode import decode_body, detect_charset
from core.records import FetchResult, Resource
from core.settings import CrawlSettings, Settings
from core.urls import url_key
from ingest.archive import (
    REDIRECT_STATUSES,
    ArchiveEntry,
    ArchiveIndex,
    ArchiveWriter,
    find_archives,
)
from ingest.linked_pages import page_followups, url_followups
from ingest.netguard import AddressBook, check_url, pinned_transport

log = logging.getLogger(__name__)

OK, NOT_MODIFIED, FAILED = "ok", "not-modified", "failed"
ROBOTS_DISALLOWED, SKIPPED_OFFLINE = "robots-disallowed", "skipped-offline"
NO_URL = "no URL"
OnResource = Callable[[Resource, list[FetchResult]], None]

TEXT_TYPES = frozenset({"text/html", "application/xhtml+xml", "text/plain", "text/markdown"})
ACCEPTED_TYPES = TEXT_TYPES | {"application/pdf"}
_UNLABELLED = frozenset({"", "application/octet-stream", "binary/octet-stream"})
ACCEPT_HEADER = "text/html,application/xhtml+xml,text/markdown,text/plain;q=0.9,application/pdf;q=0.9,*/*;q=0.1"
ROBOTS_MAX_BYTES = 512 * 1024
ROBOTS_MAX_REDIRECTS = 5  # RFC 9309 2.3.1.2: follow at least five; past that, robots.txt is "unavailable"


# --- URL rewrites --------------------------------------------------------------------------------


def rewrite_url(url: str, rewrites: dict[str, str]) -> str:
    """Apply the longest matching `crawl.url_rewrites` prefix (tests point catalog hosts at loopback)."""
    for prefix in sorted(rewrites, key=len, reverse=True):
        if prefix and url.startswith(prefix):
            return rewrites[prefix] + url[len(prefix) :]
    return url


def unrewrite_url(url: str, rewrites: dict[str, str]) -> str:
    """The catalog-side spelling of a fetched URL, so links found in a page keep their real site."""
    for prefix, replacement in sorted(rewrites.items(), key=lambda kv: len(kv[1]), reverse=True):
        if replacement and url.startswith(replacement):
            return prefix + url[len(replacement) :]
    return url


# --- bodies: type, charset, binary sniffing ---------------------------------------------------------


def _parse_content_type(value: str) -> tuple[str, str | None]:
    message = Message()
    message["content-type"] = value or ""
    mime = message.get_content_type() if value else ""
    charset = message.get_param("charset")
    return mime.lower(), (str(charset).strip().lower() if isinstance(charset, str) and charset.strip() else None)


def media_type(content_type: str) -> str:
    """'text/html; charset=utf-8' → 'text/html'."""
    return _parse_content_type(content_type)[0]


_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_HTML_START = re.compile(
    rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body|meta|title)\b", re.IGNORECASE | re.DOTALL
)
_BINARY_MAGIC = (
    b"\x89PNG", b"GIF8", b"\xff\xd8\xff", b"PK\x03\x04", b"\x1f\x8b", b"\x7fELF", b"RIFF", b"OggS",
    b"\x00asm", b"BZh", b"\xfd7zXZ", b"7z\xbc\xaf", b"MZ", b"\x00\x00\x01\x00", b"wOFF", b"wOF2",
)
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\b\x1b")


def looks_binary(body: bytes) -> bool:
    """True for images, archives and other non-text bytes (NULs or many control characters)."""
    sample = body[:4096]
    if not sample or any(sample.startswith(bom) for bom, _ in _BOMS):
        return False
    if sample.startswith(_BINARY_MAGIC) or b"\x00" in sample:
        return True
    controls = sum(1 for byte in sample if byte < 0x20 and byte not in _TEXT_CONTROLS)
    return controls / len(sample) > 0.05


def _is_pdf(body: bytes) -> bool:
    return b"%PDF-" in body[:1024]


def classify_body(header_type: str, body: bytes, url: str = "") -> tuple[str, str | None]:
    """(content type to record, None) or ('', failure reason).

    The recorded type carries the detected charset for text ('text/html; charset=iso-8859-1').
    A PDF is recognised by its magic even when mislabelled; a PDF that is corrupt is still accepted
    (extraction decides what to make of it).
    """
    mime, declared = _parse_content_type(header_type)
    if mime == "application/pdf" or (_is_pdf(body) and (mime in _UNLABELLED or mime in TEXT_TYPES)):
        return "application/pdf", None
    if mime in _UNLABELLED:
        if looks_binary(body):
            return "", f"unsupported content: binary body labelled {mime or '(no type)'}"
        mime = "text/html" if _HTML_START.match(body[:2048]) else "text/plain"
    if mime not in TEXT_TYPES:
        return "", f"unsupported content type {mime}"
    if looks_binary(body):
        return "", f"binary body labelled {mime}"
    if mime == "text/plain" and url.split("?", 1)[0].split("#", 1)[0].lower().endswith((".md", ".markdown")):
        mime = "text/markdown"
    labelled = f"{mime}; charset={declared}" if declared else mime
    return f"{mime}; charset={detect_charset(body, labelled)}", None


# --- one request ---------------------------------------------------------------------------------


class _Failure(Exception):
    """A URL failed for a reason that retrying will not change."""

    def __init__(self, reason: str, http_status: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.http_status = http_status


class _RetryableStatus(Exception):
    """A 5xx or 429 answer; retried, honouring Retry-After."""

    def __init__(self, status: int, phrase: str, retry_after: float | None) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.phrase = phrase
        self.retry_after = retry_after


@dataclass
class _Hop:
    """One HTTP response (a body only for 200)."""

    url: str
    status: int
    phrase: str
    headers: list[tuple[str, str]]
    http_version: str
    body: bytes = b""

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        return next((v for k, v in self.headers if k.lower() == lowered), None)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date); None when absent or bad."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _retryable(exc: BaseException) -> bool:
    return isinstance(
        exc, (_RetryableStatus, httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError, TimeoutError)
    )


def _describe_error(exc: BaseException, crawl: CrawlSettings) -> str:
    if isinstance(exc, httpx.ConnectTimeout):
        return f"timeout: no connection within {crawl.connect_timeout_s:g} s"
    if isinstance(exc, httpx.ReadTimeout):
        return f"timeout: no data for {crawl.read_timeout_s:g} s"
    if isinstance(exc, (httpx.TimeoutException, TimeoutError)):
        return f"timeout: request took longer than {crawl.total_timeout_s:g} s"
    detail = str(exc) or exc.__class__.__name__
    if isinstance(exc, httpx.ConnectError):
        return f"connection error: {detail}"
    if isinstance(exc, (httpx.NetworkError, httpx.RemoteProtocolError)):
        return f"connection broken: {detail}"
    return f"{exc.__class__.__name__}: {detail}"


class _HostGate:
    """Per-host concurrency limit plus a minimum spacing between request starts."""

    def __init__(self, limit: int, delay_s: float) -> None:
        self.semaphore = asyncio.Semaphore(limit)
        self.delay_s = delay_s
        self._lock = asyncio.Lock()
        self._next_start = 0.0

    async def wait_turn(self) -> None:
        loop = asyncio.get_running_loop()
        async with self._lock:
            now = loop.time()
            start = max(now, self._next_start)
            self._next_start = start + self.delay_s
        if start > now:
            await asyncio.sleep(start - now)


# --- the crawler ---------------------------------------------------------------------------------


@dataclass
class _Target:
    """One URL to produce a result for."""

    url: str  # catalog (or follow-up) spelling
    resource_id: str
    parent_url: str | None = None


@dataclass
class _Crawler:
    settings: Settings
    index: ArchiveIndex
    writer: ArchiveWriter
    refresh: bool
    client: httpx.AsyncClient = field(init=False)
    _global: asyncio.Semaphore = field(init=False)
    _gates: dict[str, _HostGate] = field(default_factory=dict)
    _robots: dict[str, RobotsPolicy] = field(default_factory=dict)
    _addresses: AddressBook = field(default_factory=AddressBook)
    _robots_locks: dict[str, asyncio.Lock] = field(default_factory=dict)
    _claimed: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        crawl = self.crawl
        self._global = asyncio.Semaphore(crawl.concurrency)
        limits = httpx.Limits(max_connections=crawl.concurrency, max_keepalive_connections=crawl.concurrency)
        self.client = httpx.AsyncClient(
            # connections go to the addresses the SSRF guard approved (no second DNS lookup, no env proxy)
            transport=pinned_transport(crawl, self._addresses, limits),
            trust_env=False,
            headers={"User-Agent": crawl.user_agent, "Accept": ACCEPT_HEADER},
            timeout=httpx.Timeout(
                connect=crawl.connect_timeout_s, read=crawl.read_timeout_s, write=crawl.read_timeout_s, pool=None
            ),
            follow_redirects=False,  # followed by hand: each hop is guarded and loops are detected
        )

    @property
    def crawl(self) -> CrawlSettings:
        return self.settings.crawl

    @property
    def robots_agent(self) -> str:
        return self.crawl.user_agent.split("/", 1)[0].split()[0] or "gpuguide"

    async def aclose(self) -> None:
        await self.client.aclose()

    # -- orchestration --

    async def run(
        self, resources: Sequence[Resource], progress: bool, on_resource: OnResource | None = None
    ) -> list[FetchResult]:
        self._claimed = {url_key(r.url) for r in resources if r.url}
        bar = tqdm(
            total=len(resources), unit="url", desc="crawl",
            disable=not (progress and on_resource is None and sys.stderr.isatty()),
        )

        async def one(resource: Resource) -> list[FetchResult]:
            results: list[FetchResult] = []
            try:
                results = await self._resource(resource)
                return results
            finally:
                bar.update(1)
                if on_resource is not None:
                    on_resource(resource, results)

        try:
            groups = await asyncio.gather(*(one(r) for r in resources))
        finally:
            bar.close()
        return [result for group in groups for result in group]

    async def _resource(self, resource: Resource) -> list[FetchResult]:
        main = await self._fetch(_Target(resource.url, resource.id))
        if not resource.url:
            return [main]
        urls = [u for u in followup_urls(main, self.crawl) if self._claim(u)]
        extra = await asyncio.gather(*(self._fetch(_Target(u, resource.id, resource.url)) for u in urls))
        return [main, *extra]

    def _claim(self, url: str) -> bool:
        key = url_key(url)
        if key in self._claimed:
            return False
        self._claimed.add(key)
        return True

    # -- one URL --

    async def _fetch(self, target: _Target) -> FetchResult:
        """Never raises: whatever goes wrong for one URL ends up in its result only."""
        started = time.monotonic()
        base = FetchResult(
            url=target.url, final_url=target.url, status=FAILED,
            resource_id=target.resource_id, parent_url=target.parent_url,
        )
        if not target.url:
            return replace(base, reason=NO_URL)
        fetched = rewrite_url(target.url, self.crawl.url_rewrites)
        base.final_url = fetched
        previous = self.index.resolve(fetched, self.crawl.max_redirects) or self.index.resolve(
            target.url, self.crawl.max_redirects
        )
        try:
            if previous and not self.refresh:
                log.info("%s: already archived, replaying", target.url)
                result = result_from_archive(self.index, base, *previous)
            else:
                result = await self._fetch_network(base, fetched, previous)
        except _Failure as exc:
            result = replace(base, reason=exc.reason, http_status=exc.http_status)
        except Exception as exc:  # a bug must not sink the other URLs
            log.exception("%s: unexpected error", target.url)
            result = replace(base, reason=f"internal error: {exc.__class__.__name__}: {exc}")
        result.elapsed_s = time.monotonic() - started
        if result.status in (FAILED, ROBOTS_DISALLOWED):
            log.warning("%s: %s (%s)", target.url, result.status, result.reason)
            note = {"url": target.url, "status": result.status, "reason": result.reason}
            self.writer.write_failure(result.final_url, {**note, "http_status": result.http_status})
        else:
            log.info("%s: %s", target.url, result.status)
        return result

    async def _fetch_network(
        self, base: FetchResult, fetched: str, previous: tuple[str, ArchiveEntry] | None
    ) -> FetchResult:
        chain = [fetched]
        current = fetched
        while True:
            base.final_url = current
            if reason := await check_url(current, self.crawl, self._addresses):
                raise _Failure(reason)
            if self.crawl.respect_robots:
                policy = await self._robots_policy(current)
                if not policy.allows(current, self.robots_agent):
                    return replace(base, status=ROBOTS_DISALLOWED, reason=policy.refusal or f"robots.txt disallows {current}")
            conditional = previous[1] if previous and previous[0] == current else None
            hop = await self._get_with_retries(current, _conditional_headers(conditional))
            if hop.status not in REDIRECT_STATUSES:
                break
            location = hop.header("Location")
            if not location:
                raise _Failure(f"HTTP {hop.status} redirect without Location", hop.status)
            self.writer.write_response(current, hop.status, hop.phrase, hop.headers, b"", hop.http_version)
            nxt = urljoin(current, location.strip())
            if nxt in chain:
                raise _Failure(f"redirect loop: {' -> '.join([*chain, nxt])}", hop.status)
            if len(chain) > self.crawl.max_redirects:
                raise _Failure(f"too many redirects (more than {self.crawl.max_redirects})", hop.status)
            chain.append(nxt)
            current = nxt

        if hop.status == 304 and conditional is not None:
            self.writer.write_revisit(current, hop.headers, conditional)
            archived = self.index.load(conditional)
            content_type, _ = classify_body(archived.header("Content-Type") or "", archived.body, current)
            return replace(
                base, status=NOT_MODIFIED, content_type=content_type, body=archived.body,
                http_status=304, etag=hop.header("ETag") or conditional.etag,
                last_modified=hop.header("Last-Modified") or conditional.last_modified,
            )
        if hop.status != 200:
            raise _Failure(f"HTTP {hop.status} {hop.phrase}".strip(), hop.status)
        content_type, refusal = classify_body(hop.header("Content-Type") or "", hop.body, current)
        if refusal:
            raise _Failure(refusal, hop.status)
        self.writer.write_response(current, hop.status, hop.phrase, hop.headers, hop.body, hop.http_version)
        return replace(
            base, status=OK, http_status=hop.status, content_type=content_type, body=hop.body,
            etag=hop.header("ETag"), last_modified=hop.header("Last-Modified"),
        )

    async def _get_with_retries(self, url: str, headers: dict[str, str], max_bytes: int | None = None) -> _Hop:
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.crawl.retries + 1),
            wait=self._retry_wait,
            retry=retry_if_exception(_retryable),
            before_sleep=lambda state: log.info(
                "%s: attempt %d failed (%s), retrying",
                url, state.attempt_number, state.outcome.exception() if state.outcome else "?",
            ),
            reraise=True,
        )
        try:
            return await retrying(self._get_once, url, headers, max_bytes=max_bytes)
        except _RetryableStatus as exc:
            attempts = self.crawl.retries + 1
            raise _Failure(f"HTTP {exc.status} {exc.phrase} (after {attempts} attempts)".strip(), exc.status) from None
        except _Failure:
            raise
        except httpx.InvalidURL as exc:
            raise _Failure(f"invalid URL: {exc}") from None
        except (httpx.HTTPError, TimeoutError) as exc:
            raise _Failure(_describe_error(exc, self.crawl)) from None

    def _retry_wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _RetryableStatus) and exc.retry_after is not None:
            return min(exc.retry_after, self.crawl.max_retry_after_s)
        return self.crawl.backoff_s * 2 ** (state.attempt_number - 1)

    def _gate(self, url: str) -> _HostGate:
        host = urlsplit(url).netloc.lower()
        if host not in self._gates:
            self._gates[host] = _HostGate(self.crawl.per_host_concurrency, self.crawl.host_delay_s)
        return self._gates[host]

    async def _get_once(self, url: str, headers: dict[str, str], *, max_bytes: int | None = None) -> _Hop:
        """One GET under the host and global limits; reads the body of a 200 only."""
        gate = self._gate(url)
        limit = max_bytes or self.crawl.max_body_bytes
        async with gate.semaphore:
            await gate.wait_turn()
            async with self._global:
                async with asyncio.timeout(self.crawl.total_timeout_s):
                    async with self.client.stream("GET", url, headers=headers) as response:
                        hop = _Hop(
                            url, response.status_code, response.reason_phrase,
                            list(response.headers.multi_items()), response.http_version,
                        )
                        if response.status_code == 429 or response.status_code >= 500:
                            raise _RetryableStatus(
                                response.status_code, response.reason_phrase,
                                parse_retry_after(response.headers.get("Retry-After")),
                            )
                        if response.status_code == 200:
                            hop.body = await _read_limited(response, limit, max_bytes is None)
                        return hop

    # -- robots.txt --

    async def _robots_policy(self, url: str) -> RobotsPolicy:
        """The robots.txt policy of `url`'s origin, fetched once per origin per run."""
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        lock = self._robots_locks.setdefault(origin, asyncio.Lock())
        async with lock:
            if origin not in self._robots:
                self._robots[origin] = await self._load_robots(origin)
                self._apply_crawl_delay(origin, self._robots[origin].rules)
        return self._robots[origin]

    async def _load_robots(self, origin: str) -> RobotsPolicy:
        """RFC 9309: 2xx → its rules; 4xx → allow all; 5xx, 429 or unreachable → disallow all; 3xx followed.

        A server error means the site may be struggling or the file may exist with rules we cannot
        see, so the whole origin is left alone this run (and reported), not crawled blind.
        """
        url = f"{origin}/robots.txt"
        for _ in range(ROBOTS_MAX_REDIRECTS + 1):
            if reason := await check_url(url, self.crawl, self._addresses):
                return _robots_unreachable(origin, url, reason)
            try:
                hop = await self._get_with_retries(url, {"Accept": "text/plain"}, max_bytes=ROBOTS_MAX_BYTES)
            except _Failure as exc:
                return _robots_unreachable(origin, url, exc.reason)
            if hop.status in REDIRECT_STATUSES and hop.header("Location"):
                url = urljoin(url, (hop.header("Location") or "").strip())
                continue
            if 200 <= hop.status < 300:
                return RobotsPolicy(Protego.parse(hop.body.decode("utf-8", errors="replace")))
            if 400 <= hop.status < 500:
                log.info("%s: HTTP %d; no robots.txt, crawling allowed", url, hop.status)
                return RobotsPolicy()
            return _robots_unreachable(origin, url, f"HTTP {hop.status} {hop.phrase}".strip())
        log.warning("%s: more than %d redirects; treated as no robots.txt", url, ROBOTS_MAX_REDIRECTS)
        return RobotsPolicy()

    def _apply_crawl_delay(self, origin: str, rules: Protego | None) -> None:
        delay = rules.crawl_delay(self.robots_agent) if rules is not None else None
        if delay:
            gate = self._gate(origin)
            gate.delay_s = max(gate.delay_s, min(float(delay), self.crawl.max_retry_after_s))


async def _read_limited(response: httpx.Response, limit: int, fail_on_excess: bool) -> bytes:
    """The decoded body, aborting once it passes `limit` bytes (a lying Content-Length is no help)."""
    declared = response.headers.get("Content-Length", "")
    if fail_on_excess and declared.isdigit() and int(declared) > limit:
        raise _Failure(f"body larger than {limit} bytes (Content-Length {declared})", response.status_code)
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            if fail_on_excess:
                raise _Failure(f"body larger than {limit} bytes", response.status_code)
            return bytes(body[:limit])
    return bytes(body)


@dataclass(frozen=True)
class RobotsPolicy:
    """What one origin's robots.txt means for this run: its rules, allow-all, or disallow-all with a reason."""

    rules: Protego | None = None
    refusal: str | None = None  # set: nothing on the origin is fetched; shown as the report's reason

    def allows(self, url: str, agent: str) -> bool:
        if self.refusal is not None:
            return False
        return self.rules is None or self.rules.can_fetch(url, agent)


def _robots_unreachable(origin: str, url: str, why: str) -> RobotsPolicy:
    refusal = (
        f"robots.txt could not be read ({why}); per RFC 9309 nothing on {origin} is fetched this run, "
        "run the ingest again later"
    )
    log.warning("%s: %s", url, refusal)
    return RobotsPolicy(refusal=refusal)


def _conditional_headers(entry: ArchiveEntry | None) -> dict[str, str]:
    headers: dict[str, str] = {}
    if entry is not None and entry.etag:
        headers["If-None-Match"] = entry.etag
    if entry is not None and entry.last_modified:
        headers["If-Modified-Since"] = entry.last_modified
    return headers


# --- results from the archive ----------------------------------------------------------------------


def result_from_archive(index: ArchiveIndex, base: FetchResult, final_uri: str, entry: ArchiveEntry) -> FetchResult:
    """An `ok` result rebuilt from an archived 200 response."""
    archived = index.load(entry)
    content_type, refusal = classify_body(archived.header("Content-Type") or "", archived.body, final_uri)
    if refusal:
        return replace(base, final_url=final_uri, http_status=archived.http_status, reason=f"archived copy: {refusal}")
    return replace(
        base, final_url=final_uri, status=OK, http_status=archived.http_status, content_type=content_type,
        body=archived.body, etag=archived.header("ETag"), last_modified=archived.header("Last-Modified"),
    )


def followup_urls(result: FetchResult, crawl: CrawlSettings) -> list[str]:
    """Follow-ups of one catalog result: from its URL, and (multi-part posts) from its page."""
    urls = url_followups(result.url, crawl)
    if result.status in (OK, NOT_MODIFIED) and result.body:
        page_url = unrewrite_url(result.final_url, crawl.url_rewrites)
        urls += page_followups(page_url, decode_body(result.body, result.content_type), result.content_type, crawl)
    return list(dict.fromkeys(urls))


def replay(resources: Sequence[Resource], warc_paths: Iterable[Path], settings: Settings) -> list[FetchResult]:
    """Results from archives only, no network: `skipped-offline` for catalog URLs not in them.

    A URL matches a record exactly or loosely (http/https, 'www.', trailing slash); archived
    redirects are followed. Follow-ups are included when the archive holds them, left out otherwise.
    Raises ArchiveError for a file that is not a WARC.
    """
    crawl = settings.crawl
    index = ArchiveIndex.scan(warc_paths)
    claimed = {url_key(r.url) for r in resources if r.url}
    out: list[FetchResult] = []
    for resource in resources:
        main = _replay_one(index, _Target(resource.url, resource.id), crawl)
        out.append(main)
        if not resource.url:
            continue
        for url in followup_urls(main, crawl):
            key = url_key(url)
            if key in claimed:
                continue
            claimed.add(key)
            extra = _replay_one(index, _Target(url, resource.id, resource.url), crawl)
            if extra.status == OK:
                out.append(extra)
    return out


def _replay_one(index: ArchiveIndex, target: _Target, crawl: CrawlSettings) -> FetchResult:
    base = FetchResult(
        url=target.url, final_url=target.url, status=FAILED,
        resource_id=target.resource_id, parent_url=target.parent_url,
    )
    if not target.url:
        return replace(base, reason=NO_URL)
    fetched = rewrite_url(target.url, crawl.url_rewrites)
    found = index.resolve(fetched, crawl.max_redirects) or index.resolve(target.url, crawl.max_redirects)
    if found is None:
        failure = index.latest_failure(fetched) or index.latest_failure(target.url)
        note = f" (last crawl: {failure.reason})" if failure and failure.reason else ""
        return replace(base, status=SKIPPED_OFFLINE, reason=f"not in the archive{note}")
    return result_from_archive(index, base, *found)


# --- entry points ----------------------------------------------------------------------------------


async def crawl(
    resources: list[Resource], settings: Settings, *, refresh: bool = False, progress: bool = True,
    on_resource: OnResource | None = None,
) -> list[FetchResult]:
    """Fetch every resource (and its follow-ups), archiving as it goes; results in catalog order.

    URLs already archived under `settings.archive_dir` are replayed, not refetched (resume),
    unless `refresh` asks for a conditional re-fetch (If-None-Match / If-Modified-Since), which
    reports `not-modified` on a 304. With `crawl.offline`, nothing is fetched: this is `replay`
    over `crawl.warcs` (default: the archives in archive_dir). `on_resource(resource, its results)` is
    called as each resource finishes (progress reports; no tqdm bar then).
    """
    if settings.crawl.offline:
        paths = list(settings.crawl.warcs) or find_archives(settings.archive_dir)
        results = replay(resources, paths, settings)
        if on_resource is not None:
            for res in resources:
                on_resource(res, [r for r in results if r.resource_id == res.id])
        return results
    index = ArchiveIndex.scan(find_archives(settings.archive_dir))
    with ArchiveWriter(settings.archive_dir) as writer:
        crawler = _Crawler(settings, index, writer, refresh)
        try:
            return await crawler.run(resources, progress, on_resource)
        finally:
            await crawler.aclose()


def crawl_sync(
    resources: list[Resource], settings: Settings, *, refresh: bool = False, progress: bool = True,
    on_resource: OnResource | None = None,
) -> list[FetchResult]:
    """`crawl` for synchronous callers (the CLI); not usable inside a running event loop."""
    return asyncio.run(crawl(resources, settings, refresh=refresh, progress=progress, on_resource=on_resource))
