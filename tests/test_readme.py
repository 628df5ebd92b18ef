"""The README is a newcomer's page, and the docs it points to are there.

The README says what gpuguide is, how to start it and where to read more; measured numbers live in
docs/benchmarks.md and docs/measurements/ with their commands, so they cannot go stale on the front page.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
FIRST_SCREEN = 40  # lines a newcomer sees without scrolling

# Docs pages other engineers are writing at the same time (issue 25); the README links them already. While one
# is missing its link is reported by `test_pages_still_being_written_are_listed`, not failed on.
PAGES_BEING_WRITTEN = {"docs/architecture.md", "docs/planner.md", "docs/retrieval.md", "docs/files-and-models.md"}

# [text](target) and ![alt](target), not inside inline code; reference-style links are not used here.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"`[^`\n]*`")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)

# A measured number: a percentage ("37 %", "12.5%") or a speed-up ("4x faster", "16×", "3.2x").
PERCENT = re.compile(r"\d\s?%")
TIMES = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?[x×](?!\w)")


def _readme() -> str:
    return README.read_text(encoding="utf-8")


def _prose(markdown: str) -> str:
    """The text with code blocks and inline code removed, where links and numbers are not prose."""
    return CODE_SPAN.sub("", FENCE.sub("", markdown))


def _relative_targets(page: Path) -> list[tuple[str, Path]]:
    """(link as written, file it points to) for every relative link of `page`, anchors dropped."""
    out = []
    for target in LINK.findall(_prose(page.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue  # http(s), mailto, or a link inside the same page
        path = target.split("#", 1)[0]
        out.append((target, (page.parent / path).resolve()))
    return out


def _links() -> list[tuple[Path, str, Path]]:
    return [(page, target, dest) for page in [README, *DOCS] for target, dest in _relative_targets(page)]


def _key(dest: Path) -> str:
    try:
        return dest.relative_to(ROOT).as_posix()
    except ValueError:
        return dest.as_posix()


def test_readme_is_at_most_250_lines() -> None:
    assert len(_readme().splitlines()) <= 250


def test_the_first_screen_holds_the_two_commands() -> None:
    first = "\n".join(_readme().splitlines()[:FIRST_SCREEN])
    assert "make run" in first
    assert "make test" in first


def test_every_relative_link_points_to_an_existing_file() -> None:
    broken = [f"{_key(page)}: {target}" for page, target, dest in _links()
              if not dest.exists() and _key(dest) not in PAGES_BEING_WRITTEN]
    assert not broken, "links to missing files: " + ", ".join(broken)


def test_pages_still_being_written_are_listed() -> None:
    """Links to the pages being written may dangle for now; this names them so nobody forgets."""
    missing = sorted({_key(dest) for _, _, dest in _links() if not dest.exists()})
    assert set(missing) <= PAGES_BEING_WRITTEN, missing
    if missing:
        warnings.warn(f"docs pages linked but not written yet: {', '.join(missing)}", stacklevel=1)


def test_the_readme_links_the_docs_pages() -> None:
    linked = {_key(dest) for page, _, dest in _links() if page == README}
    for page in ("docs/architecture.md", "docs/benchmarks.md", "docs/answers.md", "docs/settings.md"):
        assert page in linked, page


def test_the_readme_carries_no_percentages() -> None:
    assert not PERCENT.findall(_prose(_readme()))


def test_the_readme_carries_no_speed_up_factors() -> None:
    prose = _prose(_readme())
    assert not TIMES.findall(prose)
    assert not re.search(r"\b(?:faster|slower)\s+than\b|\btimes\s+(?:faster|slower)\b", prose, re.I)


def test_the_number_checks_catch_what_they_are_for() -> None:
    assert PERCENT.search("recall went up 12 % on the set")
    assert TIMES.search("embedding is 16× the CPU") and TIMES.search("4x faster")
    assert not TIMES.search("a 0x1f address or an h200x box")


def test_the_link_check_sees_links_and_skips_code(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("[a](missing.md) `[b](in-code.md)` [c](https://example.org) [d](#here)\n"
                    "```\n[e](fenced.md)\n```\n", encoding="utf-8")
    assert [t for t, _ in _relative_targets(page)] == ["missing.md"]
