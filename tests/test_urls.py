"""core/urls.py: the one URL canonicaliser (catalog de-duplication, archive lookup, crawl claims, profile,
the planner's "I read <url>", the evaluator's gold)."""

from __future__ import annotations

from assistant import profile
from core.urls import canonical_url, same_page, url_key
from index import search
from ingest import archive, catalog, fetch


def test_scheme_www_and_trailing_slash_do_not_matter() -> None:
    assert url_key("https://www.A.example/x/") == url_key("http://a.example/x") == "a.example/x"


def test_the_fragment_is_dropped_and_the_query_kept() -> None:
    assert url_key("https://a.example/x?q=1#frag") == "a.example/x?q=1"


def test_query_arguments_are_compared_in_any_order() -> None:
    assert url_key("https://a.example/x?b=2&a=1") == url_key("https://a.example/x?a=1&b=2")


def test_a_default_port_does_not_matter_and_another_port_does() -> None:
    assert url_key("https://a.example:443/") == url_key("https://a.example/")
    assert url_key("https://a.example:8443/") != url_key("https://a.example/")


def test_percent_encoding_is_normalised() -> None:
    assert url_key("https://a.example/%7Euser") == url_key("https://a.example/~user")


def test_letter_case_does_not_matter() -> None:
    assert url_key("https://github.com/NVIDIA/cutlass") == url_key("https://github.com/nvidia/cutlass/")


def test_a_url_without_a_scheme_has_the_same_key() -> None:
    assert url_key("github.com/NVIDIA/cutlass") == url_key("https://github.com/NVIDIA/cutlass")


def test_a_malformed_url_keys_as_written() -> None:
    assert url_key("http://[::1") == "http://[::1"
    assert canonical_url(" http://[::1 ") == "http://[::1"


def test_empty_links_name_no_page() -> None:
    assert url_key("  ") == ""
    assert not same_page("", "")


def test_canonical_url_keeps_the_scheme_and_drops_the_fragment() -> None:
    assert canonical_url("https://a.example/x?b=2&a=1#top") == "https://a.example/x?a=1&b=2"


def test_every_stage_compares_urls_with_this_key() -> None:
    for module in (search, archive, catalog, fetch, profile):
        assert module.url_key is url_key, module.__name__
