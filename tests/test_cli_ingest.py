"""`gpuguide ingest`, `ingest --report` and `chunks`, end to end against a real server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from http_fixture import FixtureServer, Reply, http_server_fixture  # noqa: F401

FIXTURES = Path(__file__).parent / "fixtures"
GPUGUIDE = str(Path(sys.executable).with_name("gpuguide"))


def gpuguide(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GPUGUIDE_HOME": str(home)}
    return subprocess.run([GPUGUIDE, *args], capture_output=True, text=True, env=env, timeout=300)


def configure(home: Path, server: FixtureServer) -> None:
    """Point the fixture list's hosts at the loopback server through settings, not code."""
    home.mkdir(parents=True, exist_ok=True)
    rewrites = {
        "https://blog.example.org/": server.url("/blog/"),
        "https://arxiv.org/": server.url("/arxiv/"),
        "https://docs.example.com/": server.url("/docs/"),
    }
    lines = [
        "[catalog]", f'source = "{FIXTURES / "lists" / "current.md"}"',
        "[crawl]", 'allowed_private_hosts = ["127.0.0.1"]', "host_delay_s = 0", "read_timeout_s = 2",
        "retries = 0", "follow_arxiv_pdf = false", "follow_github_readme = false",
        "[crawl.url_rewrites]", *[f'"{k}" = "{v}"' for k, v in rewrites.items()],
    ]
    (home / "gpuguide.toml").write_text("\n".join(lines) + "\n")


def test_ingest_fetches_extracts_chunks_and_reports_every_url(http_server, isolated_home):
    http_server.route("/blog/posts/tiled-matmul/", Reply.file("../pages/article.html"))
    http_server.route("/docs/guide/", Reply(500))
    configure(isolated_home, http_server)
    out = gpuguide(isolated_home, "ingest", "--no-index", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    status = {row["url"]: row["status"] for row in report["urls"]}
    assert status["https://blog.example.org/posts/tiled-matmul/"] == "ok"
    assert status["https://docs.example.com/guide/"] == "failed"
    assert status["https://arxiv.org/abs/2205.00001"] == "failed"  # 404 on the fixture server


def test_report_prints_the_last_run(http_server, isolated_home):
    http_server.route("/blog/posts/tiled-matmul/", Reply.file("../pages/article.html"))
    configure(isolated_home, http_server)
    gpuguide(isolated_home, "ingest", "--no-index")
    out = gpuguide(isolated_home, "ingest", "--report", "--json")
    assert out.returncode == 0
    assert json.loads(out.stdout)["run"]["counts"]["ok"] == 1


def test_chunks_json_lines_carry_offsets_heading_path_and_text(http_server, isolated_home):
    http_server.route("/blog/posts/tiled-matmul/", Reply.file("../pages/article.html"))
    configure(isolated_home, http_server)
    gpuguide(isolated_home, "ingest", "--no-index")
    out = gpuguide(isolated_home, "chunks", "--resource", "https://blog.example.org/posts/tiled-matmul/", "--json")
    records = [json.loads(line) for line in out.stdout.splitlines()]
    page = [r for r in records if r["source_kind"] != "card"]
    assert page and all(r["end"] > r["start"] and r["text"] for r in page)
    assert any(r["heading_path"] for r in page)
    assert any(r["source_kind"] == "card" for r in records)


def test_every_resource_gets_a_card_even_when_nothing_is_fetched(isolated_home, http_server):
    configure(isolated_home, http_server)
    out = gpuguide(isolated_home, "ingest", "--no-index")
    assert out.returncode == 1  # no page text at all is a failed run, though the cards are stored
    chunks = [json.loads(line) for line in gpuguide(isolated_home, "chunks", "--json").stdout.splitlines()]
    assert len({c["resource_id"] for c in chunks if c["source_kind"] == "card"}) == 8


def test_ingest_report_before_any_run_is_a_one_line_error(isolated_home):
    out = gpuguide(isolated_home, "ingest", "--report")
    assert out.returncode == 2
    assert "no ingest has run" in out.stderr and out.stderr.count("\n") == 1


def test_missing_warc_is_a_one_line_error(isolated_home):
    out = gpuguide(isolated_home, "ingest", "--warc", str(isolated_home / "nope.warc.gz"))
    assert out.returncode == 2
    assert "nope.warc.gz: no such file" in out.stderr
