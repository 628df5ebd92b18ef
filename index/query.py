"""Reading a query the way a learner means it: kind constraints ("papers only", "no repos"), author or
publisher constraints ("anything by Lei Mao", "NVIDIA's blog"), GPU identifiers (TMA, WGMMA, E4M3, H100),
and expansions from the corpus's own short/long forms (index/aliases.py: "tensor memory accelerator" ↔ TMA).

Nothing here ranks; it produces a `QueryIntent` the reranker and the confidence estimate read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from index.aliases import AliasTable
from core.text import tokenize

# Words that name a kind of resource → the catalog's kinds.
KIND_WORDS: dict[str, tuple[str, ...]] = {
    "paper": ("paper",), "papers": ("paper",), "arxiv": ("paper",), "preprint": ("paper",),
    "preprints": ("paper",), "publication": ("paper",), "publications": ("paper",),
    "repo": ("repo",), "repos": ("repo",), "repository": ("repo",), "repositories": ("repo",),
    "code": ("repo",), "github": ("repo",), "library": ("repo",), "libraries": ("repo",),
    "blog": ("blog",), "blogs": ("blog",), "post": ("blog",), "posts": ("blog",), "article": ("blog",),
    "articles": ("blog",), "writeup": ("blog",), "writeups": ("blog",), "tutorial": ("blog", "docs"), "tutorials": ("blog", "docs"),
    "docs": ("docs",), "documentation": ("docs",), "manual": ("docs",), "reference": ("docs",),
    "video": ("video",), "videos": ("video",), "talk": ("video",), "talks": ("video",), "lecture": ("video",),
    "lectures": ("video",), "book": ("book",), "books": ("book",), "textbook": ("book",),
    "textbooks": ("book",), "model": ("model",), "models": ("model",), "checkpoint": ("model",),
    "weights": ("model",), "community": ("community",), "discord": ("community",), "forum": ("community",),
    "forums": ("community",), "substack": ("site",), "newsletter": ("site",),
}
_KIND_RE = "|".join(sorted((re.escape(w) for w in KIND_WORDS), key=len, reverse=True))
_KIND_PHRASE = rf"(?:(?:code|model|blog|github|research|video)\s+)?(?:{_KIND_RE})(?:\s+(?:cards?|posts?|repos?))?"
_ONLY_AFTER = re.compile(rf"\b({_KIND_PHRASE})\s+only\b", re.I)
_ONLY_BEFORE = re.compile(rf"\b(?:only|just|exclusively)\s+(?:(?:[A-Z][\w.-]*\s+){{0,2}})?({_KIND_PHRASE})\b", re.I)
_NEGATED = re.compile(
    rf"\b(?:no|not|without|except|excluding|skip)\s+(?:the\s+|any\s+)?({_KIND_PHRASE}(?:\s*(?:,|or|and|nor)\s*(?:the\s+)?{_KIND_PHRASE})*)",
    re.I,
)
_ONLY_AUTHOR = re.compile(r"\b(?:only|just)\s+(?:his|her|their|its)\b|\b(?:only|just|exclusively)\s+(?:by|from)\b", re.I)
_BY_NAME = re.compile(r"\b(?:by|from|author(?:ed)?\s+by|written\s+by)\s+((?:[A-Z][\w.-]*)(?:\s+[A-Z][\w.-]*){0,3})")
_POSSESSIVE = re.compile(r"\b([A-Z][\w.-]*(?:\s+[A-Z][\w.-]*){0,2})['’]s\b")
_IDENTIFIER = re.compile(r"\b(?=[A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*[A-Z0-9])[A-Za-z][A-Za-z0-9-]*[A-Za-z0-9]\b|\b[A-Za-z]+\d[\w-]*\b")
_NOT_NAMES = {"i", "i'd", "i've", "what", "which", "why", "how", "is", "any", "anything", "only", "the", "a", "an",
              "can", "does", "do", "where", "when", "who", "my", "it", "there", "that", "this", "in", "on"}

_INNER_HYPHEN = re.compile(r"(?<=[A-Za-z])-(?=[A-Za-z])")


@dataclass
class QueryIntent:
    """What the query asks for besides topical relevance."""

    text: str
    terms: list[str]  # content tokens of the query (BM25 tokenizer)
    expansions: list[str]  # tokens of the corpus's short/long forms for the query's wording, not in `terms`
    identifiers: list[str]  # GPU-ish identifiers as tokens: tma, wgmma, e4m3, h100, …
    kinds_only: set[str] = field(default_factory=set)
    kinds_excluded: set[str] = field(default_factory=set)
    names: list[str] = field(default_factory=list)  # author / publisher names as written
    names_only: bool = False

    @property
    def has_constraints(self) -> bool:
        return bool(self.kinds_only or self.kinds_excluded or (self.names and self.names_only))


def _kinds_in(phrase: str) -> set[str]:
    out: set[str] = set()
    words = re.findall(r"[\w-]+", phrase.lower())
    for word in words:
        out.update(KIND_WORDS.get(word, ()))
    return out


def parse_query(
    text: str, aliases: AliasTable | None = None, common_words: set[str] | frozenset[str] = frozenset()
) -> QueryIntent:
    """The query's terms, expansions (from `aliases`, when given), identifiers and constraints."""
    terms = tokenize(text)
    expanded = tokenize(" ".join(aliases.expand(text, common_words))) if aliases is not None else []
    expansions = [t for t in dict.fromkeys(expanded) if t not in terms]
    identifiers = list(dict.fromkeys(t for m in _IDENTIFIER.finditer(text) for t in tokenize(m.group(0))[:1]))
    intent = QueryIntent(text=text, terms=terms, expansions=expansions, identifiers=identifiers)
    plain = _INNER_HYPHEN.sub("", text)  # "write-ups" is the kind word "writeups"
    for pattern in (_ONLY_AFTER, _ONLY_BEFORE):
        for match in pattern.finditer(plain):
            intent.kinds_only |= _kinds_in(match.group(1))
    for match in _NEGATED.finditer(plain):
        intent.kinds_excluded |= _kinds_in(match.group(1))
    intent.kinds_excluded -= intent.kinds_only
    names = [m.group(1) for m in _BY_NAME.finditer(text)] + [m.group(1) for m in _POSSESSIVE.finditer(text)]
    intent.names = [n for n in dict.fromkeys(names) if n.split()[0].lower() not in _NOT_NAMES]
    intent.names_only = bool(intent.names) and bool(_ONLY_AUTHOR.search(text))
    return intent
