"""Document → retrievable passages of at most `chunk.target_words` words, split along headings.

Every chunk is an exact slice of `Document.text` (`doc.text[start:end] == chunk.text`), so a
citation can point back into the page. Sections (by markdown heading) are split with langchain's
RecursiveCharacterTextSplitter; fenced code blocks are masked as one "line" first, so the splitter
only cuts inside code that alone is longer than a chunk, and a heading is glued to its first
paragraph. Length is counted in words, and also in estimated word-pieces: the embedding model reads
at most 256 of them for context header + passage, and 165 words of code or tables are often 500+.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from langchain_text_splitters import RecursiveCharacterTextSplitter

from core.records import CHUNKER_VERSION, Chunk, Document, Resource
from core.settings import ChunkSettings

log = logging.getLogger(__name__)

# CHUNKER_VERSION (core/records.py): bump it when chunk boundaries or the context header change.

_CODE_NEWLINE = "\x0b"  # vertical tab: whitespace to str.split(), a separator tried after "\n"
_GLUE = "\x1c"  # also whitespace to str.split() and str.strip(), and no separator at all
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_TOKEN = re.compile(r"\w+|[^\w\s]")
_PLAIN_WORD = re.compile(r"[A-Za-z][a-z]*")
_SEPARATORS = ["\n\n", "\n", _CODE_NEWLINE, ". ", "? ", "! ", "; ", ", ", " ", ""]


def count_words(text: str) -> int:
    return len(text.split())


def estimate_wordpieces(text: str) -> int:
    """About how many word-pieces a BERT-style tokenizer makes of `text`, without loading one.

    A plain word (letters, at most 12) is one piece, a punctuation mark one, anything else
    (identifiers, numbers, long words) one per 3 characters; times 1.1. On the corpus's paragraphs
    the MiniLM tokenizer's count is 0.8–1.2 times this (5th–95th percentile) for prose, code and
    tables alike; a plain word count is off by 1.3–3.8 times on code, tables and URLs.
    """
    return math.ceil(_wordpieces(text))


def _wordpieces(text: str) -> float:
    pieces = 0
    for tok in _TOKEN.findall(text):
        if not (tok[0].isalnum() or tok[0] == "_") or (len(tok) <= 12 and _PLAIN_WORD.fullmatch(tok)):
            pieces += 1
        else:
            pieces += -(-len(tok) // 3)
    return pieces * 1.1


def _length(target_words: int, wordpieces: int) -> Callable[[str], float]:
    """Length in words, or more when the text is dense in word-pieces.

    Prose is bounded by `target_words`; code and tables, where 165 words can be 500+ word-pieces
    the embedder never reads, by `wordpieces` (scaled so both limits meet at target_words).
    Not rounded: the splitter adds up the lengths of small pieces.
    """
    if wordpieces <= 0:
        return count_words
    scale = target_words / wordpieces
    return lambda text: max(count_words(text), _wordpieces(text) * scale)


def text_budget(settings: ChunkSettings, context: str) -> int:
    """Word-pieces left for the passage: the embedder reads the context header and the passage together."""
    if not settings.max_wordpieces:
        return 0
    return max(settings.max_wordpieces // 2, settings.max_wordpieces - estimate_wordpieces(context) - 1)


def chunker_key(settings: ChunkSettings) -> str:
    """What the chunks depend on besides the text: stored chunks built under another key are stale."""
    return (
        f"v{CHUNKER_VERSION}:{settings.target_words}:{settings.overlap_words}:"
        f"{settings.min_chunk_words}:{settings.max_wordpieces}"
    )


@dataclass(frozen=True)
class Section:
    """A run of text under one heading path: [start, end) in the document text."""

    path: tuple[str, ...]
    start: int
    end: int


def clean_heading(raw: str) -> str:
    text = _MD_LINK.sub(r"\1", raw)
    text = re.sub(r"[*_`]+", "", text).replace("\\", "")
    return re.sub(r"\s+", " ", text).strip()


def _lines(text: str) -> list[tuple[int, str]]:
    out, pos = [], 0
    for line in text.splitlines(keepends=True):
        out.append((pos, line.rstrip("\n")))
        pos += len(line)
    return out


@dataclass
class _Layout:
    sections: list[Section]
    code_spans: list[tuple[int, int]]  # fenced blocks, fence lines included
    heading_gaps: list[tuple[int, int]]  # from a heading line's end to the next non-blank line


_Row = tuple[int, str, str, int, str]


def _classify(text: str) -> tuple[list[_Row], list[tuple[int, int]]]:
    """(offset, line, kind, level, heading) per line, and the fenced code blocks' spans.

    kind is blank / code / heading / underline / body.
    """
    rows: list[_Row] = []
    code_spans: list[tuple[int, int]] = []
    fence: str | None = None
    fence_start = 0
    for pos, line in _lines(text):
        stripped = line.strip()
        if fence is not None:
            rows.append((pos, line, "code", 0, ""))
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                code_spans.append((fence_start, pos + len(line)))
                fence = None
        elif match := _FENCE.match(line):
            fence, fence_start = match.group(1), pos
            rows.append((pos, line, "code", 0, ""))
        elif not stripped:
            rows.append((pos, line, "blank", 0, ""))
        elif match := _ATX.match(line):
            rows.append((pos, line, "heading", len(match.group(1)), clean_heading(match.group(2))))
        elif (setext := _SETEXT.match(line)) and len(setext.group(1)) >= 2 and _setext_title(rows):
            # "Title" underlined by === or ---: the line above becomes the heading.
            prev_pos, prev, *_ = rows[-1]
            rows[-1] = (prev_pos, prev, "heading", 1 if setext.group(1)[0] == "=" else 2, clean_heading(prev))
            rows.append((pos, line, "underline", 0, ""))
        else:
            rows.append((pos, line, "body", 0, ""))
    if fence is not None:  # an unclosed fence runs to the end
        code_spans.append((fence_start, len(text)))
    return rows, code_spans


def _setext_title(rows: list[_Row]) -> bool:
    """Is the last line a lone paragraph line (not a list item or a table row)?"""
    if not rows or rows[-1][2] != "body":
        return False
    line = rows[-1][1]
    if "|" in line or re.match(r"^\s*([-*+>]\s|\d+[.)]\s)", line):
        return False
    return len(rows) < 2 or rows[-2][2] == "blank"


def split_sections(text: str) -> _Layout:
    """Sections by ATX/setext heading, ignoring '#' lines inside code.

    A section holding nothing but its heading joins the next one, so "## Part" followed by
    "### Step 1" is one section, not a chunk of two words.
    """
    rows, code_spans = _classify(text)
    layout = _Layout([], code_spans, [])
    stack: list[tuple[int, str]] = []  # (level, heading)
    start, has_body = 0, False
    for index, (pos, line, kind, level, heading) in enumerate(rows):
        end = pos + len(line)
        if kind == "heading":
            if pos > start and has_body:
                layout.sections.append(Section(tuple(h for _, h in stack), start, pos))
                start, has_body = pos, False
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading))
            following = next((r[0] for r in rows[index + 1 :] if r[2] not in ("blank", "underline")), len(text))
            layout.heading_gaps.append((end, following))
        elif kind in ("body", "code"):
            has_body = True
    if len(text) > start:
        if has_body or not layout.sections:
            layout.sections.append(Section(tuple(h for _, h in stack), start, len(text)))
        else:  # trailing headings with nothing under them stay with the section before
            last = layout.sections.pop()
            layout.sections.append(Section(last.path, last.start, len(text)))
    return layout


def _mask(text: str, layout: _Layout) -> str:
    """Same length as `text`, with line breaks the splitter must not cut at replaced.

    Inside fenced code they become a low-priority separator (code splits only when it alone
    exceeds a chunk); after a heading they become plain whitespace, gluing it to its first paragraph.
    """
    chars = list(text)
    for a, b in layout.code_spans:
        for i in range(a, b):
            if chars[i] == "\n":
                chars[i] = _CODE_NEWLINE
    for a, b in layout.heading_gaps:
        for i in range(a, b):
            if chars[i] == "\n":
                chars[i] = _GLUE
    return "".join(chars)


def context_header(resource: Resource, heading_path: tuple[str, ...] = (), doc_title: str = "") -> str:
    """What a passage cannot say about itself: which resource, where in the guide, and why it's listed."""
    lines = [resource.title + (f" — {resource.authors}" if resource.authors else "")]
    place = " › ".join(p for p in (resource.topic, resource.section) if p)
    if resource.tier is not None:
        place = f"{place} › Tier {resource.tier}" if place else f"Tier {resource.tier}"
    if place:
        lines.append(place)
    if resource.note:
        lines.append(resource.note)
    skip = {resource.title.strip().lower(), doc_title.strip().lower()}
    section = [h for h in heading_path if h.strip().lower() not in skip]
    if section:
        lines.append("Section: " + " › ".join(section))
    return "\n".join(line for line in lines if line.strip())


