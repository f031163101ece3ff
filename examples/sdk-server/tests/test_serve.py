"""The seam between serve() / main() and the app factories: host and port must travel.

The listener is replaced by a recorder on a name this repo owns
(`sdk_server.app._listen`), and every test asserts that exactly one app was
built and handed over (002 rule 7b/c): a test that took another branch fails
instead of starting a real server.

The sharp negative case is the factory's *default* port (8000): if serve() drops
the port, the factory builds the allow-list for 8000, and only a request on 8000
tells the difference.
"""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from sdk_server import app as app_module
from sdk_server.app import DEFAULT_PORT, main, serve
from tests.conftest import HOST, TOKEN, FakeInventoryAPI, post_rpc

SERVE_PORT = 8443
assert SERVE_PORT != DEFAULT_PORT


@pytest.fixture
def listened(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    def record(app: Any, host: str, port: int) -> None:
        calls.append({"app": app, "host": host, "port": port})

    monkeypatch.setattr(app_module, "_listen", record)
    return calls


def served_app(calls: list[dict[str, Any]], host: str, port: int) -> Any:
    assert len(calls) == 1, "serve() must build one app and hand it to the listener"
    assert (calls[0]["host"], calls[0]["port"]) == (host, port), "the listener must get the same bind"
    return calls[0]["app"]


def test_serve_real_hostname_is_accepted(listened: list[dict[str, Any]], api: FakeInventoryAPI) -> None:
    serve(HOST, SERVE_PORT, TOKEN, api.inventory())
    with TestClient(served_app(listened, HOST, SERVE_PORT), base_url=f"http://{HOST}:{SERVE_PORT}") as client:
        assert post_rpc(client, "tools/list").status_code == 200


def test_serve_factory_default_port_is_rejected(listened: list[dict[str, Any]], api: FakeInventoryAPI) -> None:
    serve(HOST, SERVE_PORT, TOKEN, api.inventory())
    with TestClient(served_app(listened, HOST, SERVE_PORT), base_url=f"http://{HOST}:{SERVE_PORT}") as client:
        assert post_rpc(client, "tools/list", Host=f"{HOST}:{DEFAULT_PORT}").status_code == 421


def test_serve_sse_branch_gets_the_bind(listened: list[dict[str, Any]], api: FakeInventoryAPI) -> None:
    serve(HOST, SERVE_PORT, TOKEN, api.inventory(), transport="sse")
    path = "/messages/?session_id=0123456789abcdef0123456789abcdef"
    with TestClient(served_app(listened, HOST, SERVE_PORT), base_url=f"http://{HOST}:{SERVE_PORT}") as client:
        admitted = post_rpc(client, "tools/list", path=path)
        assert admitted.status_code == 404 and "Could not find session" in admitted.text, "the SSE branch ran"
        assert post_rpc(client, "tools/list", path=path, Host=f"{HOST}:{DEFAULT_PORT}").status_code == 421


def test_unknown_transport_is_refused(listened: list[dict[str, Any]], api: FakeInventoryAPI) -> None:
    with pytest.raises(ValueError, match="unknown transport"):
        serve(HOST, SERVE_PORT, TOKEN, api.inventory(), transport="websocket")
    assert listened == []


def test_main_reads_the_bind_from_the_environment(
    listened: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_HOST", HOST)
    monkeypatch.setenv("MCP_PORT", str(SERVE_PORT))
    monkeypatch.setenv("MCP_TOKEN", TOKEN)
    monkeypatch.setenv("INVENTORY_URL", "http://inventory.internal")
    monkeypatch.setenv("INVENTORY_API_KEY", "inventory-api-key")
    monkeypatch.setenv("MCP_ALLOWED_HOSTS", "mcp.example.com")
    main([])
    with TestClient(served_app(listened, HOST, SERVE_PORT), base_url=f"http://{HOST}:{SERVE_PORT}") as client:
        assert post_rpc(client, "tools/list").status_code == 200
        assert post_rpc(client, "tools/list", Host="mcp.example.com").status_code == 200


def test_main_without_token_exits(listened: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCP_TOKEN", raising=False)
    with pytest.raises(SystemExit) as exited:
        main([])
    assert exited.value.code == 2
    assert listened == []


def test_main_without_a_host_binds_to_loopback(
    listened: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No --host and no MCP_HOST: the listener gets 127.0.0.1, never every interface."""
    monkeypatch.delenv("MCP_HOST", raising=False)
    monkeypatch.setenv("MCP_TOKEN", TOKEN)
    monkeypatch.setenv("INVENTORY_URL", "http://inventory.internal")
    monkeypatch.setenv("INVENTORY_API_KEY", "inventory-api-key")
    main(["--port", str(SERVE_PORT)])
    assert len(listened) == 1
    assert listened[0]["host"] == "127.0.0.1"
