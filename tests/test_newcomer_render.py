"""What the newcomer's screens say, rendered from real search results on the fixture index (no browser):
results in the search's order with the outcome in words, prose snippets, read boxes; follow-ups show what was
searched; sources that the final answer does not cite stay, marked; unreachable backends say why."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from fixtures.index.corpus import build, make_settings, searcher
from ui_fixture import free_port

from assistant.backend_status import backend_statuses
from assistant.records import Answer, Citation
from assistant.render import render_answer, render_backends, render_hits
from core.records import Chunk
from core.settings import Settings

LIST = "https://github.com/x/list"


@pytest.fixture(scope="module")
def search(tmp_path_factory: pytest.TempPathFactory):
    settings = make_settings(tmp_path_factory.mktemp("render-home"))
    build(settings)
    return searcher(settings)


def rids(html: str) -> list[str]:
    return re.findall(r'<li class="gg-res gg-hit[^"]*" data-rid="([^"]+)"', html)


def test_results_are_shown_in_the_order_the_search_scored_them_with_no_raw_number(search):
    query = "tiling attention through on-chip SRAM"
    hits = search.search(query, k=5)
    html = render_hits(hits, LIST, outcome=search.outcome(query, hits), read=set())
    assert rids(html) == [h.resource.id for h in hits]
    assert "confidence" not in html and not re.search(r"\b0\.\d\d\b", html)
    assert "Strong match" in html


def test_a_query_the_guide_does_not_cover_is_labelled_as_a_weak_or_no_match(search):
    query = "sourdough starter hydration for a crusty loaf"
    hits = search.search(query, k=3)
    outcome = search.outcome(query, hits)
    assert outcome in ("weak", "out_of_scope")
    html = render_hits(hits, LIST, outcome=outcome, read=set())
    assert re.search(r"(Weak match|No good match): ", html)


def test_each_result_has_a_read_box_ticked_when_read(search):
    hits = search.search("ring all-reduce bandwidth", k=3)
    html = render_hits(hits, LIST, outcome="answer", read={hits[0].resource.id})
    boxes = re.findall(r'<input type="checkbox" class="gg-check" data-rid="([^"]+)"[^>]*?( checked)?>', html)
    assert [rid for rid, _ in boxes] == [h.resource.id for h in hits]
    assert boxes[0][1] == " checked" and all(not ticked for _, ticked in boxes[1:])


def test_a_results_snippet_is_prose_not_markdown(search):
    hit = search.search("ring all-reduce bandwidth", k=1)[0]
    text = "## Ring all-reduce\n\nEach GPU sends **2(N-1)/N** of the buffer; see [the docs](https://x.org) and `ncclAllReduce`."
    page = Chunk(chunk_id="md:0", resource_id=hit.resource.id, url=hit.resource.url, heading_path=(), start=0,
                 end=len(text), text=text, context="")
    html = render_hits([replace(hit, passages=[(page, 1.0)])], LIST, outcome="answer", read=set())
    passage = re.search(r'<blockquote class="gg-passage">(.*?)</blockquote>', html).group(1)
    assert "##" not in passage and "**" not in passage and "](" not in passage
    assert "Ring all-reduce Each GPU sends 2(N-1)/N of the buffer; see the docs and <code>ncclAllReduce</code>." == passage


def _cite(n: int, cited: bool = True) -> Citation:
    return Citation(n=n, resource_id=f"r{n}", title=f"Source {n}", url=f"https://example.org/{n}", topic="T",
                    section="S", tier=1, list_url=LIST + "#s", passage="A passage.", score=0.5, kind="paper",
                    cited=cited)


def test_a_source_the_final_answer_does_not_cite_stays_marked_with_its_number():
    answer = Answer(text="Tiles stay in SRAM [1].", citations=[_cite(1), _cite(2, cited=False)], abstained=False,
                    route="search", question="q", standalone_question="q")
    html = render_answer(answer)
    assert len(re.findall(r'<li class="gg-source[ "]', html)) == 2 and 'value="2"' in html
    assert "not cited" in html and "stay listed with the numbers you saw" in html


def test_a_follow_up_shows_the_question_that_was_searched():
    answer = Answer(text="It overlaps copies [1].", citations=[_cite(1)], abstained=False, route="search",
                    question="and what changed in version 3?", standalone_question="What changed in FlashAttention-3?")
    assert "Searched as a follow-up: “What changed in FlashAttention-3?”" in render_answer(answer)
    plain = replace(answer, question="What changed in FlashAttention-3?")
    assert "Searched as" not in render_answer(plain)


def test_an_unreachable_backend_is_listed_as_not_available_with_the_reason():
    closed = f"http://127.0.0.1:{free_port()}"
    html = render_backends(backend_statuses(Settings(llm={"ollama_url": closed, "openai_base_url": closed + "/v1"})))
    assert re.search(r"<b>Ollama</b> <span class=\"gg-badge\">not available</span>: no server at " + re.escape(closed), html)
    assert "Quotes only (no model)</b>: No language model" in html


def test_a_result_known_by_its_card_shows_the_lists_note_not_the_card_again(search):
    hit = search.search("ring all-reduce bandwidth", k=1)[0]
    card = next(c for c in search.chunks if c.resource_id == hit.resource.id and c.source_kind == "card")
    html = render_hits([replace(hit, passages=[(card, 1.0)])], LIST, outcome="answer", read=set())
    passage = re.search(r'<blockquote class="gg-passage">(.*?)</blockquote>', html).group(1)
    assert passage == hit.resource.note
