"""Matching a query against each resource's own fields (title, note, authors, URL), IDF-weighted over the
catalog, with typo tolerance (rapidfuzz) on title words and catalog names (authors, publishers, URL hosts).

This is lexical evidence that passages alone miss: a short title ("Horovod") or an author ("Lei Mao") is one
line in one card, drowned by long pages in BM25 and weak in the embedding.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from rapidfuzz import fuzz, process

from index.aliases import AliasTable
from core.text import tokenize
from index.query import QueryIntent, parse_query
from core.records import Resource

FUZZY_MIN_LEN = 5
FUZZY_CUTOFF = 84.0
_ORG_SUFFIXES = {"ai", "intl", "project", "lang", "inc", "labs", "org", "team", "hq"}


@dataclass
class FieldEvidence:
    """Per-resource lexical evidence, each in [0, 1]."""

    title: float  # IDF share of the title's words present in the query (typos tolerated), and its rarest one
    identifiers: float  # IDF share of the query's GPU identifiers (TMA, E4M3, …) found in title or note
    named: bool  # a catalog name in the query (author, publisher, site) points at this resource


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


@dataclass(frozen=True)
class _UrlParts:
    site: str  # the registrable host label: "nvidia" for developer.nvidia.com, "github" for x.github.io
    owner: str  # who the URL says published it on a shared site: a subdomain or the first path segment


def _url_parts(url: str) -> _UrlParts | None:
    parts = urlsplit(url)
    labels = parts.netloc.lower().removeprefix("www.").split(".")
    if len(labels) < 2:
        return None
    segments = [s for s in parts.path.split("/") if s]
    if len(labels) >= 3:
        owner = labels[-3]
    elif segments and (segments[0].startswith("@") or len(segments) >= 2):
        owner = segments[0].removeprefix("@").lower()
    else:
        owner = ""
    return _UrlParts(site=labels[-2], owner=owner)


def _platforms(resources: list[Resource]) -> set[str]:
    """Sites that host many publishers (github, substack, medium): the URL names two or more owners under the
    site, and no author field names the site itself. Derived from the catalog's URLs, no list of hosts."""
    owners: dict[str, set[str]] = {}
    named: set[str] = set()
    for r in resources:
        url = _url_parts(r.url) if r.url else None
        if url is None:
            continue
        owners.setdefault(url.site, set())
        if url.owner:
            owners[url.site].add(url.owner)
        named |= set(re.findall(r"[a-z0-9]+", r.authors.lower())) | {_squash(r.authors)}
    return {site for site, who in owners.items() if len(who) >= 2 and _squash(site) not in named}


def _labels(url: str, platforms: set[str]) -> set[str]:
    """Publisher labels of a URL: its site ("nvidia"), or on a hosting platform the owner ("leimao")."""
    parts = _url_parts(url) if url else None
    if parts is None:
        return set()
    out = {parts.owner} if parts.site in platforms else {parts.site}
    names = {_squash(label) for label in out if label}
    for label in out:  # "colfax-intl" → colfax, "deepseek-ai" → deepseek; not "gpu-mode" → gpu
        head, _, tail = label.rpartition("-")
        if tail in _ORG_SUFFIXES and len(_squash(head)) >= 5:
            names.add(_squash(head))
    return {name for name in names if len(name) >= 3}


def _author_names(authors: str) -> set[str]:
    text = re.sub(r"\bet al\.?", "", authors)
    names = {text.strip()} | {p.strip() for p in re.split(r",|&|\band\b", text)}
    out = set()
    for name in names:
        words = re.findall(r"[\w-]+", name)
        if not words:
            continue
        out.add(" ".join(w.lower() for w in words))
        if len(words) > 1 and words[0].isupper() and len(words[0]) >= 2:  # "AMD ROCm Blog" → "amd"
            out.add(words[0].lower())
    return {n for n in out if len(n) >= 2}


