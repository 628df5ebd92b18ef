"""Citation links land on the supporting sentence: a text fragment (`#:~:text=start,end`, WICG Scroll to Text
Fragment) built from the sentence as the browser shows it, `#page=N` for a PDF page.

The pure functions of assistant/fragments.py first, then PDF pages through real extraction and chunking, then
end to end: a crawl of pages served on 127.0.0.1, a real index (packaged embedder, FAISS) and an extractive
answer whose every citation link must name words of the cited page, in order.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from urllib.parse import unquote

import pytest
from fixtures.index.corpus import embedder as cached_embedder
from http_fixture import FixtureServer, Reply, crawl_settings
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

from assistant.fragments import (
    cite_link,
    encode_term,
    first_sentence,
    page_of,
    plain_text,
    text_directive,
    with_page,
    with_text_fragment,
)
from assistant.records import Citation
from core.records import Chunk, Document, Resource
from core.settings import ChunkSettings
from ingest.chunk import chunk_document
from ingest.extract import extract_pdf

LONG = ("Tiling loads a block of each matrix into shared memory once, and every thread of the block "
        "reuses it, which cuts global memory traffic by the tile width.")


def terms(link: str) -> list[str]:
    """The decoded textStart / textEnd of a link's text directive."""
    directive = link.split(":~:text=", 1)[1]
    return [unquote(t) for t in directive.split(",")]


# --- encoding ------------------------------------------------------------------------------------------


def test_dash_comma_and_ampersand_are_percent_encoded_in_a_term():
    assert encode_term("warp-level, fast & cheap") == "warp%2Dlevel%2C%20fast%20%26%20cheap"


def test_a_term_keeps_no_character_that_ends_a_fragment_or_an_attribute():
    encoded = encode_term('a "quoted" #hash <tag> 50% off')
    assert not set(encoded) & set('"#<> ')
    assert unquote(encoded) == 'a "quoted" #hash <tag> 50% off'


# --- short and long sentences ----------------------------------------------------------------------------


def test_a_short_sentence_is_the_whole_text_start_without_its_final_stop():
    assert text_directive("Shared memory is on-chip.") == "text=Shared%20memory%20is%20on%2Dchip"


def test_a_long_sentence_is_its_first_and_last_words():
    assert terms("#:~:" + text_directive(LONG)) == ["Tiling loads a block", "by the tile width"]


def test_an_added_ellipsis_or_quotes_around_a_sentence_are_not_part_of_the_terms():
    assert terms("#:~:" + text_directive('"Shared memory is on-chip …"')) == ["Shared memory is on-chip"]


def test_text_start_grows_past_an_earlier_copy_of_its_first_words_in_the_passage():
    sentence = "The kernel loads one tile of each matrix per iteration of the outer loop before it computes."
    passage = f"The kernel loads one tile at a time. {sentence}"
    start = terms("#:~:" + text_directive(sentence, passage))[0]
    assert start.startswith("The kernel loads one tile of")
    assert passage.find(start) == passage.find(sentence)


def test_a_sentence_with_no_words_gives_no_directive():
    assert text_directive("— … ") == ""
    assert with_text_fragment("https://a.org/p", "…") == "https://a.org/p"


# --- markdown stripped to the text the browser renders ----------------------------------------------------


def test_markdown_emphasis_code_links_and_images_become_their_plain_words():
    text = "The **tiled** kernel calls `cudaMemcpyAsync` on [pinned memory](https://x.org/p) ![chart](c.png) _fast_."
    assert plain_text(text) == "The tiled kernel calls cudaMemcpyAsync on pinned memory fast."


def test_heading_hashes_list_markers_and_quote_markers_are_dropped():
    assert plain_text("## Why tiles help") == "Why tiles help"
    assert plain_text("- Each tile of A is loaded once") == "Each tile of A is loaded once"
    assert plain_text("12. Threads synchronise") == "Threads synchronise"
    assert plain_text("> A quoted line") == "A quoted line"



def test_inline_tex_is_matched_as_the_page_renders_it():
    assert plain_text("reaches 1.1$\\times$ the speed of cuBLAS") == "reaches 1.1× the speed of cuBLAS"

def test_underscores_inside_names_and_code_spans_are_kept():
    assert plain_text("Call `__syncthreads()` between tile_a and tile_b loads") == \
        "Call __syncthreads() between tile_a and tile_b loads"


def test_backslash_escapes_become_the_character():
    assert plain_text(r"2\*N threads, not 2\_N") == "2*N threads, not 2_N"


def test_the_first_prose_sentence_of_a_passage_skips_headings_and_code():
    passage = "# The kernel\n\n```cuda\n__global__ void k();\n```\n\nThe kernel below loads one tile per iteration. Then more."
    assert first_sentence(passage) == "The kernel below loads one tile per iteration."


# --- the URL around it ----------------------------------------------------------------------------------


