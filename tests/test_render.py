"""HTML rendering (assistant/render.py + assistant/templates) escapes by default, and one serialiser
(assistant/serialize.py) gives hits, answers and plans the JSON shape `gpuguide … --json` prints."""

from __future__ import annotations

import json
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest
from fixtures.index.corpus import build, load_corpus, make_settings
from jinja2 import UndefinedError

from assistant import render
from assistant.app_state import IndexStatus, IngestJob, ProgressRow
from assistant.backend_status import BackendStatus
from assistant.cli import main
from assistant.digest import Cite, Digest, Point, SelfCheck
from assistant.planner import Pick, Plan
from assistant.progress_grid import render_progress_grid
from assistant.readtime import Estimate
from assistant.records import Answer, Citation, Dropped
from assistant.serialize import answer_dict, hit_dict, plan_dict
from core.records import Chunk, Resource
from index.records import ResourceHit

SCRIPT = "<script>alert(1)</script>"
ONERROR = "<img src=x onerror=alert(1)>"
BREAKOUT = '" onerror="alert(2)'  # closes an attribute's quotes if it reaches one unescaped
EVIL = f"Warp Tricks {SCRIPT} {ONERROR} {BREAKOUT}"
LIST_URL = "https://github.com/x/list"


class Tags(HTMLParser):
    """Every tag and attribute a browser would build from the HTML."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend(attrs)


def evil_resource(**extra: object) -> Resource:
    values: dict[str, object] = {
        "id": "warp-xss", "title": EVIL, "url": "https://example.org/warp", "authors": EVIL, "note": EVIL,
        "topic": "Fundamentals", "section": EVIL, "tier": 1, "kind": "blog", "position": 0, "list_anchor": "#warp",
        "tags": (EVIL,),
    }
    return Resource(**{**values, **extra})  # type: ignore[arg-type]


def evil_chunk() -> Chunk:
    return Chunk(chunk_id="warp-xss:0", resource_id="warp-xss", url="https://example.org/warp",
                 heading_path=(EVIL,), start=0, end=10, text=EVIL, context=EVIL)


def evil_answer(route: str = "search") -> Answer:
    cite = Citation(n=1, resource_id="warp-xss", title=EVIL, url="https://example.org/warp", topic=EVIL,
                    section=EVIL, tier=1, list_url=LIST_URL + "#warp", passage=EVIL, score=0.8, kind=EVIL)
    return Answer(text=f"{EVIL} [1].\nMore {EVIL}", citations=[cite], abstained=False, route=route, question=EVIL,
                  fallback=EVIL, weak=True, dropped=[Dropped(EVIL, EVIL)])


def evil_digest() -> Digest:
    cite = Cite(1, "warp-xss:0", "https://example.org/warp", EVIL, 0, 10, EVIL)
    return Digest("warp-xss", EVIL, "summary", "generated", "hash", points=[Point(EVIL, cite)],
                  questions=[SelfCheck(EVIL, EVIL, cite)], note=EVIL, dropped=1)


def evil_job() -> IngestJob:
    job = IngestJob()
    job.phase, job.message = EVIL, EVIL
    return job


# Each template and a render that feeds it the payload in every value it shows.
RENDERS: dict[str, Callable[[], str]] = {
    "answer.html": lambda: render.render_answer(evil_answer(), pending=EVIL),
    "sources.html": lambda: render.render_sources(evil_answer("next")),
    "dropped.html": lambda: render.render_dropped(evil_answer()),
    "ref.html": lambda: str(render.text_with_links("[1]", evil_answer().citations)),
    "streaming.html": lambda: render.render_streaming(evil_answer(), EVIL, EVIL),
    "user.html": lambda: render.render_user(EVIL),
    "error.html": lambda: render.render_error(EVIL),
    "searching.html": render.render_searching,
    "guide.html": lambda: render.render_guide([evil_resource()], {"warp-xss"}, LIST_URL, states={"warp-xss": "read"},
                                              times={"warp-xss": Estimate("warp-xss", 5, EVIL, 900, EVIL)}),
    "digest.html": lambda: render.render_digest(evil_digest()),
    "hits.html": lambda: render.render_hits([ResourceHit(evil_resource(), 1.0, [(evil_chunk(), 0.9)], 0.9)], LIST_URL,
                                            states={"warp-xss": "reading"},
                                            times={"warp-xss": Estimate("warp-xss", 5, EVIL, 900, EVIL)}),
    "plan.html": lambda: render.render_plan(Plan([Pick(evil_resource(), EVIL)]), LIST_URL),
    "status.html": lambda: render.render_status(IndexStatus(index_type=EVIL, model=EVIL, built_at=EVIL,
                                                            last_ingest=EVIL, failures=[(EVIL, EVIL)])),
    "job.html": lambda: render.render_job(evil_job()),
    "progress_grid.html": lambda: render_progress_grid([ProgressRow(EVIL, 1, 1, 3), ProgressRow(EVIL, None, 0, 2)]),
    "header.html": render.render_header,
    "tab_heading.html": lambda: render.render("tab_heading.html", title=EVIL, line=EVIL),
    "backends.html": lambda: render.render_backends([BackendStatus(EVIL, EVIL, EVIL, True),
                                                     BackendStatus(EVIL, EVIL, EVIL, False, reason=EVIL)]),
    "_macros.html": lambda: render.render_hits([ResourceHit(evil_resource(url="javascript:alert(3)"), 1.0)], LIST_URL),
}


STATIC = {"searching.html", "header.html"}  # the templates that show no value


def test_every_template_has_an_escaping_check() -> None:
    assert set(RENDERS) == {p.name for p in render.TEMPLATES.glob("*.html")}


@pytest.mark.parametrize("name", sorted(RENDERS))
def test_every_template_renders_script_and_event_handler_text_as_text(name: str) -> None:
    html = RENDERS[name]()
    parsed = Tags(html)
    assert "script" not in parsed.tags and "img" not in parsed.tags
    assert not [a for a, _ in parsed.attrs if a.startswith("on")]
    assert not [v for a, v in parsed.attrs if a == "href" and not (v or "").startswith("https://")]
    if name not in STATIC:
        assert "&lt;script&gt;" in html or "[1]" in html


def test_rendering_escapes_by_default_and_fails_loudly_on_a_missing_value() -> None:
    assert render.ENV.autoescape is True
    with pytest.raises(UndefinedError):
        render.ENV.get_template("user.html").render()


def test_answer_text_keeps_its_citation_links_and_line_breaks_but_no_markup_of_its_own() -> None:
    html = str(render.text_with_links(f"{SCRIPT} tiles [1] and [7].\nNext", evil_answer().citations))
    assert html.startswith("&lt;script&gt;alert(1)&lt;/script&gt; tiles <a class=\"gg-ref\" href=\"https://example.org/warp#:~:text=")
    assert "and [7].<br>Next" in html  # a marker with no source stays text


def test_a_citations_quote_is_escaped_in_the_sources_and_its_link_carries_it_percent_encoded() -> None:
    answer = evil_answer()
    answer.citations[0].quote = f"Tiles {SCRIPT} fit, in short - and {BREAKOUT} more words follow here."
    html = render.render_answer(answer)
    assert "Supporting sentence" in html and "&lt;script&gt;" in html
    parsed = Tags(html)
    assert "script" not in parsed.tags and not [a for a, _ in parsed.attrs if a.startswith("on")]
    hrefs = [v for a, v in parsed.attrs if a == "href" and (v or "").startswith("https://example.org/warp")]
    assert hrefs and all(v.startswith("https://example.org/warp#:~:text=Tiles%20%3Cscript%3E") for v in hrefs)


def test_a_source_the_learner_marked_read_shows_the_read_mark_and_an_unread_one_does_not() -> None:
    answer = evil_answer()
    assert "gg-read-mark" not in render.render_sources(answer)
    answer.citations[0].read = True
    assert '<span class="gg-badge gg-read-mark" title="You marked this resource read">read</span>' in \
        render.render_sources(answer)


def test_an_answer_serialises_its_citations_link_quote_and_read_mark() -> None:
    answer = evil_answer()
    answer.citations[0].quote, answer.citations[0].read = "Warp tiles fit in shared memory.", True
    cite = answer_dict(answer)["citations"][0]
    assert cite["url"] == "https://example.org/warp"
    assert cite["link"] == "https://example.org/warp#:~:text=Warp%20tiles%20fit%20in%20shared%20memory"
    assert (cite["quote"], cite["read"]) == ("Warp tiles fit in shared memory.", True)


def test_a_summarys_cited_passage_links_to_its_quoted_sentence() -> None:
    cite = Cite(1, "warp-xss:0", "https://example.org/warp", "Tiles", 0, 10, "Warp tiles fit in shared memory.")
    html = render.render_digest(Digest("warp-xss", "T", "summary", "generated", "hash", points=[Point("p", cite)]))
    assert 'href="https://example.org/warp#:~:text=Warp%20tiles%20fit%20in%20shared%20memory"' in html


def test_a_link_is_only_made_for_http_urls() -> None:
    assert render.safe_url(" https://a.org/x?y=1&z=2 ") == "https://a.org/x?y=1&amp;z=2"
    assert render.safe_url("javascript:alert(1)") == "" and render.safe_url("data:text/html,<b>") == ""


# --- the serialiser ---------------------------------------------------------------------------------------


def test_a_hit_serialises_to_the_fields_the_cli_prints_and_back_to_its_resource() -> None:
    res = evil_resource()
    hit = ResourceHit(res, 0.1234567, [(evil_chunk(), 0.5)], confidence=0.87654)
    data = json.loads(json.dumps(hit_dict(hit, 1, LIST_URL)))
    assert {"rank", "resource", "score", "confidence", "place", "list_url", "passages"} <= set(data)
    assert Resource.from_dict(data["resource"]) == res
    assert (data["id"], data["title"], data["tier"]) == (res.id, res.title, res.tier)
    assert data["place"] == res.place and data["list_url"] == LIST_URL + "#warp"
    assert (data["score"], data["confidence"]) == (0.123457, 0.8765)
    assert data["passages"] == [{"chunk_id": "warp-xss:0", "heading_path": [EVIL], "score": 0.5, "text": EVIL}]


def test_an_answer_round_trips_through_json() -> None:
    answer = evil_answer()
    data = json.loads(json.dumps(answer_dict(answer)))
    assert data["citations"][0]["place"] == answer.citations[0].place
    assert data["citations"][0]["link"] == answer.citations[0].link
    cites = [Citation(**{k: v for k, v in c.items() if k not in ("place", "link")}) for c in data["citations"]]
    back = Answer(**{**data, "citations": cites, "dropped": [Dropped(**d) for d in data["dropped"]]})
    assert back == answer


def test_a_plan_serialises_each_pick_as_its_resource_with_place_link_and_reason() -> None:
    res = evil_resource()
    data = json.loads(json.dumps(plan_dict(Plan([Pick(res, "why")], focus_topics=["Fundamentals"]), LIST_URL,
                                           counted_as_read={"b", "a"}, read={"a", "b", "c"})))
    assert data["read"] == ["a", "b", "c"] and data["counted_as_read"] == ["a", "b"]
    assert data["focus_topics"] == ["Fundamentals"]
    pick = data["picks"][0]
    assert Resource.from_dict(pick) == res
    assert pick["reason"] == "why" and pick["place"] == res.place and pick["list_url"] == LIST_URL + "#warp"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    build(make_settings(home))
    return home


def test_cli_search_json_prints_the_serialised_hits(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GPUGUIDE_HOME", str(home))
    assert main(["search", "--json", "--k", "2", "How does FlashAttention avoid writing to HBM?"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"query", "outcome", "scope_probability", "hits"}
    _, resources = load_corpus()
    by_id = {r.id: r for r in resources}
    top = data["hits"][0]
    assert top["rank"] == 1 and Resource.from_dict(top["resource"]) == by_id[top["id"]]
    assert top["place"] == by_id[top["id"]].place and top["passages"][0]["chunk_id"].startswith(top["id"])


def test_cli_next_json_prints_the_serialised_plan(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GPUGUIDE_HOME", str(home))
    assert main(["next", "--k", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"read", "counted_as_read", "focus_topics", "picks"} <= set(data)
    assert len(data["picks"]) == 2
    assert all({"id", "title", "url", "tier", "place", "list_url", "reason"} <= set(p) for p in data["picks"])


def test_the_chat_keeps_each_answer_in_the_serialised_shape() -> None:
    import ui
    from assistant.chain import AnswerEvent

    answer = evil_answer()
    *_, (_, kept) = ui.chat_reply(lambda q: iter([AnswerEvent("final", answer)]), "q?", [], [], "extractive", {})
    assert kept == [answer_dict(answer)]




def test_a_search_result_offers_the_reading_state_menu_with_its_state_chosen() -> None:
    hit = ResourceHit(evil_resource(), 1.0, [(evil_chunk(), 0.9)], 0.9)
    html = render.render_hits([hit], LIST_URL, states={"warp-xss": "reading"}, times={})
    assert 'class="gg-state" data-rid="warp-xss"' in html
    assert '<option value="reading" selected>' in html and '<option value="read">' in html


def test_a_search_result_without_states_shows_only_its_read_box() -> None:
    html = render.render_hits([ResourceHit(evil_resource(), 1.0)], LIST_URL)
    assert "gg-check" in html and "gg-state" not in html
