"""Reading states (unread / reading / read / skipped): stored, migrated from the read-only profile, and what
the planner does with them."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from assistant.planner import plan_next
from assistant.profile import MIGRATIONS, READ, READING, SKIPPED, UNREAD, Profile
from core.errors import UserError
from core.records import Resource

FIXTURE_CATALOG = Path(__file__).parent / "fixtures" / "planner" / "catalog.json"


@pytest.fixture(scope="module")
def catalog() -> list[Resource]:
    data = json.loads(FIXTURE_CATALOG.read_text(encoding="utf-8"))
    return [Resource.from_dict(r) for r in (data["resources"] if isinstance(data, dict) else data)]


def test_states_round_trip(tmp_path: Path) -> None:
    profile = Profile(tmp_path / "profile.sqlite3")
    profile.set_state(["a"], READING)
    profile.set_state(["b", "c"], READ)
    profile.set_state(["d"], SKIPPED)
    profile.set_state(["c"], UNREAD)
    assert profile.states() == {"a": READING, "b": READ, "d": SKIPPED}
    assert profile.state("c") == UNREAD and profile.read_ids() == {"b"}


def test_states_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "profile.sqlite3"
    Profile(path).set_state(["a"], READING)
    Profile(path).set_state(["b"], SKIPPED)
    assert Profile(path).states() == {"a": READING, "b": SKIPPED}


def test_an_unknown_state_is_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="'done' is unknown; use one of unread, reading, read, skipped"):
        Profile(tmp_path / "profile.sqlite3").set_state(["a"], "done")


def test_a_read_only_profile_of_today_becomes_read_states_with_their_times(tmp_path: Path) -> None:
    path = tmp_path / "profile.sqlite3"
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE read (resource_id TEXT PRIMARY KEY, read_at REAL NOT NULL);
        INSERT INTO read VALUES ('papers-example-org-raft', 1700000000.0), ('jepsen-example-io-clocks', 1700000500.0);
    """)
    db.close()

    profile = Profile(path)

    assert profile.states() == {"papers-example-org-raft": READ, "jepsen-example-io-clocks": READ}
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert dict(db.execute("SELECT resource_id, updated_at FROM states")) == {
            "papers-example-org-raft": 1700000000.0, "jepsen-example-io-clocks": 1700000500.0}
        assert db.execute("SELECT name FROM sqlite_master WHERE name = 'read'").fetchone() is None
    finally:
        db.close()


def test_the_plan_finishes_what_is_being_read_first(catalog: list[Resource]) -> None:
    plan = plan_next(catalog, set(), k=3, reading_ids={"qc-example-org-llvm-2"})
    assert plan.picks[0].resource.id == "qc-example-org-llvm-2"
    assert "you are reading this" in plan.picks[0].reason


def test_the_plan_never_recommends_read_or_skipped_items(catalog: list[Resource]) -> None:
    read = {"kvstore-example-net-posts-lsm-trees"}
    skipped = {"books-example-org-database-internals", "papers-example-org-vec-vs-comp"}
    plan = plan_next(catalog, read, k=len(catalog), skipped_ids=skipped)
    picked = {p.resource.id for p in plan.picks}
    assert not picked & (read | skipped)
    assert len(picked) == len(catalog) - 3


def test_a_skipped_item_lets_the_topic_move_to_its_next_tier(catalog: list[Resource]) -> None:
    tier1 = {"books-example-org-database-internals", "kvstore-example-net-posts-lsm-trees"}
    plan = plan_next(catalog, tier1, interest="storage engines", k=3, skipped_ids={"tobiasr-example-dev-buffer-pool"})
    assert [p.resource.tier for p in plan.picks[:2]] == [2, 2]
    assert {p.resource.topic for p in plan.picks[:2]} == {"Storage Engines"}


def test_a_reading_item_that_is_also_read_is_not_picked(catalog: list[Resource]) -> None:
    plan = plan_next(catalog, {"papers-example-org-raft"}, k=3, reading_ids={"papers-example-org-raft"})
    assert "papers-example-org-raft" not in {p.resource.id for p in plan.picks}


def test_the_chat_plan_says_how_long_its_picks_take(catalog: list[Resource]) -> None:
    from assistant.planner import explain
    from assistant.reading import Understanding
    from assistant.readtime import Estimate

    plan = plan_next(catalog, set(), k=2)
    times = {plan.picks[0].resource.id: Estimate(plan.picks[0].resource.id, 12, "text", 2400),
             plan.picks[1].resource.id: Estimate(plan.picks[1].resource.id, None, "unknown")}
    text = explain(Understanding(read=[], mentions=[], interest={}, interest_text=""), plan, set(), times)
    assert f"1. {plan.picks[0].resource.title} (12 min)" in text
    assert f"2. {plan.picks[1].resource.title} (unknown)" in text
    assert text.splitlines()[-1] == "Reading time of these picks: 12 min + 1 unknown."


def test_cli_read_sets_any_state_and_lists_them(capsys: pytest.CaptureFixture[str]) -> None:
    from assistant.cli import main
    from ingest.catalog import load_catalog

    first, second = [r.id for r in load_catalog()[:2]]
    assert main(["read", "reading", first]) == 0
    assert main(["read", "skip", second]) == 0
    capsys.readouterr()
    assert main(["read", "list"]) == 0
    listed = [line.split("\t")[:2] for line in capsys.readouterr().out.splitlines()]
    assert listed == [["reading", first], ["skipped", second]]
    assert main(["next", "--k", "2", "--json"]) == 0
    picks = json.loads(capsys.readouterr().out)["picks"]
    assert picks[0]["id"] == first and second not in {p["id"] for p in picks}
    assert picks[0]["time"]["minutes"] is None  # no pages ingested in this data dir: unknown, not guessed
