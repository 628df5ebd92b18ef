"""The tiered-list parser: both published formats, every field, and bad input."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from ingest.catalog import (
    CatalogError,
    bundled_catalog,
    github_anchor,
    infer_kind,
    load_catalog,
    parse_markdown,
    parse_source,
    resource_id,
    split_authors,
    sync_catalog,
)

LISTS = Path(__file__).parent / "fixtures" / "lists"


@pytest.fixture
def current() -> list:
    return parse_source(str(LISTS / "current.md")).resources


@pytest.fixture
def legend() -> list:
    return parse_source(str(LISTS / "legend.md")).resources


def by_title(resources: list, title: str):
    return next(r for r in resources if r.title == title)


# --- current format ---


def test_current_format_parses_every_resource_section_and_skips_toc_and_contributing(current):
    assert [r.title for r in current] == [
        "Tiled Matmul Worklog", "Attention Paper", "Kernel Library", "Official Guide",
        "KernelModel", "The Textbook", "Example Discord", "A Substack",
    ]


def test_current_format_fills_every_field(current):
    res = by_title(current, "Tiled Matmul Worklog")
    assert res.url == "https://blog.example.org/posts/tiled-matmul/"
    assert res.id == "blog-example-org-posts-tiled-matmul"
    assert res.authors == "Ada Lovelace"
    assert res.note == "Tiling, shared memory, vectorized loads"
    assert (res.topic, res.section, res.tier) == ("Kernels", "Matmul basics", 1)
    assert res.kind == "blog"
    assert res.position == 0
    assert res.list_anchor == "#matmul-basics"


def test_current_format_reads_tier_from_tier_headings(current):
    assert by_title(current, "Official Guide").tier == 2
    assert by_title(current, "KernelModel").tier == 3


def test_untiered_section_has_no_tier(current):
    discord = by_title(current, "Example Discord")
    assert (discord.topic, discord.section, discord.tier) == ("The Big Picture", "Communities", None)


def test_et_al_stays_part_of_the_authors(current):
    assert by_title(current, "Attention Paper").authors == "Doe et al."


def test_note_without_author_prefix_keeps_whole_note_and_flattens_links(current):
    lib = by_title(current, "Kernel Library")
    assert lib.authors == ""
    assert lib.note == "Fast kernels. Community: discord.gg/example"


def test_section_anchor_follows_github_slug_rules(current):
    assert by_title(current, "KernelModel").list_anchor == "#serving--batching"


def test_malformed_entry_warns_with_line_number_and_rest_is_parsed(caplog):
    text = (LISTS / "current.md").read_text()
    with caplog.at_level(logging.WARNING):
        parse = parse_markdown(text, "current.md")
    assert any("current.md:25:" in w and "malformed" in w for w in parse.warnings)
    assert len(parse.resources) == 8


def test_duplicate_url_is_kept_once_with_a_warning(current):
    parse = parse_source(str(LISTS / "current.md"))
    assert not any(r.title == "Tiled Matmul Again" for r in parse.resources)
    assert any("duplicate URL" in w for w in parse.warnings)


def test_positions_are_dense_after_dropping_duplicates(current):
    assert [r.position for r in current] == list(range(len(current)))


# --- legend format ---


def test_legend_format_is_detected_and_parsed():
    parse = parse_source(str(LISTS / "legend.md"))
    assert parse.format == "legend"
    assert [r.title for r in parse.resources] == [
        "The Textbook", "Lecture Series", "Tiled Matmul Worklog", "An Attention Paper",
        "Kernel Repo Without Link", "Paper With Byline Link", "The Moat Debate", "Example Discord",
    ]


def test_legend_topic_drops_numbering_and_tier_heading_gives_tier_and_section(legend):
    res = by_title(legend, "Tiled Matmul Worklog")
    assert (res.topic, res.section, res.tier) == ("Matrix Multiplication (The Gateway)", "Essential Tutorials", 1)
    assert res.list_anchor == "#tier-1-essential-tutorials"


def test_legend_keeps_type_emoji_and_tags(legend):
    lectures = by_title(legend, "Lecture Series")
    assert lectures.entry_type == "video"
    assert lectures.tags == ("favourite",)
    assert by_title(legend, "An Attention Paper").tags == ("new",)


def test_legend_link_in_byline_is_the_url_not_the_author(legend):
    res = by_title(legend, "Paper With Byline Link")
    assert res.url == "https://arxiv.org/abs/2507.00002"
    assert res.authors == ""
    assert res.kind == "paper"


def test_legend_link_bullet_is_the_url_and_description_bullets_are_the_note(legend):
    res = by_title(legend, "Tiled Matmul Worklog")
    assert res.url == "https://blog.example.org/posts/tiled-matmul/"
    assert res.authors == "Ada Lovelace"
    assert res.note == "Tiling, shared memory, vectorized loads"


def test_legend_entry_without_link_is_kept_with_id_from_title(legend):
    book = by_title(legend, "The Textbook")
    assert book.url == ""
    assert book.id == "title-the-textbook"
    assert book.kind == "book"
    assert by_title(legend, "Kernel Repo Without Link").kind == "repo"


def test_legend_untiered_section_has_no_tier(legend):
    res = by_title(legend, "The Moat Debate")
    assert (res.topic, res.section, res.tier) == ("The Big Picture", "Industry Analysis", None)


def test_legend_duplicate_url_is_kept_once(legend):
    assert not any(r.title == "Tiled Matmul Again" for r in legend)


# --- pieces ---


@pytest.mark.parametrize(
    ("url", "title", "kind"),
    [
        ("https://arxiv.org/abs/2205.14135", "FlashAttention", "paper"),
        ("https://www.cs.toronto.edu/papers/Horizontal_Fusion.pdf", "Fusion", "paper"),
        ("https://github.com/NVIDIA/cutlass", "CUTLASS", "repo"),
        ("https://huggingface.co/facebook/KernelLLM", "KernelLLM", "model"),
        ("https://huggingface.co/blog/continuous_batching", "Batching", "blog"),
        ("https://docs.nvidia.com/cuda/hopper-tuning-guide/", "Tuning", "docs"),
        ("https://discord.gg/gpumode", "Discord", "community"),
        ("https://www.elsevier.com/books/pmpp/hwu/978", "PMPP", "book"),
        ("https://michalpitr.substack.com", "From Scratch", "site"),
        ("https://www.usenix.org/conference/osdi22/presentation/yu", "Orca", "paper"),
        ("https://www.kapilsharma.dev/posts/gpu-mode-triton-internals-talk/", "Triton Internals Talk", "video"),
        ("https://developer.nvidia.com/blog/cuda-graphs/", "CUDA Graphs", "blog"),
    ],
)
def test_kind_is_inferred_from_host_path_and_title(url, title, kind):
    assert infer_kind(url, title) == kind


def test_resource_id_is_stable_and_short():
    long_url = "https://medium.com/@someone/" + "a-very-long-title-" * 10
    assert resource_id(long_url, "x") == resource_id(long_url, "y")
    assert len(resource_id(long_url, "x")) <= 80


def test_github_anchor_matches_github_slugs():
    assert github_anchor("Tensor Cores & Mixed Precision") == "tensor-cores--mixed-precision"
    assert github_anchor("2. Matrix Multiplication (The Gateway)") == "2-matrix-multiplication-the-gateway"


def test_split_authors_rejects_prefixes_that_are_not_names():
    assert split_authors("OSDI 2022. Original paper") == ("", "OSDI 2022. Original paper")
    assert split_authors("ThunderKittens for AMD. Tiles") == ("", "ThunderKittens for AMD. Tiles")
    assert split_authors("Colfax Research. TMA") == ("Colfax Research", "TMA")


# --- bad input, loading and syncing ---


def test_file_with_no_resources_is_a_one_line_error_naming_the_file(tmp_path):
    empty = tmp_path / "empty.md"
    empty.write_text("# Nothing here\n\nJust prose.\n")
    with pytest.raises(CatalogError, match=r"empty\.md: no resources found") as info:
        parse_source(str(empty))
    assert "\n" not in str(info.value)


def test_missing_file_is_a_one_line_error(tmp_path):
    with pytest.raises(CatalogError, match="no such file"):
        parse_source(str(tmp_path / "nope.md"))


def test_bundled_catalog_ships_the_whole_list():
    resources = bundled_catalog()
    assert len(resources) == 111
    assert all(r.kind == "paper" for r in resources if "arxiv.org" in r.url)


def test_sync_overrides_the_bundled_catalog(tmp_path):
    target = tmp_path / "catalog.json"
    sync_catalog(str(LISTS / "current.md"), target, force=True)  # far smaller than the bundled list
    assert [r.title for r in load_catalog(synced_file=target)][0] == "Tiled Matmul Worklog"


def test_sync_refuses_a_list_that_lost_half_its_entries_unless_forced(tmp_path):
    target = tmp_path / "catalog.json"
    sync_catalog(str(LISTS / "current.md"), target, force=True)
    before = target.read_bytes()
    truncated = tmp_path / "truncated.md"
    truncated.write_text("\n".join((LISTS / "current.md").read_text().splitlines()[:19]))
    with pytest.raises(CatalogError, match="--force"):
        sync_catalog(str(truncated), target)
    assert target.read_bytes() == before
    assert len(sync_catalog(str(truncated), target, force=True).resources) == 2


def test_first_sync_is_checked_against_the_bundled_catalog(tmp_path):
    with pytest.raises(CatalogError, match="the catalog in use has 111"):
        sync_catalog(str(LISTS / "current.md"), tmp_path / "catalog.json")


def test_corrupt_synced_catalog_is_a_one_line_error(tmp_path):
    target = tmp_path / "catalog.json"
    target.write_text("{not json")
    with pytest.raises(CatalogError, match="corrupt catalog file"):
        load_catalog(synced_file=target)