class FieldIndex:
    """The catalog's fields, tokenised once; `evidence` scores one resource against a parsed query."""

    def __init__(self, resources: list[Resource], aliases: AliasTable | None = None) -> None:
        self.resources = resources
        self.aliases = aliases
        self.rows = {r.id: i for i, r in enumerate(resources)}  # resource id → its row in every field list
        self.common_words: set[str] = set()  # ordinary English words (set by the searcher once its model loads)
        self.titles = [set(tokenize(r.title)) for r in resources]
        self.notes = [set(tokenize(f"{r.note} {r.section} {r.authors}")) for r in resources]
        df: dict[str, int] = {}
        for i, r in enumerate(resources):
            for term in self.titles[i] | self.notes[i] | set(tokenize(f"{r.topic} {r.url}")):
                df[term] = df.get(term, 0) + 1
        n = max(len(resources), 1)
        self._df = df
        self._idf = {t: math.log(1 + n / c) for t, c in df.items()}
        self._idf_unseen = math.log(1 + n / 0.5)
        self._title_terms = {t for title in self.titles for t in title}
        self.title_vocab = sorted(t for t in self._title_terms if len(t) >= FUZZY_MIN_LEN)
        self.names: dict[str, set[int]] = {}
        platforms = _platforms(resources)
        for i, r in enumerate(resources):
            for name in _author_names(r.authors) | _labels(r.url, platforms):
                self.names.setdefault(name, set()).add(i)
            if m := re.match(r"^(.+?)['’]s\b", r.title):  # "Lei Mao's Log Book"
                self.names.setdefault(" ".join(re.findall(r"[\w-]+", m.group(1).lower())), set()).add(i)

    def parse(self, text: str) -> QueryIntent:
        """The query's intent, with expansions from this index's alias table."""
        return parse_query(text, self.aliases, self.common_words)

    def idf(self, term: str) -> float:
        return self._idf.get(term, self._idf_unseen)

    def df(self, term: str) -> int:
        """How many catalog entries mention the term in their title, note, authors, topic or URL."""
        return self._df.get(term, 0)

    def _fuzzy_terms(self, terms: list[str]) -> set[str]:
        """Title words that query words probably meant (typos): 'cutlas' → 'cutlass'."""
        out = set()
        for term in terms:
            if len(term) >= FUZZY_MIN_LEN and term not in self._idf:
                match = process.extractOne(term, self.title_vocab, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF)
                if match:
                    out.add(match[0])
        return out

    def named_resources(self, intent: QueryIntent) -> tuple[set[int], bool]:
        """Resources a catalog name in the query points at, and whether the query wants only those."""
        words = [w.lower() for w in re.findall(r"[\w-]+", intent.text)]
        grams = {" ".join(words[i : i + n]) for n in (1, 2, 3) for i in range(len(words) - n + 1)}
        squashed = {_squash(g) for g in grams}
        found: set[int] = set()
        only = intent.names_only
        for name, ids in self.names.items():
            if name in grams or (" " not in name and name in squashed and len(name) >= 4):
                found |= ids
                pattern = rf"\b(?:only|just|exclusively)\s+(?:by\s+|from\s+)?{re.escape(name)}\b"
                if re.search(pattern, intent.text, re.I):
                    only = True
        return found, only and bool(found)

    def _joined_terms(self, text: str) -> set[str]:
        """Title words written apart in the query: 'thunder kittens' → thunderkitten, 'deep gemm' → deepgemm."""
        words = re.findall(r"[A-Za-z0-9]+", text)
        out = set()
        for a, b in zip(words, words[1:], strict=False):
            joined = tokenize(a + b)
            if joined and joined[0] in self._title_terms:
                out.add(joined[0])
        return out

    def prepare(self, intent: QueryIntent) -> PreparedQuery:
        terms = set(intent.terms)
        return PreparedQuery(
            intent=intent,
            terms=terms | self._fuzzy_terms(intent.terms) | self._joined_terms(intent.text),
            expansions=set(intent.expansions) - terms,
            named=self.named_resources(intent),
        )

    def evidence(self, query: PreparedQuery, index: int) -> FieldEvidence:
        title, note = self.titles[index], self.notes[index]
        title_total = sum(self.idf(t) for t in title) or 1.0
        matched = title & query.terms
        expanded = (title & query.expansions) - matched
        coverage = (sum(self.idf(t) for t in matched) + 0.5 * sum(self.idf(t) for t in expanded)) / title_total
        # The rarest query word found in the title: "Pallas" in a long title is strong evidence on its own.
        rare = max((self.idf(t) for t in matched), default=0.0) / self._idf_unseen
        idents = [t for t in query.intent.identifiers if t in self._idf]
        ident_total = sum(self.idf(t) for t in idents)
        ident_hit = sum(self.idf(t) for t in idents if t in title or t in note)
        return FieldEvidence(
            title=min(1.0, 0.5 * coverage + 0.5 * rare),
            identifiers=ident_hit / ident_total if ident_total else 0.0,
            named=index in query.named[0],
        )


@dataclass
class PreparedQuery:
    intent: QueryIntent
    terms: set[str]
    expansions: set[str]
    named: tuple[set[int], bool]
