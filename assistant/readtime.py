"""How long a resource takes to read, from its own extracted text; unknown when there is none.

Why from the text: a learner planning an evening needs minutes, and the crawl already holds each page's
words. The rules (all knobs in `settings.learning`):

* prose (blogs, docs, sites, anything else with text): words / `words_per_minute`;
* a paper: its full text (a PDF) at `paper_words_per_minute`; with only the abstract page extracted, the
  fixed `paper_abstract_only_minutes` (a rule stated in the settings, shown as such, not a word count);
* a repository: its README at `words_per_minute` plus `repo_extra_minutes` to look through the code;
* `unknown_kinds` (talks, books, forums: their page says nothing of the work's length), card-only
  resources (nothing extracted) and the opening page of a multi-page document whose next pages were not
  fetched (a manual's landing page, ingest/inlinks.continued_pages): unknown, never guessed.

Words come from the stored chunks with their overlaps removed (each chunk's character offsets say where it
sits in its page), so the index's docstore and the ingest store give the same count.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from core.records import Chunk, Resource
from core.settings import LearningSettings, Settings
from core.urls import url_key

log = logging.getLogger(__name__)

TEXT = "text"  # words at the reading pace
PAPER_TEXT = "paper-text"  # a paper's full text at the paper pace
PAPER_RULE = "paper-rule"  # a paper with only its abstract extracted: the fixed rule
REPO = "repo"  # README words + the code-browsing allowance
UNKNOWN = "unknown"

BASIS_LABELS = {
    TEXT: "from its text",
    PAPER_TEXT: "from the paper's full text",
    PAPER_RULE: "paper rule (only the abstract was extracted)",
    REPO: "README plus time to look through the code",
    UNKNOWN: "unknown",
}


@dataclass(frozen=True)
class Estimate:
    """One resource's reading time. `minutes` is None when unknown; `why` says why in a few words."""

    resource_id: str
    minutes: int | None
    basis: str
    words: int = 0
    why: str = ""

    @property
    def known(self) -> bool:
        return self.minutes is not None

    def label(self) -> str:
        return format_minutes(self.minutes) if self.minutes is not None else "unknown"

    def to_dict(self) -> dict[str, object]:
        return {"resource_id": self.resource_id, "minutes": self.minutes, "basis": self.basis,
                "words": self.words, "why": self.why or BASIS_LABELS.get(self.basis, "")}


@dataclass(frozen=True)
class Total:
    """Minutes summed over the resources whose time is known, and how many are unknown."""

    minutes: int = 0
    unknown: int = 0
    count: int = 0

    def label(self) -> str:
        if not self.count:
            return "nothing left"
        if self.minutes == 0 and self.unknown:
            return f"{self.unknown} unknown"
        more = f" + {self.unknown} unknown" if self.unknown else ""
        return f"{format_minutes(self.minutes)}{more}"

    def to_dict(self) -> dict[str, object]:
        return {"minutes": self.minutes, "unknown": self.unknown, "resources": self.count, "label": self.label()}


def format_minutes(minutes: int) -> str:
    """'8 min', '1 h', '2 h 15 min': how a learner reads a duration."""
    if minutes < 60:
        return f"{minutes} min"
    hours, rest = divmod(minutes, 60)
    return f"{hours} h" + (f" {rest} min" if rest else "")


def page_words(chunks: Iterable[Chunk]) -> dict[tuple[str, str], int]:
    """Words per (url, source_kind) of a resource's extracted pages, each character counted once: chunks
    overlap by `chunk.overlap_words`, and their offsets say by how much."""
    by_page: dict[tuple[str, str], list[Chunk]] = defaultdict(list)
    for chunk in chunks:
        if chunk.source_kind != "card":
            by_page[(chunk.url, chunk.source_kind)].append(chunk)
    words: dict[tuple[str, str], int] = {}
    for key, parts in by_page.items():
        covered = 0  # end offset of the text counted so far
        total = 0
        for chunk in sorted(parts, key=lambda c: (c.start, c.end)):
            if chunk.end <= covered:
                continue
            skip = max(0, covered - chunk.start)
            total += len(chunk.text[skip:].split())
            covered = chunk.end
        words[key] = total
    return words


def estimate(resource: Resource, chunks: list[Chunk], cfg: LearningSettings,
             continued: Collection[str] = frozenset()) -> Estimate:
    """The reading time of one resource from its own chunks (card chunks are ignored); `continued` holds the
    url_keys of pages that open a multi-page document whose next pages were not fetched."""
    rid = resource.id
    pages = page_words(chunks)
    if resource.kind in cfg.unknown_kinds:
        return Estimate(rid, None, UNKNOWN, sum(pages.values()),
                        f"a {resource.kind}'s page says nothing of its length")
    if not pages:
        return Estimate(rid, None, UNKNOWN, 0, "no extracted text (catalog card only)")
    if resource.kind not in ("paper", "repo") and any(url_key(url) in continued for url, _ in pages):
        return Estimate(rid, None, UNKNOWN, sum(pages.values()),
                        "only the first page of a multi-page document was extracted")
    if resource.kind == "paper":
        full = sum(n for (_, kind), n in pages.items() if kind == "pdf")
        if full:
            return Estimate(rid, _minutes(full, cfg.paper_words_per_minute), PAPER_TEXT, full)
        words = sum(pages.values())
        if cfg.paper_abstract_only_minutes <= 0:
            return Estimate(rid, None, UNKNOWN, words, "only the abstract was extracted")
        return Estimate(rid, cfg.paper_abstract_only_minutes, PAPER_RULE, words)
    words = sum(pages.values())
    if resource.kind == "repo":
        return Estimate(rid, _minutes(words, cfg.words_per_minute) + cfg.repo_extra_minutes, REPO, words)
    return Estimate(rid, _minutes(words, cfg.words_per_minute), TEXT, words)


def _minutes(words: int, per_minute: int) -> int:
    return max(1, math.ceil(words / per_minute))


def estimate_all(resources: list[Resource], chunks: Iterable[Chunk], cfg: LearningSettings,
                 continued: Collection[str] = frozenset()) -> dict[str, Estimate]:
    """Every resource's estimate, by id."""
    by_resource: dict[str, list[Chunk]] = defaultdict(list)
    for chunk in chunks:
        by_resource[chunk.resource_id].append(chunk)
    return {r.id: estimate(r, by_resource.get(r.id, []), cfg, continued) for r in resources}


def stored_continuations(settings: Settings) -> set[str]:
    """The crawled pages that open a multi-page document (from the links kept at the last crawl)."""
    from ingest.inlinks import continued_pages, load_links

    return continued_pages(load_links(settings.inlinks_file))


def total(estimates: Iterable[Estimate]) -> Total:
    minutes = unknown = count = 0
    for est in estimates:
        count += 1
        if est.minutes is None:
            unknown += 1
        else:
            minutes += est.minutes
    return Total(minutes, unknown, count)


def stored_chunks(settings: Settings) -> list[Chunk]:
    """The extracted text's chunks without loading a searcher: the ingest store, else the index's docstore,
    else none (a fresh data dir: every time is then unknown)."""
    if settings.store_file.exists():
        from ingest.store import ChunkStore

        return ChunkStore(settings.store_file).chunks()
    from index.docstore import DOCSTORE_FILE, DocStore

    path = settings.index_dir / DOCSTORE_FILE
    if path.exists():
        return DocStore.read(path).chunks
    log.info("no stored chunks in %s: reading times are unknown", settings.home)
    return []
