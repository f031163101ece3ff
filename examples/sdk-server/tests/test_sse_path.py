"""The second app path, the legacy SSE transport (`build_sse_app`), enforces the same policy.

Only POSTs to /messages/ here: a GET /sse that a broken policy admits opens a
stream that never ends, and the suite would hang instead of failing (002 rule 7).
The positive twin is "the right host gets past the host check": with an unknown
session id that is a 404 from the transport, not a 421.
"""

from __future__ import annotations

from starlette.testclient import TestClient

from tests.conftest import HOST, post_rpc

UNKNOWN_SESSION = "/messages/?session_id=0123456789abcdef0123456789abcdef"


def test_sse_path_right_host_is_admitted(sse_client: TestClient) -> None:
    response = post_rpc(sse_client, "tools/list", path=UNKNOWN_SESSION)
    assert response.status_code == 404
    assert "Could not find session" in response.text


def test_sse_path_wrong_port_is_rejected(sse_client: TestClient) -> None:
    response = post_rpc(sse_client, "tools/list", path=UNKNOWN_SESSION, Host=f"{HOST}:9999")
    assert response.status_code == 421


def test_sse_path_foreign_host_is_rejected(sse_client: TestClient) -> None:
    response = post_rpc(sse_client, "tools/list", path=UNKNOWN_SESSION, Host="evil.example.com")
    assert response.status_code == 421


def test_sse_path_requires_the_token(sse_client: TestClient) -> None:
    response = post_rpc(sse_client, "tools/list", path=UNKNOWN_SESSION, Authorization=None)
    assert response.status_code == 401


def test_sse_path_checks_the_mcp_method_header(sse_client: TestClient) -> None:
    response = post_rpc(sse_client, "tools/list", path=UNKNOWN_SESSION, Mcp_Method="tools/call")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32020
