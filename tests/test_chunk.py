"""Chunking and catalog cards: sizes, overlap, exact offsets, heading paths and context headers."""

from __future__ import annotations

import random
import re

import pytest

from core.records import Document, Resource
from core.settings import ChunkSettings
from ingest.cards import card_chunk, card_chunks, card_document
from ingest.chunk import (
    CHUNKER_VERSION,
    chunk_document,
    chunker_key,
    context_header,
    count_words,
    estimate_wordpieces,
)
from ingest.extract import content_hash

WORDS = ("warp", "tile", "shared", "memory", "kernel", "tensor", "core", "latency", "bandwidth", "register",
         "occupancy", "pipeline", "thread", "block", "cache", "coalesced", "load", "store", "barrier", "async")


def resource(**fields: object) -> Resource:
    values: dict[str, object] = dict(
        id="example-com-gemm", title="How to Optimize a CUDA Matmul", url="https://example.com/gemm",
        authors="Simon Boehm", note="Step-by-step from naive to cuBLAS-level", topic="Matrix Multiplication",
        section="Foundational", tier=1, kind="blog", position=3, list_anchor="#foundational",
    )
    values.update(fields)
    return Resource(**values)  # type: ignore[arg-type]


def document(text: str, **fields: object) -> Document:
    values: dict[str, object] = dict(resource_id="example-com-gemm", url="https://example.com/gemm",
                                     title="How to Optimize a CUDA Matmul", text=text)
    values.update(fields)
    return Document(**values)  # type: ignore[arg-type]


def prose(rng: random.Random, sentences: int) -> str:
    out = []
    for _ in range(sentences):
        words = [rng.choice(WORDS) for _ in range(rng.randint(6, 18))]
        out.append(" ".join(words).capitalize() + ".")
    return " ".join(out)


def random_markdown(seed: int) -> str:
    """Headings, paragraphs, lists, tables and fenced code (with '#' lines and blank lines inside)."""
    rng = random.Random(seed)
    parts = [f"# Title {seed}"]
    for _ in range(rng.randint(3, 12)):
        kind = rng.choice(["para", "para", "para", "h2", "h3", "list", "code", "table", "long"])
        if kind == "para":
            parts.append(prose(rng, rng.randint(1, 6)))
        elif kind == "long":
            parts.append(prose(rng, rng.randint(15, 30)))
        elif kind in ("h2", "h3"):
            parts.append(("## " if kind == "h2" else "### ") + " ".join(rng.choices(WORDS, k=3)).title())
        elif kind == "list":
            parts.append("\n".join(f"- {prose(rng, 1)}" for _ in range(rng.randint(2, 6))))
        elif kind == "table":
            rows = ["| a | b |", "|---|---|"] + [f"| {rng.choice(WORDS)} | {rng.randint(1, 999)} |" for _ in range(4)]
            parts.append("\n".join(rows))
        else:
            body = "\n".join(f"# comment {i}\nx{i} = load(tile, {i})\n" for i in range(rng.randint(2, 60)))
            parts.append(f"```python\n{body}\n```")
    return "\n\n".join(parts) + "\n"


LONG_PROSE = " ".join(f"Sentence number {i} explains how warps hide memory latency." for i in range(120))


# --- offsets and sizes -------------------------------------------------------------------------


@pytest.mark.parametrize("max_wordpieces", [0, 256])
def test_offsets_slice_the_document_text(max_wordpieces: int) -> None:
    settings = ChunkSettings(max_wordpieces=max_wordpieces)
    for seed in range(40):
        doc = document(random_markdown(seed))
        chunks = chunk_document(doc, resource(), settings)
        assert chunks
        for chunk in chunks:
            assert doc.text[chunk.start : chunk.end] == chunk.text
        assert [c.start for c in chunks] == sorted(c.start for c in chunks)


def test_chunks_cover_the_whole_text() -> None:
    for seed in range(20):
        doc = document(random_markdown(seed))
        covered = set()
        for chunk in chunk_document(doc, resource()):
            covered.update(range(chunk.start, chunk.end))
        assert all(i in covered for i, ch in enumerate(doc.text) if not ch.isspace())


def test_chunk_word_counts_within_bounds() -> None:
    settings = ChunkSettings(target_words=165, overlap_words=30, max_wordpieces=0)
    chunks = chunk_document(document(LONG_PROSE), resource(), settings)
    sizes = [count_words(c.text) for c in chunks]
    assert len(chunks) > 5
    assert max(sizes) <= 165
    assert min(sizes) >= settings.min_chunk_words
    assert sum(sizes[:-1]) / len(sizes[:-1]) >= 140  # full chunks come close to the target


