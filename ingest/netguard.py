"""SSRF guard: the crawler only talks to public http(s) hosts.

A reading list is third-party input, and redirects are chosen by remote servers, so every URL
(and every redirect hop) is checked before a connection is made: the scheme must be http(s) and
every address the host resolves to must be globally routable. Loopback, private, link-local
(cloud metadata at 169.254.169.254), multicast, reserved and unspecified addresses are refused
unless `crawl.allow_private_hosts` is set, or the host/address/network is listed in
`crawl.allowed_private_hosts` (tests allow 127.0.0.1 this way).

Pinned resolution: a name is resolved once per crawl (`AddressBook`), and the crawler's connections
go through `PinnedBackend`, which connects to those approved addresses only, never resolving the name
again, so a DNS server that answers differently the second time (DNS rebinding) cannot steer a
connection to an address that was never checked. TLS still verifies the certificate and sends SNI
for the name in the URL.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

import httpcore
import httpx

from core.settings import CrawlSettings

log = logging.getLogger(__name__)

ALLOWED_SCHEMES = ("http", "https")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def address_category(ip: IPAddress) -> str | None:
    """Why an address is not public ('loopback', 'link-local', ...), or None for a global address."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    checks = (
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("unspecified", ip.is_unspecified),
        ("reserved", ip.is_reserved),
        ("private", ip.is_private),
    )
    for name, hit in checks:
        if hit:
            return name
    return None if ip.is_global else "non-global"


def _allowlist(entries: Iterable[str]) -> tuple[set[str], list[IPNetwork]]:
    names: set[str] = set()
    networks: list[IPNetwork] = []
    for entry in entries:
        entry = entry.strip().lower()
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            names.add(entry.strip("[]"))
    return names, networks


def _host_of(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a URL; host lower-cased without IPv6 brackets ('' when absent).

    Raises ValueError for a URL that cannot be parsed (e.g. an unclosed IPv6 bracket).
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        port = -1
    return scheme, (parts.hostname or "").lower(), port


def check_scheme_and_host(url: str) -> str | None:
    """The part of the check that needs no DNS: scheme and presence of a host."""
    try:
        scheme, host, port = _host_of(url)
    except ValueError:
        return f"blocked: malformed URL {url}"
    if scheme not in ALLOWED_SCHEMES:
        return f"blocked: scheme {scheme or '(none)'!r} is not http(s) in {url}"
    if not host:
        return f"blocked: no host in {url}"
    if port < 0:
        return f"blocked: invalid port in {url}"
    return None


def check_addresses(host: str, addresses: Iterable[str], crawl: CrawlSettings) -> str | None:
    """None when every resolved address may be contacted, else one reason naming the first bad one."""
    if crawl.allow_private_hosts:
        return None
    names, networks = _allowlist(crawl.allowed_private_hosts)
    if host in names:
        return None
    for text in addresses:
        ip = ipaddress.ip_address(text.split("%", 1)[0])  # drop an IPv6 zone id
        category = address_category(ip)
        if category is None or any(ip in net for net in networks):
            continue
        shown = host if host == str(ip) else f"{host} ({ip})"
        return (
            f"blocked: {shown} is a {category} address; "
            "set crawl.allow_private_hosts or crawl.allowed_private_hosts to allow it"
        )
    return None


def resolve_sync(host: str, port: int) -> list[str]:
    """All addresses getaddrinfo gives for a host, in its order (connections try them in turn)."""
    infos = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))  # the resolver's preference order


async def resolve(host: str, port: int) -> list[str]:
    """`resolve_sync` in a worker thread."""
    return await asyncio.to_thread(resolve_sync, host, port)


class AddressBook:
    """Addresses the guard approved, per (host, port), for one crawl: resolved once, connected to as is."""

    def __init__(self) -> None:
        self._approved: dict[tuple[str, int], list[str]] = {}

    def record(self, host: str, port: int, addresses: list[str]) -> None:
        self._approved[(_ascii_host(host), port)] = list(addresses)

    def lookup(self, host: str, port: int) -> list[str] | None:
        return self._approved.get((_ascii_host(host), port))


def _ascii_host(host: str) -> str:
    """The name as the connection layer spells it (IDNA, lower case), so approvals and connects match."""
    try:
        return host.strip("[]").encode("idna").decode("ascii").lower()
    except UnicodeError:
        return host.strip("[]").lower()


