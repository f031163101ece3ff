"""The MCP server and its tools: list, count and look up inventory servers.

Data-fidelity controls (each one is a mutation in unguard.yaml):
- the scope is always sent, the full scope when the caller gives none
  (the API's own default is "active", a silent subset);
- the payload's structure is checked before anything is counted, so a renamed
  field is an error and not "0 servers";
- the sort order is total: name, then the unique id;
- upstream and auth failures are `isError` results, never an empty list;
- an empty result carries a hint saying what was searched.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel

from sdk_server.auth import StaticTokenVerifier
from sdk_server.inventory import Inventory, UpstreamError

Scope = Literal["active", "retired", "all"]
FULL_SCOPE: Scope = "all"
_SERVER_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=True)


class Server(BaseModel):
    id: str
    name: str
    status: str
    region: str


class ServerList(BaseModel):
    servers: list[Server]
    count: int
    scope: Scope
    hint: str | None = None


class ServerCount(BaseModel):
    count: int
    scope: Scope


def _servers_of(payload: Any) -> list[dict[str, Any]]:
    """The `servers` list of a `GET /v1/servers` payload, or an error if it has none."""
    servers = payload.get("servers") if isinstance(payload, dict) else None
    if not isinstance(servers, list):
        shape = sorted(payload) if isinstance(payload, dict) else type(payload).__name__
        raise UpstreamError(f"inventory API answered without a 'servers' list (got {shape})")
    return servers


async def _fetch_servers(inventory: Inventory, scope: Scope | None) -> tuple[Scope, list[dict[str, Any]]]:
    effective: Scope = scope or FULL_SCOPE
    params = {"scope": effective}  # explicit, also for "all": the API's default is "active"
    try:
        payload = await inventory.fetch_servers(params)
        servers = _servers_of(payload)
    except UpstreamError as exc:
        raise ToolError(f"inventory unavailable, no list to give: {exc}") from exc
    return effective, servers


def create_server(inventory: Inventory, *, token: str, issuer_url: str) -> MCPServer:
    """A fresh MCPServer with the inventory tools; one per ASGI app (its session manager runs once)."""
    server = MCPServer(
        "inventory",
        instructions="Read-only view of the server inventory. Results are complete for the scope you ask for.",
        version="1.0.0",
        token_verifier=StaticTokenVerifier(token),
        auth=AuthSettings(issuer_url=issuer_url, resource_server_url=None),
    )

    @server.tool(annotations=_READ_ONLY)
    async def list_servers(scope: Scope | None = None) -> ServerList:
        """List inventory servers, sorted by name then id. Without `scope`, all servers (retired included)."""
        effective, servers = await _fetch_servers(inventory, scope)
        ordered = sorted(servers, key=lambda s: (s["name"], s["id"]))
        result = ServerList(servers=[Server(**s) for s in ordered], count=len(ordered), scope=effective)
        if not ordered:
            result.hint = f"The inventory has no servers in scope '{effective}'; scope 'all' includes retired ones."
        return result

    @server.tool(annotations=_READ_ONLY)
    async def count_servers(scope: Scope | None = None) -> ServerCount:
        """Count inventory servers. Without `scope`, all servers (retired included)."""
        effective, servers = await _fetch_servers(inventory, scope)
        return ServerCount(count=len(servers), scope=effective)

    @server.tool(annotations=_READ_ONLY)
    async def get_server(server_id: str) -> Server:
        """One inventory server by id."""
        if not _SERVER_ID.match(server_id):
            raise ToolError(f"not a server id: {server_id!r} (letters, digits, '-' and '_', at most 64)")
        try:
            payload = await inventory.fetch_server(server_id)
        except UpstreamError as exc:
            raise ToolError(f"inventory unavailable: {exc}") from exc
        if payload is None:
            raise ToolError(f"no server with id {server_id!r}; list_servers shows the ids in every scope")
        return Server(**payload)

    return server
