"""The one URL canonicaliser: when two spellings of a link name the same page.

Built on w3lib's `canonicalize_url` (percent-encoding normalised, query arguments sorted, the fragment dropped),
plus the loose rules the list and the archives need: http and https, a leading `www.`, a default port, a
trailing slash and letter case do not matter. The catalog's de-duplication, the archive's loose lookup, the
crawler's claim on a URL, the learner's "I read <url>", the profile and the evaluator's gold all compare keys
made here.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from w3lib.url import canonicalize_url

__all__ = ["canonical_url", "url_key", "same_page"]


def canonical_url(url: str) -> str:
    """w3lib's canonical form (fragment dropped); a URL it cannot parse comes back stripped, as written."""
    url = url.strip()
    if not url:
        return ""
    try:
        return canonicalize_url(url)
    except ValueError:  # a bad IPv6 bracket or port
        return url


def url_key(url: str) -> str:
    """A loose identity key: `host[:port]/path?query`, lower-case, no scheme, no `www.`, no trailing slash.

    A URL written without a scheme (`github.com/NVIDIA/cutlass`) gets the same key as with one.
    """
    url = url.strip()
    if not url:
        return ""
    if "://" not in url:
        url = "https://" + url
    try:
        parts = urlsplit(canonical_url(url))
        host = (parts.hostname or "").removeprefix("www.")
        port = parts.port
    except ValueError:  # malformed: only the same spelling can match it
        return url.lower()
    at = f":{port}" if port and port not in (80, 443) else ""
    query = f"?{parts.query}" if parts.query else ""
    return f"{host}{at}{parts.path.rstrip('/')}{query}".lower()


def same_page(a: str, b: str) -> bool:
    """Whether two links name the same page by `url_key` (empty links name nothing)."""
    return bool(a.strip() and b.strip()) and url_key(a) == url_key(b)
