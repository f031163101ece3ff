"""Three ways into the app; each gets the one policy (002/3)."""

from mcp.server.fastmcp import FastMCP
from mcp.server.transport_security import TransportSecuritySettings

from .settings import get_settings

settings = get_settings()
policy = TransportSecuritySettings(
    enable_dns_rebinding_protection=True,
    allowed_hosts=[f"127.0.0.1:{settings.port}", f"localhost:{settings.port}"],
)

# 1.x: the policy rides on the FastMCP object; transport_security=policy below.
mcp = FastMCP("inventory", host=settings.host, port=settings.port, transport_security=policy)


def build_http_app(*, transport_security: TransportSecuritySettings | None = None):
    """Only used when auth or CORS is configured."""
    return mcp.streamable_http_app()


def main() -> None:
    if settings.auth_token or settings.cors_origins:
        import uvicorn

        uvicorn.run(build_http_app(transport_security=policy), host=settings.host, port=settings.port)
    else:
        mcp.run(
            transport="streamable-http",
            transport_security=policy,  # the run() path, separately
        )
