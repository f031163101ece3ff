"""Data fidelity of the tools: complete scope, checked structure, total order, errors as isError."""

from __future__ import annotations

from starlette.testclient import TestClient

from tests.conftest import FakeInventoryAPI, call_tool, error_text, post_rpc


def ids(result: dict) -> list[str]:
    return [server["id"] for server in result["structuredContent"]["servers"]]


def test_list_is_sorted_by_name(client: TestClient) -> None:
    result = call_tool(client, "list_servers")
    names = [server["name"] for server in result["structuredContent"]["servers"]]
    assert names == sorted(names)


def test_ties_are_sorted_by_id(client: TestClient) -> None:
    # upstream sends db/srv-9 before db/srv-2: a sort on name alone would keep that order
    result = call_tool(client, "list_servers")
    assert ids(result) == ["srv-5", "srv-2", "srv-9", "srv-7"]


def test_no_scope_lists_all_servers(client: TestClient, api: FakeInventoryAPI) -> None:
    result = call_tool(client, "list_servers")
    assert "srv-5" in ids(result), "the retired server is missing: the API's default scope is 'active'"
    assert api.last_params() == {"scope": "all"}
    assert result["structuredContent"]["scope"] == "all"


def test_explicit_scope_is_passed_through(client: TestClient, api: FakeInventoryAPI) -> None:
    result = call_tool(client, "list_servers", scope="retired")
    assert ids(result) == ["srv-5"]
    assert api.last_params() == {"scope": "retired"}


def test_count_uses_the_full_scope(client: TestClient, api: FakeInventoryAPI) -> None:
    result = call_tool(client, "count_servers")
    assert result["structuredContent"] == {"count": 4, "scope": "all"}
    assert api.last_params() == {"scope": "all"}


def test_renamed_field_is_an_error_not_zero(client: TestClient, api: FakeInventoryAPI) -> None:
    api.mode = "renamed"  # the API moved its list to "items"
    for tool in ("list_servers", "count_servers"):
        result = call_tool(client, tool)
        assert result["isError"] is True, f"{tool} counted {result.get('structuredContent')} in an unreadable payload"
        assert "'servers' list" in error_text(result)


def test_upstream_auth_failure_is_an_error_not_empty(client: TestClient, api: FakeInventoryAPI) -> None:
    api.mode = "auth"
    result = call_tool(client, "list_servers")
    assert result["isError"] is True, f"an auth failure became {result.get('structuredContent')}"
    assert "credentials" in error_text(result)


def test_upstream_outage_is_an_error_not_zero(client: TestClient, api: FakeInventoryAPI) -> None:
    api.mode = "down"
    result = call_tool(client, "count_servers")
    assert result["isError"] is True
    assert "HTTP 503" in error_text(result)


def test_unreachable_upstream_is_an_error_not_zero(client: TestClient, api: FakeInventoryAPI) -> None:
    api.mode = "unreachable"
    result = call_tool(client, "count_servers")
    assert result["isError"] is True
    assert "unreachable" in error_text(result)


def test_get_server_upstream_outage_is_an_error_not_empty(client: TestClient, api: FakeInventoryAPI) -> None:
    api.mode = "down"
    result = call_tool(client, "get_server", server_id="srv-1")
    assert result["isError"] is True
    assert "inventory unavailable" in error_text(result)


def test_empty_result_carries_a_hint(client: TestClient, api: FakeInventoryAPI) -> None:
    api.servers = [s for s in api.servers if s["status"] == "active"]
    result = call_tool(client, "list_servers", scope="retired")
    assert result["isError"] is False
    assert result["structuredContent"]["count"] == 0
    assert "scope 'retired'" in (result["structuredContent"]["hint"] or "")


def test_non_empty_result_has_no_hint(client: TestClient) -> None:
    result = call_tool(client, "list_servers")
    assert result["structuredContent"]["hint"] is None


def test_get_server_found(client: TestClient) -> None:
    result = call_tool(client, "get_server", server_id="srv-2")
    assert result["structuredContent"] == {"id": "srv-2", "name": "db", "status": "active", "region": "us-east"}


def test_get_server_unknown_is_an_error(client: TestClient) -> None:
    result = call_tool(client, "get_server", server_id="srv-404")
    assert result["isError"] is True
    assert "no server with id" in error_text(result)


def test_get_server_rejects_a_path_in_the_id(client: TestClient, api: FakeInventoryAPI) -> None:
    result = call_tool(client, "get_server", server_id="../admin")
    assert result["isError"] is True
    assert api.requests == [], "nothing may reach the upstream API"


def test_tools_are_annotated_read_only(client: TestClient) -> None:
    tools = post_rpc(client, "tools/list").json()["result"]["tools"]
    assert all(tool["annotations"]["readOnlyHint"] is True for tool in tools)  # camelCase on the wire
