"""`gpuguide config` and `gpuguide catalog`, end to end through the installed console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

LISTS = Path(__file__).parent / "fixtures" / "lists"
GPUGUIDE = str(Path(sys.executable).with_name("gpuguide"))


def run(*args: str, home: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "GPUGUIDE_HOME": str(home), **(env or {})}
    return subprocess.run([GPUGUIDE, *args], capture_output=True, text=True, env=full_env, timeout=120)


def test_catalog_json_parses_a_source_without_storing_it(isolated_home):
    out = run("catalog", "--json", "--source", str(LISTS / "current.md"), home=isolated_home)
    assert out.returncode == 0, out.stderr
    records = json.loads(out.stdout)
    assert len(records) == 8
    assert set(records[0]) >= {"id", "title", "url", "authors", "note", "topic", "section", "tier", "kind", "position", "list_anchor"}
    assert not (isolated_home / "catalog.json").exists()


def test_catalog_filters_by_tier_topic_and_kind(isolated_home):
    out = run("catalog", "--json", "--source", str(LISTS / "current.md"), "--tier", "1", "--kind", "paper", "--topic", "kern", home=isolated_home)
    assert [r["title"] for r in json.loads(out.stdout)] == ["Attention Paper"]


def test_catalog_without_source_prints_the_bundled_list(isolated_home):
    out = run("catalog", "--json", home=isolated_home)
    assert len(json.loads(out.stdout)) == 111


def test_catalog_sync_then_catalog_uses_the_synced_list(isolated_home):
    synced = run("catalog", "sync", "--from", str(LISTS / "legend.md"), "--force", home=isolated_home)
    assert synced.returncode == 0, synced.stderr
    assert "synced 8 resources (legend format)" in synced.stdout
    titles = [r["title"] for r in json.loads(run("catalog", "--json", home=isolated_home).stdout)]
    assert titles[0] == "The Textbook"


def test_bad_source_is_one_line_on_stderr_with_exit_2(isolated_home):
    out = run("catalog", "--source", str(isolated_home / "missing.md"), home=isolated_home)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1
    assert "missing.md: no such file" in out.stderr


def test_settings_precedence_is_defaults_then_file_then_env_then_flags(isolated_home):
    isolated_home.mkdir(parents=True)
    (isolated_home / "gpuguide.toml").write_text("[crawl]\nconcurrency = 3\nretries = 7\nmax_redirects = 9\n")
    out = run(
        "--set", "crawl.retries=1", "config", "--json", home=isolated_home,
        env={"GPUGUIDE_CRAWL__RETRIES": "5", "GPUGUIDE_CRAWL__MAX_REDIRECTS": "4"},
    )
    crawl = json.loads(out.stdout)["crawl"]
    assert crawl["concurrency"] == 3  # file over default
    assert crawl["max_redirects"] == 4  # env over file
    assert crawl["retries"] == 1  # flag over env
    assert crawl["per_host_concurrency"] == 2  # default


def test_invalid_setting_names_the_setting_in_one_line(isolated_home):
    out = run("--set", "crawl.concurrency=many", "config", home=isolated_home)
    assert out.returncode == 2
    assert "crawl.concurrency" in out.stderr and out.stderr.count("\n") == 1


def test_malformed_config_file_is_a_one_line_error(isolated_home):
    isolated_home.mkdir(parents=True)
    (isolated_home / "gpuguide.toml").write_text("[crawl\n")
    out = run("config", home=isolated_home)
    assert out.returncode == 2
    assert "gpuguide.toml" in out.stderr and out.stderr.count("\n") == 1
