"""Linked pages: the pages to fetch behind a catalog URL, pure functions over a URL and a page."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.settings import CrawlSettings
from ingest.linked_pages import (
    arxiv_pdf_url,
    github_readme_url,
    is_series_page,
    page_followups,
    series_part_links,
    url_followups,
)

SERIES = (Path(__file__).parent / "fixtures" / "web" / "series-part-1.html").read_text(encoding="utf-8")
PAGE = "https://blog.example.com/posts/matmul-part-1/"


@pytest.mark.parametrize(
    ("url", "pdf"),
    [
        ("https://arxiv.org/abs/2402.13499", "https://arxiv.org/pdf/2402.13499"),
        ("https://arxiv.org/abs/2402.13499v2", "https://arxiv.org/pdf/2402.13499v2"),
        ("http://www.arxiv.org/abs/1706.03762/", "http://www.arxiv.org/pdf/1706.03762"),
        ("https://arxiv.org/abs/cs/0112017", "https://arxiv.org/pdf/cs/0112017"),
        ("https://arxiv.org/pdf/2402.13499", None),
        ("https://arxiv.org/list/cs.DC/recent", None),
        ("https://notarxiv.org/abs/2402.13499", None),
        ("http://[::1/abs/2402.13499", None),
    ],
)
def test_arxiv_abs_maps_to_pdf(url: str, pdf: str | None) -> None:
    assert arxiv_pdf_url(url) == pdf


@pytest.mark.parametrize(
    ("url", "readme"),
    [
        ("https://github.com/gpu-mode/lectures", "https://raw.githubusercontent.com/gpu-mode/lectures/HEAD/README.md"),
        ("https://www.github.com/NVIDIA/cutlass/", "https://raw.githubusercontent.com/NVIDIA/cutlass/HEAD/README.md"),
        ("https://github.com/o/r.git", "https://raw.githubusercontent.com/o/r/HEAD/README.md"),
        ("https://github.com/o/r/issues", None),
        ("https://github.com/o/r/blob/main/docs/x.md", None),
        ("https://github.com/gpu-mode", None),
        ("https://github.com/topics/cuda", None),
        ("https://gitlab.com/o/r", None),
    ],
)
def test_github_repo_maps_to_raw_readme(url: str, readme: str | None) -> None:
    assert github_readme_url(url) == readme


def test_series_page_links_to_its_other_parts_on_the_same_site() -> None:
    assert is_series_page(SERIES)
    assert series_part_links(PAGE, SERIES) == [
        "https://blog.example.com/posts/matmul-part-2/",
        "https://blog.example.com/posts/matmul-part-3/",
    ]


def test_series_links_to_other_sites_only_without_same_site() -> None:
    links = series_part_links(PAGE, SERIES, same_site=False)
    assert "https://elsewhere.example/part-2" in links
    assert "mailto:me@example.org" not in links


def test_parts_range_in_title_counts_as_series() -> None:
    html = "<title>GPU memory, Parts 1-3</title><a href='/gpu-memory-part-2'>next</a>"
    assert series_part_links("https://x.example/gpu-memory-part-1", html) == ["https://x.example/gpu-memory-part-2"]


def test_page_without_series_mention_has_no_part_links() -> None:
    html = "<title>Roofline model</title><a href='/part-2'>Part 2</a>"
    assert not is_series_page(html.replace("Part 2", "next"))
    assert series_part_links("https://x.example/roofline", "<title>Roofline</title><a href='/y'>y</a>") == []


def test_malformed_html_does_not_break_link_discovery() -> None:
    html = "<title>Part 1<a href='/part-2'>Part 2<p><a href=/part-3>Part 3<a href='http://[x/part-4'>Part 4</a>"
    assert series_part_links("https://x.example/part-1", html) == [
        "https://x.example/part-2", "https://x.example/part-3",
    ]


def test_page_followups_need_depth_1_and_html() -> None:
    assert page_followups(PAGE, SERIES, "text/html; charset=utf-8", CrawlSettings()) == []
    deep = CrawlSettings(follow_depth=1)
    assert len(page_followups(PAGE, SERIES, "text/html; charset=utf-8", deep)) == 2
    assert page_followups(PAGE, SERIES, "text/plain; charset=utf-8", deep) == []


def test_url_followups_respect_settings() -> None:
    assert url_followups("https://arxiv.org/abs/2402.13499", CrawlSettings()) == ["https://arxiv.org/pdf/2402.13499"]
    assert url_followups("https://arxiv.org/abs/2402.13499", CrawlSettings(follow_arxiv_pdf=False)) == []
    assert url_followups("https://github.com/o/r", CrawlSettings(follow_github_readme=False)) == []
