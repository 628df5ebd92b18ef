"""The app's API as a client sees it (gradio_client against `gpuguide serve` on the fixture index), its
MCP tool list, and the refusal to listen beyond loopback without a login."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from gradio_client import Client
from ui_fixture import AppServer, free_port, make_home

from assistant.cli import main
from core.errors import UserError
from core.settings import UISettings

API_NAMES = {"/search", "/ask", "/next_reads", "/reading_state", "/learning_path", "/summary", "/self_check"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    home = tmp_path_factory.mktemp("api-home")
    make_home(home)
    with AppServer(home) as app:
        yield app


@pytest.fixture(scope="module")
def client(server: AppServer) -> Client:
    return Client(server.url, verbose=False)


def test_only_the_named_endpoints_are_public(client: Client) -> None:
    info = client.view_api(print_info=False, return_format="dict")
    assert set(info["named_endpoints"]) == API_NAMES
    assert not info["unnamed_endpoints"]


def test_mcp_exposes_the_same_tools_with_described_arguments(server: AppServer) -> None:
    tools = httpx.get(server.url + "gradio_api/mcp/schema", timeout=30).json()
    by_name = {t["name"]: t for t in tools}
    assert set(by_name) == {name.lstrip("/") for name in API_NAMES}
    props = by_name["search"]["inputSchema"]["properties"]
    assert props["query"]["type"] == "string" and "tier" in props["tier"]["description"]
    assert by_name["ask"]["inputSchema"]["required"] == ["question"]
    assert "read next" in by_name["next_reads"]["description"]


def test_search_returns_resources_with_their_place_in_the_list(client: Client) -> None:
    hits = client.predict("Tensor Memory Accelerator copying tiles on Hopper", api_name="/search")
    top = hits[0]
    assert top["id"] == "hopper-tma" and top["rank"] == 1
    assert top["place"] == "Tensor Cores & Mixed Precision › Tensor core fundamentals · Tier 1"
    assert top["list_url"].endswith("#tensor-core-fundamentals")
    assert top["passages"] and 0 <= top["confidence"] <= 1.5

    tier2 = client.predict("distributed training", 5, 2, "", "", False, api_name="/search")
    assert tier2 and {h["tier"] for h in tier2} == {2}


def test_ask_returns_a_cited_answer(client: Client) -> None:
    answer = client.predict("How does FlashAttention avoid writing the attention matrix to HBM?", "extractive",
                            api_name="/ask")
    assert answer["route"] == "search" and not answer["abstained"]
    assert "[1]" in answer["text"]
    first = answer["citations"][0]
    assert first["resource_id"] == "flashattention" and first["tier"] == 1
    assert first["list_url"].endswith("#flashattention") and first["passage"]


def test_ask_refuses_an_oversized_question(client: Client) -> None:
    with pytest.raises(Exception, match="limit is 2000"):
        client.predict("why " * 1000, api_name="/ask")


def test_next_reads_follows_tiers_and_skips_what_was_read(client: Client) -> None:
    plan = client.predict("attention kernels", 3, ["flashattention"], api_name="/next_reads")
    picks = plan["picks"]
    assert len(picks) == 3 and "flashattention" not in {p["id"] for p in picks}
    assert plan["focus_topics"][0] == "Attention & Memory-Bound Kernels"
    assert all(p["reason"] and p["list_url"].startswith("https://") for p in picks)

    with pytest.raises(Exception, match="names nothing in the catalog"):  # the CLI's `next --read` message
        client.predict("", 3, ["https://example.org/not-there"], api_name="/next_reads")


def test_next_reads_accepts_free_text_for_what_was_read(client: Client) -> None:
    plan = client.predict("", 3, ["the FlashAttention paper and the Triton intro post"], api_name="/next_reads")
    assert set(plan["counted_as_read"]) == {"flashattention", "triton-intro"}
    assert not {"flashattention", "triton-intro"} & {p["id"] for p in plan["picks"]}


def test_ask_routes_a_reading_history_to_the_planner_and_says_what_it_understood(client: Client) -> None:
    answer = client.predict("I've read the FlashAttention paper. What should I read next?", "extractive",
                            api_name="/ask")
    assert answer["route"] == "next" and answer["read_ids"] == ["flashattention"]
    assert answer["text"].startswith("Counting as read: FlashAttention: Fast and Memory-Efficient Exact Attention.")
    assert "flashattention" not in {c["resource_id"] for c in answer["citations"]}


def test_binding_all_interfaces_without_auth_is_refused(capsys: pytest.CaptureFixture[str],
                                                        isolated_home: Path) -> None:
    status = main(["serve", "--host", "0.0.0.0", "--port", str(free_port())])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("gpuguide: error: refusing to listen on 0.0.0.0 without a login")
    assert not (isolated_home / "index").exists()  # refused before building anything


def test_auth_is_required_off_loopback_and_used_when_given() -> None:
    import ui

    assert ui.check_bind(UISettings()) is None
    assert ui.check_bind(UISettings(host="::1")) is None
    with pytest.raises(UserError):
        ui.check_bind(UISettings(host="192.168.1.5", auth_user="me"))
    assert ui.check_bind(UISettings(host="0.0.0.0", auth_user="me", auth_password="pw")) == ("me", "pw")
