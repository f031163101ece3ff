"""Client for the upstream inventory API the tools read from.

The API is plain HTTP: `GET /v1/servers?scope=active|retired|all` answers
`{"servers": [{"id", "name", "status", "region"}, ...]}` and
`GET /v1/servers/{id}` answers one server. Without a `scope` parameter the API
returns the *active* servers only, which is why the tools always send one.

Tests pass an `httpx.MockTransport`, so no request leaves the process.
"""

from __future__ import annotations

from typing import Any

import httpx


class UpstreamError(Exception):
    """The inventory API failed or answered something we cannot read."""


class UpstreamAuthError(UpstreamError):
    """The inventory API refused our credentials (401/403)."""


class Inventory:
    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 10.0,
    ) -> None:
        self._base_url = base_url
        self._api_key = api_key
        self._transport = transport
        self._timeout = timeout

    async def _get(self, path: str, params: dict[str, str] | None = None) -> Any:
        async with httpx.AsyncClient(
            base_url=self._base_url,
            transport=self._transport,
            timeout=self._timeout,
            headers={"Authorization": f"Bearer {self._api_key}"},
        ) as client:
            try:
                response = await client.get(path, params=params)
            except httpx.HTTPError as exc:
                raise UpstreamError(f"inventory API unreachable: {exc}") from exc
        if response.status_code in (401, 403):
            raise UpstreamAuthError(f"inventory API refused our credentials (HTTP {response.status_code})")
        if response.status_code == 404:
            return None
        if response.status_code >= 400:
            raise UpstreamError(f"inventory API failed (HTTP {response.status_code})")
        try:
            return response.json()
        except ValueError as exc:
            raise UpstreamError("inventory API answered with something that is not JSON") from exc

    async def fetch_servers(self, params: dict[str, str]) -> Any:
        """The raw `GET /v1/servers` payload; its shape is checked by the caller."""
        return await self._get("/v1/servers", params=params)

    async def fetch_server(self, server_id: str) -> Any:
        """The raw `GET /v1/servers/{id}` payload, or None when the API says 404."""
        return await self._get(f"/v1/servers/{server_id}")
