"""With a login configured and the app bound beyond loopback, nothing answers without it: pages, the HTTP API
(gradio_client and raw requests) and the MCP endpoint. `gpuguide serve` on the fixture index, in a subprocess."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import httpx
import pytest
from gradio_client import Client
from ui_fixture import AppServer, make_home

USER, PASSWORD = "learner", "correct horse battery"
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
TOOLS_CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "search", "arguments": {"query": "shared memory tiling"}}}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    home = tmp_path_factory.mktemp("auth-home")
    make_home(home)
    with (home / "gpuguide.toml").open("a", encoding="utf-8") as config:
        config.write(f'auth_user = "{USER}"\nauth_password = "{PASSWORD}"\n')  # under make_home's [ui]
    with AppServer(home, extra_args=("--host", "0.0.0.0")) as app:
        app.local = f"http://127.0.0.1:{app.port}/"
        yield app


def basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def test_gradio_client_without_login_is_refused(server: AppServer) -> None:
    with pytest.raises(Exception, match="(?i)credentials|login|auth"):
        Client(server.local, verbose=False)


def test_raw_api_call_without_login_is_refused(server: AppServer) -> None:
    response = httpx.post(server.local + "gradio_api/call/search", json={"data": ["tiling"]}, timeout=30)
    assert response.status_code == 401


def test_mcp_tool_call_without_login_is_refused(server: AppServer) -> None:
    response = httpx.post(server.local + "gradio_api/mcp/", json=TOOLS_CALL, headers=MCP_HEADERS, timeout=30)
    assert response.status_code == 401
    assert "tiling" not in response.text.lower()


def test_mcp_schema_without_login_is_refused(server: AppServer) -> None:
    assert httpx.get(server.local + "gradio_api/mcp/schema", timeout=30).status_code == 401


def test_mcp_with_wrong_credentials_is_refused(server: AppServer) -> None:
    response = httpx.post(server.local + "gradio_api/mcp/", json=TOOLS_LIST,
                          headers={**MCP_HEADERS, **basic(USER, "wrong")}, timeout=30)
    assert response.status_code == 401


def test_mcp_with_basic_credentials_lists_the_tools(server: AppServer) -> None:
    response = httpx.post(server.local + "gradio_api/mcp/", json=TOOLS_LIST,
                          headers={**MCP_HEADERS, **basic(USER, PASSWORD)}, timeout=30)
    assert response.status_code == 200
    assert '"search"' in response.text


def test_gradio_client_with_login_searches(server: AppServer) -> None:
    hits = Client(server.local, auth=(USER, PASSWORD), verbose=False).predict("tiling", api_name="/search")
    assert isinstance(hits, list) and hits
