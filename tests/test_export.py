"""The learning path and its export: time left per topic × tier, the Markdown checklist and the Anki CSV,
each read back by a real parser (markdown-it, the csv module) and through the CLI."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.index.corpus import build, embedder, load_corpus, make_settings
from markdown_it import MarkdownIt

from assistant.cli import main
from assistant.digest import SELF_CHECK, DigestMaker
from assistant.export import ANKI_COLUMNS, anki_csv, path_markdown
from assistant.path import learning_path
from assistant.profile import READ, READING, SKIPPED, Profile
from assistant.readtime import estimate_all
from core.settings import LearningSettings, Settings

STATES = {"flashattention": READ, "hopper-tma": READING, "gqa": SKIPPED}


def fixture_path():
    chunks, resources = load_corpus()
    return learning_path(resources, STATES, estimate_all(resources, chunks, LearningSettings())), resources


def test_time_left_counts_unread_and_reading_but_not_read_or_skipped() -> None:
    path, _ = fixture_path()
    left = [i for i in path.items if i.state not in (READ, SKIPPED)]
    assert path.left.minutes == sum(i.estimate.minutes or 0 for i in left)
    assert path.left.count == len(left) == 8
    group = next(g for g in path.groups if g.topic == "Attention & Memory-Bound Kernels" and g.tier == 1)
    assert group.count(READ) == 1 and group.left.count == 0 and group.left.label() == "nothing left"


def test_groups_follow_the_list_order_topic_then_tier() -> None:
    path, resources = fixture_path()
    topics = list(dict.fromkeys(r.topic for r in sorted(resources, key=lambda r: r.position)))
    assert list(dict.fromkeys(g.topic for g in path.groups)) == topics
    for topic in topics:
        tiers = [g.tier for g in path.groups if g.topic == topic]
        assert tiers == sorted(tiers, key=lambda t: 99 if t is None else t)


def test_markdown_export_is_a_checklist_in_the_list_order_with_states_and_times() -> None:
    path, _ = fixture_path()
    text = path_markdown(path, "https://example.org/list")
    tokens = MarkdownIt("commonmark").parse(text)
    items = [t.content for t in tokens if t.type == "inline" and t.content.startswith("[")]
    assert len(items) == len(path.items)
    for item, expected in zip(items, path.items, strict=True):
        box = "[x]" if expected.state in (READ, SKIPPED) else "[ ]"
        assert item.startswith(box + " [" + expected.resource.title.split(":")[0])
        assert expected.state in item and expected.estimate.label() in item
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h3"]
    assert len(headings) == len(path.groups) and all("time left: " in h for h in headings)


def test_markdown_export_escapes_catalog_text() -> None:
    path, _ = fixture_path()
    evil = path.groups[0].items[0]
    path.groups[0].items[0] = type(evil)(type(evil.resource)(**{**evil.resource.to_dict(), "tags": (),
                                          "title": "Pwn](javascript:alert(1)) <b>x</b>"}), evil.state, evil.estimate)
    html = MarkdownIt("commonmark").render(path_markdown(path))
    assert "javascript:" not in html.split('href="')[1].split('"')[0] and "<b>" not in html


def test_anki_csv_has_one_note_per_question_with_three_fields(isolated_home: Path) -> None:
    settings = make_settings(isolated_home)
    settings.learning.digest_backend = "extractive"
    chunks, resources = load_corpus()
    maker = DigestMaker(settings, resources, chunks, embedder(settings))
    digests = [maker.digest(rid, SELF_CHECK) for rid in ("flashattention", "nccl")]
    text = anki_csv(digests)
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert "#separator:comma" in header and "#tags column:3" in header
    rows = list(csv.reader(line for line in text.splitlines() if not line.startswith("#")))
    assert len(rows) == sum(len(d.questions) for d in digests) >= 4
    assert all(len(row) == len(ANKI_COLUMNS) for row in rows)
    assert rows[0][0].startswith(digests[0].questions[0].question)
    assert digests[0].questions[0].answer in rows[0][1] and "gpuguide" in rows[0][2].split()


def indexed_home(home: Path) -> Settings:
    """A data dir the CLI can work in: the fixture corpus indexed, its catalog stored as the synced list."""
    from ingest.catalog import catalog_payload

    settings = make_settings(home)
    chunks, resources = load_corpus()
    build(settings, chunks, resources)
    (home / "catalog.json").write_text(json.dumps(catalog_payload(resources, "test fixture")), encoding="utf-8")
    return settings


def test_cli_exports_markdown_and_anki_files(isolated_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = indexed_home(isolated_home)
    Profile(settings.profile_file).set_state(["nccl"], READING)
    assert main(["self-check", "nccl", "--extractive"]) == 0
    md, anki = isolated_home / "out" / "path.md", isolated_home / "out" / "cards.csv"
    assert main(["export", "--markdown", str(md), "--anki", str(anki)]) == 0
    assert "**reading**" in next(line for line in md.read_text().splitlines() if "NCCL" in line)
    rows = [r for r in csv.reader(anki.read_text().splitlines()) if r and not r[0].startswith("#")]
    out = capsys.readouterr().out
    asked = out.count("\nQ")
    assert asked >= 2 and len(rows) == asked and all("nccl" in r[2] for r in rows)
    assert f"{asked} self-check questions of 1 resources" in out


def test_the_old_command_names_still_work_with_a_note_saying_the_new_one(
        isolated_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    indexed_home(isolated_home)
    assert main(["self-check", "nccl", "--extractive"]) == 0
    current = capsys.readouterr()
    assert main(["quiz", "nccl", "--extractive"]) == 0
    old = capsys.readouterr()
    assert old.out == current.out and current.err == ""
    assert old.err.strip().splitlines() == ["gpuguide: 'quiz' is now 'gpuguide self-check'; the old name will go"]
    assert main(["explain", "nccl", "--extractive"]) == 0
    assert "'explain' is now 'gpuguide summary'" in capsys.readouterr().err


def test_the_help_lists_summary_and_self_check_not_the_old_names(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    listed = {line.split()[0] for line in capsys.readouterr().out.splitlines() if line.startswith("    ")}
    assert {"summary", "self-check"} <= listed and not {"explain", "quiz"} & listed


def test_cli_path_shows_time_left_per_topic_and_tier(isolated_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = indexed_home(isolated_home)
    Profile(settings.profile_file).set_state(["flashattention"], READ)
    assert main(["path", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    first = data["groups"][0]
    assert (first["topic"], first["tier"], first["states"]["read"]) == ("Attention & Memory-Bound Kernels", 1, 1)
    assert first["time_left"]["label"] == "nothing left"
    assert data["time_left"]["minutes"] == sum(
        r["time"]["minutes"] or 0 for g in data["groups"] for r in g["resources"] if r["state"] != READ)


def test_the_apps_export_folder_is_removed_when_its_process_ends() -> None:
    code = "from assistant.app.guide_tab import export_dir; print(export_dir())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parent.parent)
    folder = Path(done.stdout.strip())
    assert folder.name.startswith("gpuguide-exports-") and not folder.exists()


def test_the_export_folder_of_an_app_killed_by_a_signal_is_removed_by_the_next_one(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True).stdout.strip()
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    (tmp_path / f"gpuguide-exports-{dead}").mkdir()
    (tmp_path / "gpuguide-exports-notapid").mkdir()
    code = "from assistant.app.guide_tab import export_dir; export_dir()"
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=Path(__file__).resolve().parent.parent)
    assert not (tmp_path / f"gpuguide-exports-{dead}").exists()
    assert (tmp_path / "gpuguide-exports-notapid").exists()