async def approve_host(host: str, port: int, crawl: CrawlSettings, book: AddressBook | None = None) -> str | None:
    """None when `host` may be contacted (its approved addresses then in `book`), else one reason."""
    if book is not None and book.lookup(host, port) is not None:
        return None
    try:
        addresses = await resolve(host, port)
    except (OSError, UnicodeError) as exc:
        return f"cannot resolve host {host}: {exc}"
    return _approve(host, port, addresses, crawl, book)


def approve_host_sync(host: str, port: int, crawl: CrawlSettings, book: AddressBook | None = None) -> str | None:
    """`approve_host` for callers outside an event loop."""
    if book is not None and book.lookup(host, port) is not None:
        return None
    try:
        addresses = resolve_sync(host, port)
    except (OSError, UnicodeError) as exc:
        return f"cannot resolve host {host}: {exc}"
    return _approve(host, port, addresses, crawl, book)


def _approve(host: str, port: int, addresses: list[str], crawl: CrawlSettings, book: AddressBook | None) -> str | None:
    if not addresses:
        return f"cannot resolve host {host}: no addresses"
    reason = check_addresses(host, addresses, crawl)
    if reason is None and book is not None:
        book.record(host, port, addresses)
    return reason


async def check_url(url: str, crawl: CrawlSettings, book: AddressBook | None = None) -> str | None:
    """None when the crawler may fetch `url`, else one clear reason (checked on every redirect hop).

    With a `book`, the approved addresses are kept there for `PinnedBackend`, and a host already in
    it is not resolved again.
    """
    reason = check_scheme_and_host(url)
    if reason:
        return reason
    _, host, port = _host_of(url)
    if crawl.allow_private_hosts:
        return None
    return await approve_host(host, port, crawl, book)


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """httpcore network backend that connects to guard-approved addresses instead of resolving names.

    A name not yet in the book (a caller that skipped `check_url`) is resolved and checked here, once,
    and the connection goes to exactly the addresses that passed. With `crawl.allow_private_hosts`
    nothing is checked and names connect as usual.
    """

    def __init__(self, crawl: CrawlSettings, book: AddressBook, inner: httpcore.AsyncNetworkBackend | None = None):
        self.crawl = crawl
        self.book = book
        self.inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        if self.crawl.allow_private_hosts:
            return await self.inner.connect_tcp(host, port, timeout, local_address, socket_options)
        addresses = self.book.lookup(host, port)
        if addresses is None:
            if reason := await approve_host(host, port, self.crawl, self.book):
                raise httpcore.ConnectError(reason)
            addresses = self.book.lookup(host, port) or []
        failure: Exception = httpcore.ConnectError(f"no approved address for {host}")
        for address in addresses:
            try:
                return await self.inner.connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("the crawler does not use unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def pinned_transport(crawl: CrawlSettings, book: AddressBook, limits: httpx.Limits) -> httpx.AsyncHTTPTransport:
    """An httpx transport whose connections all go through `PinnedBackend` (TLS verified for the URL's name)."""
    transport = httpx.AsyncHTTPTransport(limits=limits)
    # httpx has no public network_backend argument; build its pool the same way, with our backend.
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=httpx.create_ssl_context(),
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=PinnedBackend(crawl, book),
    )
    return transport


def check_url_sync(url: str, crawl: CrawlSettings, book: AddressBook | None = None) -> str | None:
    """`check_url` for callers outside an event loop."""
    reason = check_scheme_and_host(url)
    if reason:
        return reason
    _, host, port = _host_of(url)
    if crawl.allow_private_hosts:
        return None
    return approve_host_sync(host, port, crawl, book)


class PinnedSyncBackend(httpcore.NetworkBackend):
    """`PinnedBackend` for synchronous clients (the list download of `catalog sync`)."""

    def __init__(self, crawl: CrawlSettings, book: AddressBook, inner: httpcore.NetworkBackend | None = None):
        self.crawl = crawl
        self.book = book
        self.inner = inner or httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        if self.crawl.allow_private_hosts:
            return self.inner.connect_tcp(host, port, timeout, local_address, socket_options)
        addresses = self.book.lookup(host, port)
        if addresses is None:
            if reason := approve_host_sync(host, port, self.crawl, self.book):
                raise httpcore.ConnectError(reason)
            addresses = self.book.lookup(host, port) or []
        failure: Exception = httpcore.ConnectError(f"no approved address for {host}")
        for address in addresses:
            try:
                return self.inner.connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        raise failure

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("unix sockets are not used")

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


def pinned_sync_transport(crawl: CrawlSettings, book: AddressBook) -> httpx.HTTPTransport:
    """`pinned_transport` for a synchronous httpx client."""
    transport = httpx.HTTPTransport()
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(), network_backend=PinnedSyncBackend(crawl, book)
    )
    return transport