def test_a_page_with_no_fragment_gets_the_directive_after_a_hash():
    assert with_text_fragment("https://a.org/p?q=1", "Shared memory is on-chip.") == \
        "https://a.org/p?q=1#:~:text=Shared%20memory%20is%20on%2Dchip"


def test_the_pages_own_fragment_is_kept_before_the_directive():
    assert with_text_fragment("https://a.org/p#why-tiles-help", "Shared memory is on-chip.") == \
        "https://a.org/p#why-tiles-help:~:text=Shared%20memory%20is%20on%2Dchip"


def test_an_earlier_text_directive_is_replaced_not_stacked():
    link = with_text_fragment("https://a.org/p#top:~:text=old", "Shared memory is on-chip.")
    assert link == "https://a.org/p#top:~:text=Shared%20memory%20is%20on%2Dchip"


def test_a_pdf_with_a_known_page_opens_at_it_and_keeps_its_other_open_parameters():
    assert cite_link("https://arxiv.org/pdf/2205.00001", LONG, page=3) == "https://arxiv.org/pdf/2205.00001#page=3"
    assert with_page("https://a.org/x.pdf#page=1&zoom=80", 7) == "https://a.org/x.pdf#page=7&zoom=80"


def test_a_pdf_with_no_known_page_is_linked_as_it_is():
    assert cite_link("https://a.org/paper.pdf", LONG) == "https://a.org/paper.pdf"


def test_with_no_quote_the_link_points_at_the_passages_first_sentence():
    assert terms(cite_link("https://a.org/p", "", passage="## Heading\n\n" + LONG)) == \
        ["Tiling loads a block", "by the tile width"]


def citation(**values: object) -> Citation:
    base: dict[str, object] = {"n": 1, "resource_id": "r", "title": "T", "url": "https://a.org/p", "topic": "t",
                               "section": "s", "tier": 1, "list_url": "https://l.org/#s", "passage": LONG,
                               "score": 0.5}
    return Citation(**{**base, **values})  # type: ignore[arg-type]


def test_a_citations_link_uses_its_quote_and_its_url_stays_the_plain_page():
    cite = citation(quote="Shared memory is on-chip.")
    assert cite.link == "https://a.org/p#:~:text=Shared%20memory%20is%20on%2Dchip"
    assert cite.url == "https://a.org/p"


def test_a_citation_quoted_from_another_page_of_its_resource_links_there():
    cite = citation(source_url="https://arxiv.org/pdf/2205.00001", page=2)
    assert cite.link == "https://arxiv.org/pdf/2205.00001#page=2"


def test_a_citation_whose_passage_is_the_catalog_card_links_the_plain_page():
    assert citation(page_text=False).link == "https://a.org/p"


# --- PDF pages through extraction and chunking ------------------------------------------------------------


def pdf_of_pages(pages: list[list[str]]) -> bytes:
    """A PDF with one page per list of lines (real text operators, pypdf's writer); an empty list is a blank page."""
    writer = PdfWriter()
    font = DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
                             NameObject("/BaseFont"): NameObject("/Helvetica")})
    for lines in pages:
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
        stream = DecodedStreamObject()
        ops = ["BT /F1 11 Tf 72 740 Td"] + [f"({line}) Tj 0 -14 Td" for line in lines] + ["ET"]
        stream.set_data("\n".join(ops).encode("latin-1"))
        page.replace_contents(stream)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


PAGES = [
    ["Bank conflicts serialise the accesses of a warp that hit one shared memory bank,",
     "so padding each row of a tile by one word spreads the accesses over all the banks again."],
    [],
    ["Warp divergence runs both sides of a branch one after the other, with the other lanes masked,",
     "so a branch that splits every warp in two halves the throughput of the code under it."],
    ["Tensor cores multiply small matrix fragments held in the registers of a whole warp,",
     "and one instruction of the warp computes a product of tiles that takes many ordinary instructions."],
]

def paper_chunks(target_words: int = 40) -> list[Chunk]:
    page = extract_pdf(pdf_of_pages(PAGES))
    assert page is not None
    doc = Document(resource_id="paper", url="https://a.org/paper.pdf", title="Paper", text=page.text,
                   source_kind="pdf")
    resource = Resource(id="paper", title="Paper", url="https://a.org/paper.pdf", authors="", note="", topic="t",
                        section="s", tier=1, kind="paper", position=0, list_anchor="#s")
    return chunk_document(doc, resource, ChunkSettings(target_words=target_words, overlap_words=0, min_chunk_words=5,
                                                       max_wordpieces=0))


def test_each_pdf_chunk_records_the_page_it_starts_on_blank_pages_counted():
    pages = {c.text.split()[0]: c.extra["page"] for c in paper_chunks()}
    assert pages == {"Bank": 1, "Warp": 3, "Tensor": 4}


def test_a_quote_in_a_chunk_that_spans_pages_gets_the_page_it_is_on():
    (chunk,) = paper_chunks(target_words=200)
    assert page_of(chunk, "Tensor cores multiply small matrix fragments held in the registers") == 4
    assert page_of(chunk, "Bank conflicts serialise the accesses") == 1


