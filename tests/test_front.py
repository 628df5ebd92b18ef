"""The front object (assistant/guide.py) is the one way in: a setting changes the same answer through the CLI
and through the app's API, and a chat question is routed once, then takes one path.

Real parts: the fixture index on disk, the packaged embedder, `gpuguide serve` in a subprocess for the API.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from gradio_client import Client
from ui_fixture import AppServer, make_home

from assistant.app import api
from assistant.chain import Query
from assistant.cli import main
from assistant.guide import Guide
from core.settings import load_settings

INTEREST = "attention kernels and tensor cores"
PICKS = 4
LOW_FOCUS = 0.2  # the fixture's second topic scores between this and the default 0.5: it becomes a focus


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A served data dir whose settings file lowers `planner.focus_threshold`."""
    home = tmp_path_factory.mktemp("front-home")
    make_home(home)
    with (home / "gpuguide.toml").open("a", encoding="utf-8") as toml:
        toml.write(f"\n[planner]\nfocus_threshold = {LOW_FOCUS}\n")
    return home


@pytest.fixture(scope="module")
def client(home: Path) -> Iterator[Client]:
    with AppServer(home) as app:
        yield Client(app.url, verbose=False)


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def plan_of(data: dict[str, Any]) -> tuple[list[str], list[str]]:
    return data["focus_topics"], [p["id"] for p in data["picks"]]


def test_the_settings_file_shapes_the_cli_plan_and_the_api_plan_alike(home, client, capsys) -> None:
    cli = cli_json(capsys, "--home", str(home), "next", "--interest", INTEREST, "--k", str(PICKS), "--json")
    served = client.predict(INTEREST, PICKS, [], api_name="/next_reads")
    assert plan_of(cli) == plan_of(served)
    assert len(cli["focus_topics"]) == 2


def test_the_threshold_changes_that_answer(home, client, capsys) -> None:
    default = cli_json(capsys, "--home", str(home), "--set", "planner.focus_threshold=0.5", "next",
                       "--interest", INTEREST, "--k", str(PICKS), "--json")
    served = client.predict(INTEREST, PICKS, [], api_name="/next_reads")
    assert default["focus_topics"] == served["focus_topics"][:1]
    assert plan_of(default) != plan_of(served)


def test_the_api_handler_reads_the_setting_from_the_guide_it_is_given(home) -> None:
    low = Guide(load_settings(home=str(home)))
    default = Guide(load_settings(home=str(home), planner={"focus_threshold": 0.5}))
    assert len(api.next_reads(low, INTEREST, PICKS)["focus_topics"]) == 2
    assert len(api.next_reads(default, INTEREST, PICKS)["focus_topics"]) == 1


# --- one routing decision, then one path ------------------------------------------------------------


@pytest.fixture
def counted(home: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Guide, list[str]]:
    """A Guide whose router records each question it decides (the real router still decides)."""
    guide = Guide(load_settings(home=str(home), llm={"backend": "extractive"}))
    router = guide.assistant().next_reads.router
    decided: list[str] = []
    real: Callable[..., Any] = router.decide

    def decide(question: str, *args: Any, **kwargs: Any) -> Any:
        decided.append(question)
        return real(question, *args, **kwargs)

    monkeypatch.setattr(router, "decide", decide)
    return guide, decided


def test_a_technical_question_is_decided_once_and_answered_by_search(counted) -> None:
    guide, decided = counted
    answer = guide.ask(Query("How does FlashAttention avoid writing the attention matrix to HBM?"))
    assert answer.route == "search" and decided == ["How does FlashAttention avoid writing the attention matrix to HBM?"]


def test_a_reading_request_is_decided_once_and_answered_by_the_planner(counted) -> None:
    guide, decided = counted
    answer = guide.ask(Query("I've read the FlashAttention paper. What should I read next?"))
    assert answer.route == "next" and len(decided) == 1
    assert answer.read_ids == ["flashattention"]
