"""Host / Origin allow-list on the streamable-HTTP path (`build_app`).

Each negative test has its positive twin, and each negative test is chosen so
that only *our* policy decides it (002 rule 5): `evil.example.com` alone would
also be rejected by the SDK's loopback fallback, so the sharp cases are the
right name on the wrong port and loopback on the wrong port.
"""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from sdk_server.app import build_app, transport_policy
from tests.conftest import HOST, PORT, TOKEN, FakeInventoryAPI, post_rpc


def test_right_host_and_port_is_accepted(client: TestClient) -> None:
    response = post_rpc(client, "tools/list")
    assert response.status_code == 200, response.text
    assert {tool["name"] for tool in response.json()["result"]["tools"]} == {
        "list_servers",
        "count_servers",
        "get_server",
    }


def test_foreign_host_is_rejected(client: TestClient) -> None:
    response = post_rpc(client, "tools/list", Host="evil.example.com")
    assert response.status_code == 421


def test_right_host_wrong_port_is_rejected(client: TestClient) -> None:
    response = post_rpc(client, "tools/list", Host=f"{HOST}:9999")
    assert response.status_code == 421


@pytest.mark.parametrize("loopback", ["127.0.0.1", "localhost", "[::1]"])
def test_loopback_on_serving_port_is_accepted(client: TestClient, loopback: str) -> None:
    # container health checks and local debugging come in on loopback
    response = post_rpc(client, "tools/list", Host=f"{loopback}:{PORT}")
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("loopback", ["127.0.0.1", "localhost", "[::1]"])
def test_loopback_wrong_port_is_rejected(client: TestClient, loopback: str) -> None:
    response = post_rpc(client, "tools/list", Host=f"{loopback}:9999")
    assert response.status_code == 421


def test_own_origin_is_accepted(client: TestClient) -> None:
    response = post_rpc(client, "tools/list", Origin=f"https://{HOST}:{PORT}")
    assert response.status_code == 200, response.text


def test_foreign_origin_is_rejected(client: TestClient) -> None:
    response = post_rpc(client, "tools/list", Origin="https://evil.example.com")
    assert response.status_code == 403


def test_configured_host_is_accepted(api: FakeInventoryAPI) -> None:
    app = build_app(host=HOST, port=PORT, token=TOKEN, inventory=api.inventory(), extra_hosts=["mcp.example.com"])
    with TestClient(app, base_url="https://mcp.example.com") as client:
        assert post_rpc(client, "tools/list", Host="mcp.example.com").status_code == 200
        assert post_rpc(client, "tools/list", Host="mcp.example.com:9999").status_code == 421


@pytest.mark.parametrize(
    ("hosts", "origins"),
    [(["*"], []), (["mcp.example.com:*"], []), ([], ["*"]), ([], ["https://app.example.com:*"])],
)
def test_wildcard_allowlist_entry_is_refused(hosts: list[str], origins: list[str]) -> None:
    with pytest.raises(ValueError, match="wildcard"):
        transport_policy(HOST, PORT, extra_hosts=hosts, extra_origins=origins)


def test_policy_is_port_exact_and_on() -> None:
    policy = transport_policy(HOST, PORT, extra_origins=["https://app.example.com"])
    assert policy.enable_dns_rebinding_protection is True
    assert policy.allowed_hosts == [f"{HOST}:{PORT}", f"127.0.0.1:{PORT}", f"localhost:{PORT}", f"[::1]:{PORT}"]
    assert "https://app.example.com" in policy.allowed_origins
    assert not [entry for entry in policy.allowed_hosts + policy.allowed_origins if entry.endswith("*")]
