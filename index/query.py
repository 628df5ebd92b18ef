"""Reading a query the way a learner means it: kind constraints ("papers only", "no repos"), author or
publisher constraints ("anything by Lei Mao", "NVIDIA's write-up"), GPU identifiers (TMA, WGMMA, E4M3, H100),
and a small domain glossary that maps plain wording onto the list's vocabulary ("grouped-query" → GQA).

Nothing here ranks; it produces a `QueryIntent` the reranker and the confidence estimate read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from index.bm25 import tokenize

# Words that name a kind of resource → the catalog's kinds.
KIND_WORDS: dict[str, tuple[str, ...]] = {
    "paper": ("paper",), "papers": ("paper",), "arxiv": ("paper",), "preprint": ("paper",),
    "preprints": ("paper",), "publication": ("paper",), "publications": ("paper",),
    "repo": ("repo",), "repos": ("repo",), "repository": ("repo",), "repositories": ("repo",),
    "code": ("repo",), "github": ("repo",), "library": ("repo",), "libraries": ("repo",),
    "blog": ("blog",), "blogs": ("blog",), "post": ("blog",), "posts": ("blog",), "article": ("blog",),
    "articles": ("blog",), "write-up": ("blog",), "write-ups": ("blog",), "writeup": ("blog",),
    "writeups": ("blog",), "tutorial": ("blog", "docs"), "tutorials": ("blog", "docs"),
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

# Plain wording → the list's own vocabulary. Keys are matched on word boundaries, case-insensitively.
GLOSSARY: dict[str, str] = {
    "grouped-query": "gqa grouped query attention",
    "grouped query": "gqa grouped query attention",
    "multi-query": "mqa multi query attention",
    "latent attention": "mla multi-head latent attention",
    "attention matrix": "flashattention attention",
    "fused attention": "flashattention fused attention",
    "fusing": "fusion fused",
    "fused": "fusion",
    "fuse": "fusion fused",
    "merging ops": "fusion",
    "tensor memory accelerator": "tma",
    "bulk copy": "tma",
    "warpgroup": "wgmma",
    "distributed shared memory": "dsmem cluster",
    "another sm's shared memory": "distributed shared memory cluster",
    "thread block cluster": "cluster dsmem",
    "measured": "microbenchmark microbenchmarking benchmark",
    "measuring": "microbenchmark microbenchmarking benchmark",
    "measure": "microbenchmark microbenchmarking benchmark",
    "all-reduce": "allreduce collective nccl",
    "allreduce": "all-reduce collective nccl",
    "collectives": "nccl collective communication",
    "8-bit float": "fp8",
    "8-bit floating": "fp8",
    "4-bit": "fp4 nvfp4",
    "low-precision": "fp8 fp4 precision",
    "number formats": "fp8 fp4 precision formats",
    "paged": "pagedattention paged kv cache",
    "kv cache": "kv cache",
    "draft": "speculative decoding",
    "drafting": "speculative decoding",
    "constrained decoding": "structured generation",
    "json": "structured generation",
    "stream capture": "cuda graphs",
    "launch overhead": "cuda graphs",
    "kernel launches": "cuda graphs launch",
    "deep learning compiler": "compiler tvm mlir",
    "auto-tunes": "auto-tuning ansor",
    "autotune": "auto-tuning ansor",
    "tensor parallel": "tensor parallelism tp megatron",
    "hang out": "community discord",
    "chat": "community discord",
    "llm-written": "llm-generated kernels",
    "ai-written": "llm-generated kernels",
    "assembly": "ptx sass",
    "disassembler": "sass",
    "matmul": "gemm matrix multiplication",
    "matrix multiply": "gemm matmul",
    "bank conflicts": "bank conflicts shared memory padding",
    "tpu": "tpu jax pallas",
    "instinct": "mi300x amd rocm",
}
_GLOSSARY_RE = re.compile(r"\b(" + "|".join(re.escape(k) for k in sorted(GLOSSARY, key=len, reverse=True)) + r")\b", re.I)


@dataclass
class QueryIntent:
    """What the query asks for besides topical relevance."""

    text: str
    terms: list[str]  # content tokens of the query (BM25 tokenizer)
    expansions: list[str]  # glossary tokens not already in `terms`
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


def expand(text: str) -> list[str]:
    """Glossary tokens for the wording found in `text`."""
    out: list[str] = []
    for match in _GLOSSARY_RE.finditer(text):
        out.extend(tokenize(GLOSSARY[match.group(1).lower()]))
    return out


def parse_query(text: str) -> QueryIntent:
    terms = tokenize(text)
    expansions = [t for t in dict.fromkeys(expand(text)) if t not in terms]
    identifiers = list(dict.fromkeys(t for m in _IDENTIFIER.finditer(text) for t in tokenize(m.group(0))[:1]))
    intent = QueryIntent(text=text, terms=terms, expansions=expansions, identifiers=identifiers)
    for pattern in (_ONLY_AFTER, _ONLY_BEFORE):
        for match in pattern.finditer(text):
            intent.kinds_only |= _kinds_in(match.group(1))
    for match in _NEGATED.finditer(text):
        intent.kinds_excluded |= _kinds_in(match.group(1))
    intent.kinds_excluded -= intent.kinds_only
    names = [m.group(1) for m in _BY_NAME.finditer(text)] + [m.group(1) for m in _POSSESSIVE.finditer(text)]
    intent.names = [n for n in dict.fromkeys(names) if n.split()[0].lower() not in _NOT_NAMES]
    intent.names_only = bool(intent.names) and bool(_ONLY_AUTHOR.search(text))
    return intent
