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

from index.bm25 import tokenize
from index.query import QueryIntent
from ingest.records import Resource

FUZZY_MIN_LEN = 5
FUZZY_CUTOFF = 84.0
# Host labels and path owners that name a platform, not a publisher.
_GENERIC_LABELS = {
    "github", "arxiv", "medium", "substack", "com", "org", "io", "dev", "ai", "net", "blog", "blogs", "docs",
    "www", "research", "developer", "p", "posts", "articles", "article", "linkedin", "youtube", "discord",
    "huggingface", "openreview", "usenix", "readthedocs", "bearblog", "gg", "cs", "toronto", "edu",
}

_ORG_SUFFIXES = {"ai", "intl", "project", "lang", "inc", "labs", "org", "team", "hq"}


@dataclass
class FieldEvidence:
    """Per-resource lexical evidence, each in [0, 1]."""

    title: float  # IDF share of the title's words present in the query (typos tolerated), and its rarest one
    identifiers: float  # IDF share of the query's GPU identifiers (TMA, E4M3, …) found in title or note
    named: bool  # a catalog name in the query (author, publisher, site) points at this resource


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _labels(url: str) -> set[str]:
    """Publisher-ish labels of a URL: its registrable host label, a subdomain of a hosting site, a repo owner."""
    if not url:
        return set()
    parts = urlsplit(url)
    host = parts.netloc.lower().removeprefix("www.")
    labels = host.split(".")
    out: set[str] = set()
    if len(labels) >= 2:
        out.add(labels[-2])
        if labels[-2] in {"github", "substack", "bearblog", "medium"} and len(labels) >= 3:
            out.add(labels[-3])
    segments = [s for s in parts.path.split("/") if s]
    if host == "github.com" and segments:
        out.add(segments[0])
    if host == "medium.com" and segments and segments[0].startswith("@"):
        out.add(segments[0][1:])
    names = {_squash(label) for label in out}
    for label in out:  # "colfax-intl" → colfax, "deepseek-ai" → deepseek; not "gpu-mode" → gpu
        head, _, tail = label.rpartition("-")
        if tail in _ORG_SUFFIXES and len(_squash(head)) >= 5:
            names.add(_squash(head))
    return {name for name in names if len(name) >= 3 and name not in _GENERIC_LABELS}


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
    return {n for n in out if n not in _GENERIC_LABELS and len(n) >= 2}


class FieldIndex:
    """The catalog's fields, tokenised once; `evidence` scores one resource against a parsed query."""

    def __init__(self, resources: list[Resource]) -> None:
        self.resources = resources
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
        for i, r in enumerate(resources):
            for name in _author_names(r.authors) | _labels(r.url):
                self.names.setdefault(name, set()).add(i)
            if m := re.match(r"^(.+?)['’]s\b", r.title):  # "Lei Mao's Log Book"
                self.names.setdefault(" ".join(re.findall(r"[\w-]+", m.group(1).lower())), set()).add(i)

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
