"""Host/Origin checks of a hand-written Starlette middleware."""


class HostOriginGuard:
    def __init__(self, app, allowed_hosts, allowed_origins):
        self.app = app
        self.allowed_hosts = set(allowed_hosts)
        self.allowed_origins = set(allowed_origins)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        host = headers.get(b"host", b"").decode()
        if host not in self.allowed_hosts:  # DNS rebinding
            return await reject(send, 421)
        origin = headers.get(b"origin")
        if origin is not None and origin.decode() not in self.allowed_origins:
            return await reject(send, 403)
        return await self.app(scope, receive, send)
