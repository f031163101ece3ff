"""Mcp-Method / Mcp-Name must equal the body; a missing header is rejected too (-32020).

The requests here are handshake-era requests (no `MCP-Protocol-Version:
2026-07-28`): for 2026-07-28 requests the SDK runs the same check itself, so a
test there would stay green without ours (a second reason, 002 rule 5).
"""

from __future__ import annotations

import asyncio

import httpx
from starlette.testclient import TestClient

from tests.conftest import mcp_headers, post_rpc

HEADER_MISMATCH = -32020


def assert_header_mismatch(response: httpx.Response) -> None:
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == HEADER_MISMATCH


def test_matching_headers_are_accepted(client: TestClient) -> None:
    response = post_rpc(client, "tools/call", {"name": "count_servers", "arguments": {}})
    assert response.status_code == 200, response.text
    assert response.json()["result"]["isError"] is False


def test_mcp_method_mismatch_is_rejected(client: TestClient) -> None:
    response = post_rpc(client, "tools/call", {"name": "count_servers", "arguments": {}}, Mcp_Method="tools/list")
    assert_header_mismatch(response)


def test_mcp_name_mismatch_is_rejected(client: TestClient) -> None:
    # the gateway allow-lists on Mcp-Name: it sees count_servers, the body calls get_server
    response = post_rpc(
        client, "tools/call", {"name": "get_server", "arguments": {"server_id": "srv-2"}}, Mcp_Name="count_servers"
    )
    assert_header_mismatch(response)


def test_missing_mcp_method_is_rejected(client: TestClient) -> None:
    response = post_rpc(client, "tools/list", Mcp_Method=None)
    assert_header_mismatch(response)
    assert "missing" in response.json()["error"]["message"], "reported as missing, not as a mismatch"


def test_missing_mcp_name_is_rejected(client: TestClient) -> None:
    response = post_rpc(client, "tools/call", {"name": "count_servers", "arguments": {}}, Mcp_Name=None)
    assert_header_mismatch(response)
    assert "missing" in response.json()["error"]["message"], "reported as missing, not as a mismatch"


def test_duplicate_mcp_method_is_rejected(client: TestClient) -> None:
    headers = list(mcp_headers("tools/list").items()) + [("Mcp-Method", "tools/call")]
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    assert_header_mismatch(client.post("/mcp", json=body, headers=headers))


def test_batch_body_is_rejected(client: TestClient) -> None:
    body = [{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}]
    assert_header_mismatch(client.post("/mcp", json=body, headers=mcp_headers("tools/list")))



def test_an_endless_body_is_cut_off_at_the_limit() -> None:
    """The middleware buffers the body to compare it with the headers: past the
    limit it answers 413 at once instead of reading on (and leaving the SDK to
    refuse the whole buffered body, with the same 413, afterwards)."""
    from sdk_server.headers import McpHeaderMatchMiddleware

    limit = 1024
    reads = 0
    sent: list[dict] = []

    async def receive() -> dict:
        nonlocal reads
        reads += 1
        assert reads < 100, "the middleware kept reading past the limit"
        return {"type": "http.request", "body": b"x" * 512, "more_body": True}

    async def send(message: dict) -> None:
        sent.append(message)

    async def app(scope, receive, send) -> None:  # pragma: no cover - must not be reached
        raise AssertionError("an over-long body reached the app")

    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": []}
    asyncio.run(McpHeaderMatchMiddleware(app, max_body_size=limit)(scope, receive, send))
    assert sent[0]["status"] == 413
    assert reads == 3, reads
