"""Shared fixtures: a fake inventory API (httpx.MockTransport, no socket) and TestClients.

Every client is a Starlette `TestClient` used *as a context manager*, so the
app's lifespan runs: the SDK starts its streamable-HTTP session manager there,
and without it every request is a 500 that has nothing to do with the code
under test (002 rule 7a).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from sdk_server.app import build_app, build_sse_app
from sdk_server.inventory import Inventory

TOKEN = "operator-token-7f3a"
HOST = "mcp.example.test"  # a real name, not loopback: the SDK's loopback fallback cannot decide for us
PORT = 8443
BASE_URL = f"http://{HOST}:{PORT}"

# Upstream order on purpose: not sorted, and the two "db" servers (a tie on name)
# come in *descending* id order, so a sort on name alone keeps the wrong order.
SERVERS = [
    {"id": "srv-9", "name": "db", "status": "active", "region": "eu-west"},
    {"id": "srv-7", "name": "web", "status": "active", "region": "eu-west"},
    {"id": "srv-2", "name": "db", "status": "active", "region": "us-east"},
    {"id": "srv-5", "name": "api", "status": "retired", "region": "eu-west"},
]


class FakeInventoryAPI:
    """Behaves like the real inventory API, including its default scope ("active")."""

    def __init__(self) -> None:
        self.servers: list[dict[str, Any]] = [dict(s) for s in SERVERS]
        # "auth": 401, "down": 503, "unreachable": connection refused,
        # "renamed": the list is under "items"
        self.mode = "ok"
        self.requests: list[httpx.Request] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.mode == "auth":
            return httpx.Response(401, json={"error": "invalid api key"})
        if self.mode == "down":
            return httpx.Response(503, text="maintenance")
        if self.mode == "unreachable":
            raise httpx.ConnectError("connection refused", request=request)
        path = request.url.path
        if path == "/v1/servers":
            scope = request.url.params.get("scope", "active")
            selected = [s for s in self.servers if scope == "all" or s["status"] == scope]
            return httpx.Response(200, json={"items" if self.mode == "renamed" else "servers": selected})
        if path.startswith("/v1/servers/"):
            wanted = path.removeprefix("/v1/servers/")
            for server in self.servers:
                if server["id"] == wanted:
                    return httpx.Response(200, json=server)
            return httpx.Response(404, json={"error": "not found"})
        return httpx.Response(404)

    def inventory(self) -> Inventory:
        return Inventory("http://inventory.internal", "inventory-api-key", transport=httpx.MockTransport(self.handle))

    def last_params(self) -> dict[str, str]:
        return dict(self.requests[-1].url.params)


@pytest.fixture
def api() -> FakeInventoryAPI:
    return FakeInventoryAPI()


@pytest.fixture
def client(api: FakeInventoryAPI) -> Iterator[TestClient]:
    app = build_app(host=HOST, port=PORT, token=TOKEN, inventory=api.inventory())
    with TestClient(app, base_url=BASE_URL) as test_client:
        yield test_client


@pytest.fixture
def sse_client(api: FakeInventoryAPI) -> Iterator[TestClient]:
    app = build_sse_app(host=HOST, port=PORT, token=TOKEN, inventory=api.inventory())
    with TestClient(app, base_url=BASE_URL) as test_client:
        yield test_client


def mcp_headers(method: str, name: str | None = None, **overrides: str | None) -> dict[str, str]:
    """The headers a correct client sends; an override of None drops that header."""
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {TOKEN}",
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    for key, value in overrides.items():
        key = key.replace("_", "-")
        if value is None:
            headers = {k: v for k, v in headers.items() if k.lower() != key.lower()}
        else:
            headers[key] = value
    return headers


def post_rpc(
    client: TestClient,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    path: str = "/mcp",
    **header_overrides: str | None,
) -> httpx.Response:
    name = params.get("name") if params and method == "tools/call" else None
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    return client.post(path, json=body, headers=mcp_headers(method, name, **header_overrides))


def call_tool(client: TestClient, tool: str, **arguments: Any) -> dict[str, Any]:
    """The `result` of a tools/call that must get through transport, auth and header checks."""
    response = post_rpc(client, "tools/call", {"name": tool, "arguments": arguments})
    assert response.status_code == 200, response.text
    payload = response.json()
    assert "result" in payload, payload
    return payload["result"]


def error_text(result: dict[str, Any]) -> str:
    return " ".join(part.get("text", "") for part in result["content"])
