"""Bearer-token check through the SDK's own auth hook (`TokenVerifier`).

`MCPServer(token_verifier=..., auth=AuthSettings(...))` makes the SDK wrap the
MCP endpoints of *both* app paths in its `RequireAuthMiddleware`: a request
without a valid `Authorization: Bearer <token>` gets 401 with a
`WWW-Authenticate` header before the transport sees it.
"""

from __future__ import annotations

import hmac

from mcp.server.auth.provider import AccessToken


class StaticTokenVerifier:
    """Accepts exactly one shared token (an operator's deployment secret)."""

    def __init__(self, token: str) -> None:
        if not token:
            raise ValueError("an empty token would accept 'Bearer ' with nothing after it")
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if not hmac.compare_digest(token.encode(), self._token):
            return None
        return AccessToken(token=token, client_id="operator", scopes=[])