def test_consecutive_chunks_overlap_by_at_most_overlap_words() -> None:
    settings = ChunkSettings(target_words=165, overlap_words=30, max_wordpieces=0)
    chunks = chunk_document(document(LONG_PROSE), resource(), settings)
    for prev, nxt in zip(chunks, chunks[1:]):
        assert nxt.start < prev.end  # they share text
        shared = count_words(prev.text[nxt.start - prev.start :])
        assert 1 <= shared <= 30


def test_wordpiece_budget_includes_the_context_header() -> None:
    lines = [f"out[{i}] = __shfl_xor_sync(0xffffffff, v_{i}, {i % 32});" for i in range(300)]
    code = "```c\n" + "\n".join(lines) + "\n```"
    settings = ChunkSettings(max_wordpieces=256)
    chunks = chunk_document(document(f"# Shuffles\n\n{code}\n"), resource(), settings)
    assert len(chunks) > 3
    for chunk in chunks:
        assert estimate_wordpieces(chunk.context) + estimate_wordpieces(chunk.text) <= 256


def test_code_words_are_not_the_only_limit() -> None:
    """With the budget off, 165 words of dense code is one chunk; with it on, several."""
    code = "```c\n" + "\n".join(f"a[{i}]=b[{i}]*c[{i}];" for i in range(150)) + "\n```"
    doc = document(code)
    assert len(chunk_document(doc, resource(), ChunkSettings(max_wordpieces=0))) == 1
    assert len(chunk_document(doc, resource(), ChunkSettings(max_wordpieces=256))) > 1


def test_small_code_block_is_not_split() -> None:
    code = "```cuda\n__global__ void k(float *x) {\n\n    x[threadIdx.x] *= 2.0f;\n\n    __syncthreads();\n}\n```"
    intro = " ".join(f"Intro sentence {i} about kernels." for i in range(28))
    text = f"# Kernel\n\n{intro}\n\n{code}\n\nAfter.\n"
    chunks = chunk_document(document(text), resource())
    assert any(code in c.text for c in chunks)
    assert all(c.text.count("```") in (0, 2) for c in chunks)


def test_long_code_block_is_split_at_line_breaks() -> None:
    lines = [f"    acc += a[{i}] * b[{i}];" for i in range(200)]
    text = "```c\n" + "\n".join(lines) + "\n```\n"
    whole = {line.strip() for line in lines}
    chunks = chunk_document(document(text), resource())
    assert len(chunks) > 1
    for chunk in chunks:  # no line is cut in two (a chunk's leading indent is stripped)
        body = chunk.text.removeprefix("```c\n").removesuffix("\n```")
        assert all(line.strip() in whole for line in body.split("\n"))


# --- headings ----------------------------------------------------------------------------------


NESTED = """# How to Optimize a CUDA Matmul

Intro paragraph about the naive kernel and why it is slow on every GPU we tried in this post.

## Kernel 2: Global Memory Coalescing

Coalescing merges the loads of a warp into few transactions when threads read consecutive words.

### Results

The coalesced kernel reaches about 15 percent of cuBLAS on an A6000 at four thousand squared.

## Kernel 3: Shared Memory Cache-Blocking

Loading tiles into shared memory lets a block reuse each element many times before eviction.
"""


def test_heading_path() -> None:
    settings = ChunkSettings(min_chunk_words=0)
    paths = [c.heading_path for c in chunk_document(document(NESTED), resource(), settings)]
    assert paths == [
        ("How to Optimize a CUDA Matmul",),
        ("How to Optimize a CUDA Matmul", "Kernel 2: Global Memory Coalescing"),
        ("How to Optimize a CUDA Matmul", "Kernel 2: Global Memory Coalescing", "Results"),
        ("How to Optimize a CUDA Matmul", "Kernel 3: Shared Memory Cache-Blocking"),
    ]


def test_chunk_starts_at_its_heading() -> None:
    chunks = chunk_document(document(NESTED), resource(), ChunkSettings(min_chunk_words=0))
    assert chunks[1].text.startswith("## Kernel 2: Global Memory Coalescing\n\nCoalescing merges")


def test_small_sections_merge_under_their_common_heading() -> None:
    chunks = chunk_document(document(NESTED), resource(), ChunkSettings(min_chunk_words=40))
    assert len(chunks) < 4
    assert all(c.heading_path[0] == "How to Optimize a CUDA Matmul" for c in chunks)


def test_hash_lines_inside_code_are_not_headings() -> None:
    text = "## Build\n\n```bash\n# not a heading\nmake -j\n```\n\nThen run the binary with its default arguments.\n"
    chunks = chunk_document(document(text), resource(), ChunkSettings(min_chunk_words=0))
    assert {c.heading_path for c in chunks} == {("Build",)}


