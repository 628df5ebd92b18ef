"""The crawl's web archive: WARC files written as pages arrive, and read back for replay and resume.

Writing: one `crawl-<UTC timestamp>.warc.gz` per crawl under `settings.archive_dir`; every record
is its own gzip member and the file is flushed after each, so a killed crawl loses at most the
record being written. Final responses and redirect hops are `response` records, a 304 is a
`revisit` record, and a failure is a `metadata` record whose JSON block says why.

Reading: `ArchiveIndex.scan` walks the files once and remembers where each record lies (no bodies
in memory); `load` reads one record back. A file cut off by a crash is read up to its last complete
record; a file that is not a WARC at all raises `ArchiveError` with one line naming it.
"""

from __future__ import annotations

import io
import json
import logging
import os
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urljoin

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from core.errors import UserError
from core.urls import url_key

log = logging.getLogger(__name__)

ARCHIVE_GLOBS = ("*.warc.gz", "*.warc")
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# Hop-by-hop or encoding headers that no longer describe the (decoded) body we store.
_DROPPED_HEADERS = frozenset({"content-encoding", "transfer-encoding", "content-length", "connection", "keep-alive"})


class ArchiveError(UserError):
    """An archive cannot be used; the message is one line naming the file."""


# --- writing -------------------------------------------------------------------------------------


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _warc_date(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


class ArchiveWriter:
    """Appends records to one new WARC file in `directory`, created on the first write."""

    def __init__(self, directory: Path, software: str = "gpuguide") -> None:
        self.directory = directory
        self.software = software
        self.path: Path | None = None
        self._handle: BinaryIO | None = None
        self._writer: WARCWriter | None = None
        self.records = 0

    def __enter__(self) -> ArchiveWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open(self) -> WARCWriter:
        if self._writer is not None:
            return self._writer
        self.directory.mkdir(parents=True, exist_ok=True)
        stamp = _utc_now().strftime("%Y%m%dT%H%M%S%fZ")
        self.path = self.directory / f"crawl-{stamp}.warc.gz"
        self._handle = open(self.path, "xb")  # never overwrite an earlier crawl
        self._writer = WARCWriter(self._handle, gzip=True)
        info = self._writer.create_warcinfo_record(
            self.path.name, {"software": self.software, "format": "WARC File Format 1.1"}
        )
        self._write(info)
        log.info("archiving to %s", self.path)
        return self._writer

    def _write(self, record: Any) -> None:
        assert self._writer is not None and self._handle is not None
        self._writer.write_record(record)
        self._handle.flush()
        self.records += 1

    def write_response(
        self,
        url: str,
        status: int,
        reason_phrase: str,
        headers: Iterable[tuple[str, str]],
        body: bytes,
        protocol: str = "HTTP/1.1",
    ) -> None:
        """An HTTP response as fetched; `body` is the decoded payload, so encoding headers are dropped."""
        writer = self._open()
        kept = [(k, v) for k, v in headers if k.lower() not in _DROPPED_HEADERS]
        kept.append(("Content-Length", str(len(body))))
        http_headers = StatusAndHeaders(f"{status} {reason_phrase or ''}".strip(), kept, protocol=protocol)
        record = writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http_headers)
        self._write(record)

    def write_revisit(self, url: str, headers: Iterable[tuple[str, str]], refers_to: ArchiveEntry | None) -> None:
        """A 304: the server says the archived copy is still current."""
        writer = self._open()
        kept = [(k, v) for k, v in headers if k.lower() not in _DROPPED_HEADERS]
        http_headers = StatusAndHeaders("304 Not Modified", kept, protocol="HTTP/1.1")
        record = writer.create_revisit_record(
            url,
            digest=refers_to.payload_digest if refers_to else None,
            refers_to_uri=refers_to.uri if refers_to else url,
            refers_to_date=refers_to.date if refers_to else _warc_date(_utc_now()),
            http_headers=http_headers,
        )
        self._write(record)

    def write_failure(self, url: str, info: dict[str, Any]) -> None:
        """Why a URL produced nothing, as a `metadata` record with a JSON block."""
        writer = self._open()
        payload = json.dumps(info, ensure_ascii=False, sort_keys=True).encode("utf-8")
        record = writer.create_warc_record(
            url, "metadata", payload=io.BytesIO(payload), warc_content_type="application/json"
        )
        self._write(record)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()
        self._handle = None
        self._writer = None


# --- reading -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ArchiveEntry:
    """Where one record lies and what it says, without its body."""

    uri: str
    kind: str  # response / revisit / failure
    path: Path
    offset: int
    order: int  # increases with file order then position: later wins
    date: str = ""
    http_status: int | None = None
    location: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    payload_digest: str | None = None
    reason: str = ""


@dataclass
class ArchivedResponse:
    """One response record read back."""

    entry: ArchiveEntry
    http_status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        return next((v for k, v in self.headers if k.lower() == lowered), None)


