"""The two ASGI app paths, the serve function and the CLI.

Transport controls (each one is a mutation in unguard.yaml):
- both app paths (`build_app`: streamable HTTP, `build_sse_app`: the legacy SSE
  transport) pass `transport_security=` built by the one `transport_policy`;
- the Host allow-list is port-exact, always includes the loopback names on the
  serving port, holds no wildcard, and DNS-rebinding protection is on;
- `serve` hands host *and* port to the factory: the allow-list is built from
  them, so a port that stays behind is a port nobody serves.

Why MCP_HOST / MCP_PORT are read by the app and are not redundant with a
server's `--host/--port` flags: uvicorn's flags configure the listener only and
never reach the app, while the SDK's allow-list is built from the host and port
the *app factory* gets. A factory that does not get them falls back to the
SDK's defaults (127.0.0.1, 8000), and every request under the real name gets 421.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Sequence

from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp

from sdk_server.headers import McpHeaderMatchMiddleware
from sdk_server.inventory import Inventory
from sdk_server.tools import create_server

log = logging.getLogger("sdk_server")

# The SDK's own defaults for run(): a caller that forgets to pass its bind gets these.
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
TRANSPORTS = ("streamable-http", "sse")


def _bracketed(host: str) -> str:
    """An IPv6 literal goes into a Host header in brackets."""
    return f"[{host}]" if ":" in host else host


def _refuse_wildcards(entries: Sequence[str]) -> None:
    """The SDK compares entries literally ("host:*" is its only pattern): "*" matches nothing, "x:*" any port."""
    for entry in entries:
        if entry == "*" or entry.endswith(":*"):
            raise ValueError(f"allow-list entry {entry!r}: list each name with its port instead of a wildcard")


def transport_policy(
    host: str, port: int, *, extra_hosts: Sequence[str] = (), extra_origins: Sequence[str] = ()
) -> TransportSecuritySettings:
    """The one policy every app path gets: port-exact, loopback included, configured names added."""
    _refuse_wildcards([*extra_hosts, *extra_origins])
    name = _bracketed(host)
    hosts = [
        f"{name}:{port}",
        f"127.0.0.1:{port}",
        f"localhost:{port}",
        f"[::1]:{port}",
        *extra_hosts,
    ]
    origins = [f"{scheme}://{entry}" for entry in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(dict.fromkeys(hosts)),
        allowed_origins=list(dict.fromkeys([*origins, *extra_origins])),
    )


def build_app(
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str,
    inventory: Inventory,
    extra_hosts: Sequence[str] = (),
    extra_origins: Sequence[str] = (),
) -> ASGIApp:
    """Streamable HTTP at /mcp (stateless, JSON responses)."""
    policy = transport_policy(host, port, extra_hosts=extra_hosts, extra_origins=extra_origins)
    server = create_server(inventory, token=token, issuer_url=f"http://{_bracketed(host)}:{port}")
    app = server.streamable_http_app(
        transport_security=policy,
        host=host,
        stateless_http=True,
        json_response=True,
    )
    return McpHeaderMatchMiddleware(app)


def build_sse_app(
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str,
    inventory: Inventory,
    extra_hosts: Sequence[str] = (),
    extra_origins: Sequence[str] = (),
) -> ASGIApp:
    """The legacy SSE transport: GET /sse opens the stream, POST /messages/?session_id=… sends."""
    policy = transport_policy(host, port, extra_hosts=extra_hosts, extra_origins=extra_origins)
    server = create_server(inventory, token=token, issuer_url=f"http://{_bracketed(host)}:{port}")
    app = server.sse_app(
        transport_security=policy,
        host=host,
    )
    return McpHeaderMatchMiddleware(app)


def _listen(app: ASGIApp, host: str, port: int) -> None:
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level="info")


def serve(
    host: str,
    port: int,
    token: str,
    inventory: Inventory,
    *,
    transport: str = "streamable-http",
    extra_hosts: Sequence[str] = (),
    extra_origins: Sequence[str] = (),
) -> None:
    """Build the app for `transport` from the same bind the listener gets, then listen."""
    if transport not in TRANSPORTS:
        raise ValueError(f"unknown transport {transport!r}; one of {', '.join(TRANSPORTS)}")
    if host in ("0.0.0.0", "::") and not extra_hosts:
        log.warning("bound to all interfaces: only loopback names are allowed until MCP_ALLOWED_HOSTS names this host")
    factory = build_sse_app if transport == "sse" else build_app
    app = factory(
        host=host, port=port, token=token, inventory=inventory, extra_hosts=extra_hosts, extra_origins=extra_origins
    )
    _listen(app, host, port)


def _csv(value: str | None) -> list[str]:
    return [item.strip() for item in (value or "").split(",") if item.strip()]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m sdk_server", description="Inventory MCP server")
    parser.add_argument("--transport", choices=TRANSPORTS, default=os.environ.get("MCP_TRANSPORT", "streamable-http"))
    parser.add_argument("--host", default=os.environ.get("MCP_HOST", DEFAULT_HOST))
    parser.add_argument("--port", type=int, default=int(os.environ.get("MCP_PORT", DEFAULT_PORT)))
    args = parser.parse_args(argv)
    missing = [name for name in ("MCP_TOKEN", "INVENTORY_URL", "INVENTORY_API_KEY") if not os.environ.get(name)]
    if missing:
        parser.error(f"set {', '.join(missing)}")
    serve(
        args.host,
        args.port,
        os.environ["MCP_TOKEN"],
        Inventory(os.environ["INVENTORY_URL"], os.environ["INVENTORY_API_KEY"]),
        transport=args.transport,
        extra_hosts=_csv(os.environ.get("MCP_ALLOWED_HOSTS")),
        extra_origins=_csv(os.environ.get("MCP_ALLOWED_ORIGINS")),
    )
