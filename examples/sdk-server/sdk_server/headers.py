"""`Mcp-Method` / `Mcp-Name` must say what the JSON-RPC body says (error -32020).

A gateway in front of this server routes and rate-limits on these headers; the
server executes the body. If the two may differ, the gateway allows one call and
the server runs another. So every POST must carry the headers, and they must
equal the body: `Mcp-Method` = `method`, and for `tools/call`, `prompts/get`,
`resources/read` also `Mcp-Name` = the addressed name. A *missing* header is
rejected too: a check that only compares headers that are present is bypassed
by leaving them out.

The SDK (mcp 2.3) runs the same check itself, but only for requests of the
2026-07-28 era (`MCP-Protocol-Version: 2026-07-28`, per-request envelope). For
the handshake era (2025-11-25 and older) it checks nothing, so this middleware
is the only check there, and the tests exercise it on that era.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.inbound import MCP_METHOD_HEADER, MCP_NAME_HEADER, NAME_BEARING_METHODS, decode_header_value
from mcp_types.jsonrpc import HEADER_MISMATCH
from starlette.datastructures import Headers
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send


def _declared(body: dict[str, Any]) -> list[tuple[str, Any]]:
    """(header, value the body gives it) for every routing header this body needs."""
    method = body.get("method")
    pairs: list[tuple[str, Any]] = [(MCP_METHOD_HEADER, method)]
    name_key = NAME_BEARING_METHODS.get(method) if isinstance(method, str) else None
    if name_key is not None:
        params = body.get("params")
        pairs.append((MCP_NAME_HEADER, params.get(name_key) if isinstance(params, dict) else None))
    return pairs


def header_mismatch(body: Any, headers: Headers) -> str | None:
    """Why the routing headers disagree with the body, or None when they agree."""
    if not isinstance(body, dict):
        return "the body must be one JSON-RPC message (the headers name one method)"
    if "method" not in body:
        return None  # a JSON-RPC response from the client: nothing is routed on it
    missing: list[str] = []
    for header, expected in _declared(body):
        values = headers.getlist(header)
        if len(values) > 1:
            return f"{header} header appears more than once"
        sent = values[0] if values else None
        if sent is None:
            missing.append(header)
        elif decode_header_value(sent) != expected:
            return f"{header} header {sent!r} does not match the body ({expected!r})"
    if missing:
        return f"required header(s) missing: {', '.join(missing)}"
    return None


class McpHeaderMatchMiddleware:
    """ASGI middleware: a POST whose routing headers disagree with its body gets 400 / -32020."""

    def __init__(self, app: ASGIApp, max_body_size: int = DEFAULT_MAX_REQUEST_BODY_SIZE) -> None:
        self.app = app
        self.max_body_size = max_body_size  # the body is read here, before the SDK's own limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return

        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, receive, send)  # disconnected: let the app see it
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_size:
                await PlainTextResponse("Request body too large", status_code=413)(scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        raw = b"".join(chunks)

        try:
            body: Any = json.loads(raw)
        except (ValueError, RecursionError):
            body = None  # not JSON: the SDK answers with its parse error
        else:
            reason = header_mismatch(body, Headers(scope=scope))
            if reason is not None:
                request_id = body.get("id") if isinstance(body, dict) else None
                error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": HEADER_MISMATCH, "message": reason}}
                await JSONResponse(error, status_code=400)(scope, receive, send)
                return

        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": raw, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