@dataclass
class ArchiveIndex:
    """All usable records of some WARC files, by exact URI and by normalised URI."""

    entries: list[ArchiveEntry] = field(default_factory=list)
    _exact: dict[str, list[ArchiveEntry]] = field(default_factory=dict)
    _loose: dict[str, list[ArchiveEntry]] = field(default_factory=dict)

    @classmethod
    def scan(cls, paths: Iterable[Path]) -> ArchiveIndex:
        index = cls()
        for path in paths:
            for entry in _scan_file(Path(path), start_order=len(index.entries)):
                index.add(entry)
        return index

    def add(self, entry: ArchiveEntry) -> None:
        self.entries.append(entry)
        self._exact.setdefault(entry.uri, []).append(entry)
        self._loose.setdefault(url_key(entry.uri), []).append(entry)

    def __len__(self) -> int:
        return len(self.entries)

    def _candidates(self, url: str) -> list[ArchiveEntry]:
        return self._exact.get(url) or self._loose.get(url_key(url)) or []

    def latest_response(self, url: str) -> ArchiveEntry | None:
        """The newest 200 or redirect response for a URL (exact URI first, then normalised)."""
        for pool in (self._exact.get(url, []), self._loose.get(url_key(url), [])):
            usable = [e for e in pool if e.kind == "response" and (e.http_status == 200 or e.location)]
            if usable:
                return max(usable, key=lambda e: e.order)
        return None

    def latest_failure(self, url: str) -> ArchiveEntry | None:
        failures = [e for e in self._candidates(url) if e.kind == "failure"]
        return max(failures, key=lambda e: e.order) if failures else None

    def resolve(self, url: str, max_redirects: int = 10) -> tuple[str, ArchiveEntry] | None:
        """Follow archived redirects from `url` to an archived 200; (final URI, its entry) or None."""
        seen: set[str] = set()
        current = url
        for _ in range(max_redirects + 1):
            entry = self.latest_response(current)
            if entry is None or entry.uri in seen:
                return None
            seen.add(entry.uri)
            if entry.http_status == 200:
                return entry.uri, entry
            current = urljoin(entry.uri, entry.location or "")
        return None

    def load(self, entry: ArchiveEntry) -> ArchivedResponse:
        """Read one response record's HTTP headers and payload back from its file."""
        try:
            with open(entry.path, "rb") as handle:
                handle.seek(entry.offset)
                record = next(iter(ArchiveIterator(handle)))
                body = record.content_stream().read()
                http = record.http_headers
        except (OSError, StopIteration, ArchiveLoadFailed, ValueError) as exc:
            raise ArchiveError(f"{entry.path}: cannot read record for {entry.uri} ({exc})") from None
        return ArchivedResponse(entry, int(http.get_statuscode() or 0), list(http.headers), body)


def find_archives(directory: Path) -> list[Path]:
    """The WARC files of a directory, oldest first (crawl file names sort by time)."""
    if not directory.is_dir():
        return []
    found = {p for pattern in ARCHIVE_GLOBS for p in directory.glob(pattern) if p.is_file()}
    return sorted(found, key=lambda p: (p.name, p.stat().st_mtime))


def _header(headers: StatusAndHeaders | None, name: str) -> str | None:
    return headers.get_header(name) if headers is not None else None


def _scan_file(path: Path, start_order: int) -> list[ArchiveEntry]:
    """Entries of one WARC; stops quietly at a truncated tail, raises ArchiveError on a non-WARC."""
    entries: list[ArchiveEntry] = []
    records_read = 0
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise ArchiveError(f"{path}: cannot open archive ({exc.strerror or exc})") from None
    with handle:
        iterator = ArchiveIterator(handle)
        try:
            for record in iterator:
                if not str(record.format).startswith("warc"):
                    raise ArchiveLoadFailed(f"{record.format or 'unknown'} format, not WARC")
                # Read the block before asking for the offset (which would skip it): a short read
                # shows a record cut off by a crash.
                payload = record.content_stream().read()
                if getattr(record.raw_stream, "limit", 0):
                    log.warning("%s: last record is truncated; ignoring it", path)
                    break
                offset = iterator.get_record_offset()
                records_read += 1
                entry = _entry(record, payload, path, offset, start_order + len(entries))
                if entry is not None:
                    entries.append(entry)
        except (ArchiveLoadFailed, OSError, EOFError, ValueError, UnicodeDecodeError) as exc:
            first_line = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
            if records_read == 0:
                raise ArchiveError(f"{path}: not a readable WARC file ({first_line})") from None
            log.warning("%s: unreadable after %d records, probably cut off (%s)", path, records_read, first_line)
    if records_read == 0 and path.stat().st_size > 0 and not _starts_like_warc(path):
        raise ArchiveError(f"{path}: not a WARC file (no WARC record found)")
    return entries


def _starts_like_warc(path: Path) -> bool:
    """Whether a file begins with a WARC header, gzipped or not (a crash may have cut the rest)."""
    with open(path, "rb") as handle:
        head = handle.read(65536)
    gzipped = head.startswith(b"\x1f\x8b")
    if gzipped:
        try:
            head = zlib.decompressobj(wbits=31).decompress(head)
        except zlib.error:
            return False
    prefix = head[:5]
    return b"WARC/".startswith(prefix) if prefix else gzipped  # a few gzip bytes may decode to nothing yet


def _entry(record: Any, payload: bytes, path: Path, offset: int, order: int) -> ArchiveEntry | None:
    headers = record.rec_headers
    uri = headers.get_header("WARC-Target-URI") or ""
    if not uri:
        return None
    common = {
        "uri": uri,
        "path": path,
        "offset": offset,
        "order": order,
        "date": headers.get_header("WARC-Date") or "",
        "payload_digest": headers.get_header("WARC-Payload-Digest"),
    }
    if record.rec_type in ("response", "revisit"):
        http = record.http_headers
        try:
            status = int(http.get_statuscode()) if http is not None else None
        except (TypeError, ValueError):
            status = None
        return ArchiveEntry(
            kind=record.rec_type,
            http_status=status,
            location=_header(http, "Location") if status in REDIRECT_STATUSES else None,
            etag=_header(http, "ETag"),
            last_modified=_header(http, "Last-Modified"),
            **common,
        )
    if record.rec_type == "metadata":
        try:
            data = json.loads(payload.decode("utf-8"))
        except ValueError:
            return None  # someone else's metadata, not a failure note of ours
        if not isinstance(data, dict) or "reason" not in data:
            return None
        return ArchiveEntry(kind="failure", reason=str(data["reason"]), **common)
    return None