def test_a_web_page_chunk_has_no_page():
    chunk = Chunk("r:0", "r", "https://a.org/p", (), 0, len(LONG), LONG, "")
    assert page_of(chunk, LONG) is None


# --- end to end: crawl, index, ask, and every link names words of the cited page --------------------------

LISTS = Path(__file__).parent / "fixtures" / "lists"
GUIDE_PAGE = (
    "<html><head><title>Official Guide</title></head><body><main><h1>Official Guide</h1>"
    "<h2>Coalescing</h2>"
    "<p>The <strong>memory-coalescing</strong> rule, in short: consecutive threads of a warp should read "
    "consecutive addresses, so that one transaction serves the whole warp &amp; no bandwidth is wasted.</p>"
    "<p>Call <code>cudaMemcpyAsync</code> with <a href='/pinned'>pinned host memory</a> so that copies overlap "
    "with kernels on other streams; pageable memory forces a staging copy first.</p>"
    "<ul><li>Occupancy is the ratio of active warps to the maximum a multiprocessor supports, and "
    "<em>register pressure</em> lowers it.</li></ul></main></body></html>"
)
TEXTBOOK_PAGE = (
    "<html><head><title>The Textbook</title></head><body><main><h1>The Textbook</h1>"
    "<p>Chapters cover memory coalescing, shared-memory tiling, reductions, scans and histograms, with "
    "exercises that ask the reader to measure each kernel against the hardware's memory bandwidth.</p>"
    "</main></body></html>"
)
QUESTIONS = (
    "Why should consecutive threads of a warp read consecutive addresses?",
    "How does tiling into shared memory cut global memory traffic?",
    "What lowers occupancy on a multiprocessor?",
)


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory):
    """The fixture list crawled from a loopback server, stored and indexed; an extractive assistant over it."""
    from assistant.chain import Assistant
    from assistant.profile import Profile
    from assistant.services import build_index_from_store, current_catalog
    from index.search import load_searcher
    from ingest.listsync import sync_list
    from ingest.pipeline import run_ingest

    home = tmp_path_factory.mktemp("fragments-home")
    with FixtureServer() as server:
        server.route("/blog/posts/tiled-matmul/", Reply.file("../pages/article.html"))
        server.route("/docs/guide/", Reply.html(GUIDE_PAGE))
        server.route("/pub/books/gpu-textbook/", Reply.html(TEXTBOOK_PAGE))
        rewrites = {"https://blog.example.org/": server.url("/blog/"), "https://docs.example.com/": server.url("/docs/"),
                    "https://publisher.example.com/": server.url("/pub/")}
        settings = crawl_settings(home, url_rewrites=rewrites, retries=0, follow_arxiv_pdf=False,
                                  follow_github_readme=False)
        sync_list(settings, str(LISTS / "current.md"), force=True)
        run_ingest(current_catalog(settings), settings, progress=False)
    embedder = cached_embedder(settings)
    build_index_from_store(settings, embedder=embedder)
    profile = Profile(home / "profile.sqlite3")
    guide = next(r.id for r in current_catalog(settings) if r.url == "https://docs.example.com/guide/")
    profile.set_read(guide, True)
    return settings, Assistant(settings, load_searcher(settings, embedder=embedder), profile=profile), guide


def words(text: str) -> list[str]:
    return [w.lower() for w in re.findall(r"\w+", text)]


def at(needle: list[str], hay: list[str], start: int = 0) -> int:
    """Index where `needle` occurs contiguously in `hay` at or after `start`, or -1."""
    return next((i for i in range(start, len(hay) - len(needle) + 1) if hay[i:i + len(needle)] == needle), -1)


@pytest.mark.parametrize("question", QUESTIONS)
def test_every_citation_link_carries_a_text_fragment_of_words_on_the_cited_page(crawled, question):
    from assistant.chain import Query
    from ingest.store import ChunkStore

    settings, assistant, _ = crawled
    answer = assistant.ask(Query(question, backend="extractive"))
    assert answer.citations, answer.text
    pages = {d.url: d.text for d in ChunkStore(settings.store_file).documents() if d.source_kind != "card"}
    for cite in answer.citations:
        assert cite.link.startswith(cite.url + "#:~:text="), cite.link
        page = words(pages[cite.url])
        found = -1
        for term in terms(cite.link):
            found = at(words(term), page, found + 1)
            assert found >= 0, (term, cite.url)


def test_a_source_the_learner_marked_read_is_marked_read_in_the_answer(crawled):
    from assistant.chain import Query

    _, assistant, guide = crawled
    answer = assistant.ask(Query(QUESTIONS[0], backend="extractive"))
    assert {c.resource_id: c.read for c in answer.citations}.get(guide) is True
    assert not any(c.read for c in answer.citations if c.resource_id != guide)