def test_setext_headings() -> None:
    text = "Install\n=======\n\nRun pip install to get the package and its kernels.\n\nUsage\n-----\n\nImport it.\n"
    chunks = chunk_document(document(text), resource(), ChunkSettings(min_chunk_words=0))
    assert [c.heading_path for c in chunks] == [("Install",), ("Install", "Usage")]


def test_heading_markup_is_cleaned() -> None:
    text = "## **Fast** [`sgemm`](https://x.example) kernels ##\n\nBody text of the section goes here.\n"
    assert chunk_document(document(text), resource())[0].heading_path == ("Fast sgemm kernels",)


def test_heading_without_body_joins_the_next_section() -> None:
    text = "## Part one\n\n### Step 1\n\nDo the first thing carefully and measure it.\n"
    chunks = chunk_document(document(text), resource(), ChunkSettings(min_chunk_words=0))
    assert len(chunks) == 1
    assert chunks[0].heading_path == ("Part one", "Step 1")
    assert chunks[0].text.startswith("## Part one")


# --- context, ids ------------------------------------------------------------------------------


def test_context_header_fields() -> None:
    header = context_header(resource(), ("How to Optimize a CUDA Matmul", "Kernel 2"), "How to Optimize a CUDA Matmul")
    assert header.splitlines() == [
        "How to Optimize a CUDA Matmul — Simon Boehm",
        "Matrix Multiplication › Foundational › Tier 1",
        "Step-by-step from naive to cuBLAS-level",
        "Section: Kernel 2",
    ]


def test_context_header_without_tier_or_authors() -> None:
    header = context_header(resource(authors="", tier=None, note=""))
    assert header.splitlines() == ["How to Optimize a CUDA Matmul", "Matrix Multiplication › Foundational"]


def test_indexed_text_is_context_then_passage() -> None:
    chunk = chunk_document(document(NESTED), resource())[0]
    assert chunk.indexed_text == f"{chunk.context}\n{chunk.text}"
    assert chunk.context.startswith("How to Optimize a CUDA Matmul — Simon Boehm\n")


def test_chunk_carries_resource_and_source() -> None:
    doc = document(NESTED, source_kind="pdf", url="https://example.com/gemm.pdf")
    chunk = chunk_document(doc, resource())[0]
    assert (chunk.resource_id, chunk.url) == ("example-com-gemm", "https://example.com/gemm.pdf")
    assert chunk.source_kind == "pdf"


def test_chunk_ids_are_stable_and_unique() -> None:
    doc = document(random_markdown(7))
    first = [c.chunk_id for c in chunk_document(doc, resource())]
    again = [c.chunk_id for c in chunk_document(document(random_markdown(7)), resource())]
    assert first == again
    assert len(set(first)) == len(first)
    assert all(cid.startswith("example-com-gemm:") for cid in first)


def test_chunker_key_names_version_and_sizes() -> None:
    key = chunker_key(ChunkSettings(target_words=150))
    assert key.startswith(f"v{CHUNKER_VERSION}:150:")
    assert key != chunker_key(ChunkSettings())


def test_empty_document_gives_no_chunks() -> None:
    assert chunk_document(document(""), resource()) == []


# --- catalog cards -----------------------------------------------------------------------------


def test_card_document_holds_the_catalog_record() -> None:
    doc = card_document(resource(tags=("favourite",)))
    assert doc.source_kind == "card"
    assert doc.content_hash == content_hash(doc.text)
    for part in ("How to Optimize a CUDA Matmul", "Blog by Simon Boehm",
                 "Matrix Multiplication › Foundational › Tier 1", "Step-by-step from naive to cuBLAS-level",
                 "Tags: favourite", "Link: https://example.com/gemm"):
        assert part in doc.text


def test_card_chunk_for_every_resource_even_without_url() -> None:
    resources = [
        resource(),
        resource(id="discord-gg-gpumode", title="GPU MODE Discord", url="https://discord.gg/gpumode",
                 kind="community", authors="", tier=None),
        resource(id="title-pmpp", title="PMPP book", url="", kind="book"),
    ]
    chunks = card_chunks(resources)
    assert [c.resource_id for c in chunks] == [r.id for r in resources]
    assert len({c.chunk_id for c in chunks}) == 3
    for chunk, res in zip(chunks, resources):
        assert chunk.source_kind == "card"
        assert chunk.text.startswith(f"# {res.title}\n")
        assert chunk.url == res.url
        assert chunk.text == card_document(res).text[chunk.start : chunk.end]
    assert "Link:" not in chunks[2].text


def test_card_chunk_indexed_text_names_title_once() -> None:
    chunk = card_chunk(resource())
    assert chunk.context == ""
    assert len(re.findall("How to Optimize a CUDA Matmul", chunk.indexed_text)) == 1