@dataclass
class _Span:
    start: int
    end: int
    path: tuple[str, ...]
    budget: int  # word-pieces allowed for the text (0: no cap)


def _common_path(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    out = []
    for x, y in zip(a, b):
        if x != y:
            break
        out.append(x)
    return tuple(out)


def _merge_small(spans: list[_Span], text: str, settings: ChunkSettings) -> list[_Span]:
    """Fold chunks under `min_chunk_words` (a heading and one line) into a neighbouring section."""

    def small(span: _Span) -> bool:
        return count_words(text[span.start : span.end]) < settings.min_chunk_words

    def joined(a: _Span, b: _Span) -> _Span | None:
        """a and b as one chunk, if they don't overlap and the result still fits."""
        if b.start < a.end:
            return None
        budget = min(a.budget, b.budget)
        if _length(settings.target_words, budget)(text[a.start : b.end]) > settings.target_words:
            return None
        return _Span(a.start, b.end, _common_path(a.path, b.path), budget)

    out: list[_Span] = []
    for span in spans:  # forward: a small chunk absorbs the following section's first chunk
        both = joined(out[-1], span) if out and small(out[-1]) else None
        if both:
            out[-1] = both
        else:
            out.append(span)
    merged: list[_Span] = []
    for span in out:  # backward: a small chunk left at a section's end joins the one before
        both = joined(merged[-1], span) if merged and small(span) else None
        if both:
            merged[-1] = both
        else:
            merged.append(span)
    return merged


@lru_cache(maxsize=256)
def _splitter(size: int, overlap: int, target_words: int, wordpieces: int) -> RecursiveCharacterTextSplitter:
    return RecursiveCharacterTextSplitter(
        chunk_size=size,
        chunk_overlap=min(overlap, size // 2),
        length_function=_length(target_words, wordpieces),
        separators=_SEPARATORS,
        keep_separator="end",
        strip_whitespace=True,
    )


def _split_body(body: str, size: int, budget: int, settings: ChunkSettings) -> list[tuple[int, int]]:
    """langchain's recursive split of one (masked) section, located back as offsets."""
    out: list[tuple[int, int]] = []
    cursor = 0
    for piece in _splitter(size, settings.overlap_words, settings.target_words, budget).split_text(body):
        pos = body.find(piece, cursor)
        if pos < 0:  # cannot happen with keep_separator; guard against a library change
            log.warning("chunk not found in its section; searching from the section start")
            pos = body.find(piece)
            if pos < 0:
                continue
        out.append((pos, pos + len(piece)))
        cursor = pos + 1
    return out


def _balanced_split(body: str, budget: int, settings: ChunkSettings) -> list[tuple[int, int]]:
    """Greedy splitting leaves a runt at a section's end; a slightly smaller size often evens it out."""
    floor = max(settings.min_chunk_words, int(settings.target_words * 0.7))
    best: list[tuple[int, int]] = []
    best_smallest = -1
    for size in range(settings.target_words, floor - 1, -10):
        pieces = _split_body(body, size, budget, settings)
        smallest = min((count_words(body[a:b]) for a, b in pieces), default=0)
        if len(pieces) <= 1 or smallest >= settings.min_chunk_words:
            return pieces
        if smallest > best_smallest:
            best, best_smallest = pieces, smallest
    return best


def split_spans(
    text: str, settings: ChunkSettings, context_for: Callable[[tuple[str, ...]], str] | None = None
) -> list[_Span]:
    """Chunk boundaries as (start, end, heading path); each is an exact slice of `text`.

    `context_for(heading_path)` is the header embedded with the chunk; its word-pieces come out of
    the chunk's budget.
    """
    layout = split_sections(text)
    masked = _mask(text, layout)
    spans: list[_Span] = []
    for section in layout.sections:
        budget = text_budget(settings, context_for(section.path) if context_for else "")
        for a, b in _balanced_split(masked[section.start : section.end], budget, settings):
            spans.append(_Span(section.start + a, section.start + b, section.path, budget))
    return _merge_small(spans, text, settings)


def make_chunk_id(resource_id: str, doc: Document, ordinal: int, text: str) -> str:
    """Stable while the page and the chunking are: resource, a digest of source and text, ordinal."""
    digest = hashlib.sha1(f"{doc.url}\0{doc.source_kind}\0{text}".encode()).hexdigest()[:12]
    return f"{resource_id}:{digest}:{ordinal}"


def chunk_document(doc: Document, resource: Resource, settings: ChunkSettings | None = None) -> list[Chunk]:
    """Heading-aware chunks of one document, each with its resource's context header."""
    settings = settings or ChunkSettings()

    def context_for(path: tuple[str, ...]) -> str:
        return context_header(resource, path, doc.title)

    paged = doc.source_kind == "pdf" and "\f" in doc.text
    chunks = []
    for ordinal, span in enumerate(split_spans(doc.text, settings, context_for)):
        text = doc.text[span.start : span.end]
        extra: dict[str, object] = {"ordinal": ordinal, "words": count_words(text), "doc_title": doc.title}
        if paged:  # the PDF page the chunk starts on: pages are separated by a form feed (ingest/extract.py)
            extra["page"] = 1 + doc.text.count("\f", 0, span.start)
        chunks.append(
            Chunk(
                chunk_id=make_chunk_id(resource.id, doc, ordinal, text),
                resource_id=resource.id,
                url=doc.url,
                heading_path=span.path,
                start=span.start,
                end=span.end,
                text=text,
                context=context_for(span.path),
                source_kind=doc.source_kind,
                extra=extra,
            )
        )
    return chunks
