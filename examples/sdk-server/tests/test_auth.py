"""Bearer token (the SDK's TokenVerifier hook): 401 without the right token, 200 with it."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from sdk_server.auth import StaticTokenVerifier
from tests.conftest import TOKEN, post_rpc


def test_right_token_is_accepted(client: TestClient) -> None:
    assert post_rpc(client, "tools/list").status_code == 200


def test_missing_token_is_rejected(client: TestClient) -> None:
    response = post_rpc(client, "tools/list", Authorization=None)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_wrong_token_is_rejected(client: TestClient) -> None:
    response = post_rpc(client, "tools/list", Authorization="Bearer not-the-token")
    assert response.status_code == 401


def test_token_in_other_scheme_is_rejected(client: TestClient) -> None:
    response = post_rpc(client, "tools/list", Authorization=f"Basic {TOKEN}")
    assert response.status_code == 401


def test_valid_token_does_not_rescue_foreign_host(client: TestClient) -> None:
    response = post_rpc(client, "tools/list", Host="evil.example.com")  # the right token is sent
    assert response.status_code == 421


def test_an_empty_token_is_refused_at_startup() -> None:
    # An empty shared token would accept `Bearer ` with nothing after it.
    with pytest.raises(ValueError):
        StaticTokenVerifier("")
