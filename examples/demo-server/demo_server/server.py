"""A small MCP-style streamable-HTTP server (standard library only).

One endpoint, /mcp:
  POST  JSON-RPC 2.0: initialize, tools/list, tools/call (tools: echo, list_items)
  GET   with "Accept: text/event-stream": a server-to-client SSE stream that sends
        a keepalive comment every KEEPALIVE_SECONDS until the client disconnects

Security controls (the things unguard.yaml mutates), in the order a request meets them:
  1. Host allow-list, port-exact                -> 421   (admit)
  2. Origin allow-list, if an Origin is sent    -> 403   (admit)
  3. Bearer token, constant-time comparison     -> 401   (admit)
  4. Mcp-Method / Mcp-Name headers must equal the JSON-RPC body; a missing header
     is rejected too                            -> 400, JSON-RPC error -32020
  5. list_items paging handles are HMAC-signed and expire; no server-side state

Run it:  DEMO_TOKEN=secret python3 -m demo_server.server --port 8000
"""

import argparse
import hashlib
import hmac
import json
import os
import secrets
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEEPALIVE_SECONDS = 0.2
PAGE_SIZE = 10
HANDLE_TTL_SECONDS = 300
ITEMS = [f"item-{i:02d}" for i in range(25)]

HEADER_MISMATCH = -32020  # JSON-RPC error code for Mcp-* header problems
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

TOOLS = [
    {"name": "echo", "description": "Return the given text.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                     "required": ["text"], "additionalProperties": False}},
    {"name": "list_items", "description": "List items a page at a time; pass `handle` "
     "from the previous page's `next` to continue.",
     "inputSchema": {"type": "object", "properties": {"handle": {"type": "string"}},
                     "additionalProperties": False}},
]


class ToolError(Exception):
    """A call the server refuses; becomes a JSON-RPC error."""

    def __init__(self, message: str, code: int = INVALID_PARAMS):
        super().__init__(message)
        self.code = code


def host_allowed(host: str, allowed: list[str]) -> bool:
    """Exact match on "host:port". Like the MCP Python SDK, an entry may end in ":*"
    to allow any port of that host; this server never builds such an entry."""
    for entry in allowed:
        if entry.endswith(":*"):
            if host.rpartition(":")[0] == entry[:-2]:
                return True
        elif host == entry:
            return True
    return False


class McpServer(ThreadingHTTPServer):
    daemon_threads = True  # an open SSE stream must not keep the process alive

    def __init__(self, port: int, token: str, secret: bytes,
                 public_hosts=("mcp.example.ch:8000",),
                 allowed_origins=("https://mcp.example.ch",)):
        super().__init__(("127.0.0.1", port), McpHandler)  # loopback only
        port = self.server_address[1]  # the real port when 0 (ephemeral) was asked for
        # Control 1: every entry carries its port; loopback is always included.
        self.allowed_hosts = [*public_hosts, f"127.0.0.1:{port}", f"localhost:{port}"]
        self.allowed_origins = list(allowed_origins)
        self.token = token
        self.secret = secret

    # Control 5: paging state lives in a signed, expiring handle "offset.expiry.sig".
    def sign(self, offset: int, expiry: int) -> str:
        return hmac.new(self.secret, f"{offset}.{expiry}".encode(), hashlib.sha256).hexdigest()

    def make_handle(self, offset: int) -> str:
        expiry = int(time.time()) + HANDLE_TTL_SECONDS
        return f"{offset}.{expiry}.{self.sign(offset, expiry)}"

    def read_handle(self, handle: str) -> int:
        try:
            offset_text, expiry_text, sig = handle.split(".")
            offset, expiry = int(offset_text), int(expiry_text)
        except ValueError:
            raise ToolError("malformed handle") from None
        if not hmac.compare_digest(sig, self.sign(offset, expiry)):  # tampered?
            raise ToolError("handle signature is invalid")
        if expiry < time.time():  # expired?
            raise ToolError("handle has expired; start listing again")
        return offset


class McpHandler(BaseHTTPRequestHandler):
    server: McpServer

    def log_message(self, format, *args):  # keep test output quiet
        pass

    # ---- responses -------------------------------------------------------------
    def send_body(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_text(self, status: int, text: str) -> None:
        self.send_body(status, text.encode() + b"\n", "text/plain; charset=utf-8")

    def send_rpc(self, status: int, msg_id, *, result=None, error=None) -> None:
        payload = {"jsonrpc": "2.0", "id": msg_id}
        payload.update({"error": error} if error is not None else {"result": result})
        self.send_body(status, json.dumps(payload).encode(), "application/json")

    # ---- controls 1-3, shared by POST and GET ----------------------------------
    def admit(self) -> bool:
        """Return True if the request may proceed; otherwise send the rejection."""
        # Control 1: Host must be on the allow-list (DNS-rebinding defence).
        if not host_allowed(self.headers.get("Host", ""), self.server.allowed_hosts):
            self.send_text(421, "Misdirected Request: Host not allowed")
            return False
        # Control 2: a browser's Origin must be one of ours; non-browser clients send none.
        origin = self.headers.get("Origin")
        if origin is not None and origin not in self.server.allowed_origins:
            self.send_text(403, "Forbidden: Origin not allowed")
            return False
        # Control 3: bearer token, compared in constant time.
        scheme, _, token = self.headers.get("Authorization", "").partition(" ")
        token_ok = hmac.compare_digest(token.encode(), self.server.token.encode())
        if scheme.lower() != "bearer" or not token_ok:
            self.send_text(401, "Unauthorized: bearer token missing or wrong")
            return False
        return True

    # ---- GET: SSE stream -------------------------------------------------------
    def do_GET(self) -> None:
        if self.path != "/mcp":
            return self.send_text(404, "Not Found")
        if not self.admit():  # before anything else, and before the first byte of the stream
            return
        if "text/event-stream" not in self.headers.get("Accept", ""):
            return self.send_text(406, "Not Acceptable: GET /mcp serves text/event-stream")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()  # HTTP/1.0: the body ends when the connection closes
        try:
            while True:  # no server events in this demo, only keepalives, forever
                self.wfile.write(b": keepalive\n\n")
                self.wfile.flush()
                time.sleep(KEEPALIVE_SECONDS)
        except (BrokenPipeError, ConnectionResetError):
            pass  # client went away

    # ---- POST: JSON-RPC --------------------------------------------------------
    def do_POST(self) -> None:
        if self.path != "/mcp":
            return self.send_text(404, "Not Found")
        if not self.admit():
            return
        try:
            msg = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            method, params, msg_id = msg["method"], msg.get("params", {}), msg.get("id")
            if not isinstance(params, dict):
                raise TypeError("params must be an object")
        except (ValueError, TypeError, KeyError):
            return self.send_rpc(400, None, error={"code": -32700, "message": "parse error"})

        # Control 4: the routing headers must say what the body says.
        expected = {"Mcp-Method": method}
        if method == "tools/call":
            expected["Mcp-Name"] = params.get("name")
        for header, value in expected.items():
            sent = self.headers.get(header)
            if sent is not None and sent != value:
                return self.send_rpc(400, msg_id, error={
                    "code": HEADER_MISMATCH, "message": f"{header} header does not match body"})
        # ... and a missing header is rejected too, not waved through.
        missing = [header for header in expected if self.headers.get(header) is None]
        if missing:
            return self.send_rpc(400, msg_id, error={
                "code": HEADER_MISMATCH, "message": f"missing {missing[0]} header"})

        if msg_id is None:  # a notification: nothing to answer
            return self.send_body(202, b"", "application/json")
        try:
            self.send_rpc(200, msg_id, result=self.dispatch(method, params))
        except ToolError as exc:
            self.send_rpc(200, msg_id, error={"code": exc.code, "message": str(exc)})

    def dispatch(self, method: str, params: dict) -> dict:
        if method == "initialize":
            return {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "unguard-demo-server", "version": "1.0.0"}}
        if method == "tools/list":
            return {"tools": TOOLS}
        if method == "tools/call":
            name, args = params.get("name"), params.get("arguments", {})
            if name == "echo":
                return {"content": [{"type": "text", "text": str(args.get("text", ""))}]}
            if name == "list_items":
                return self.list_items(args.get("handle"))
            raise ToolError(f"unknown tool: {name}")
        raise ToolError(f"unknown method: {method}", code=METHOD_NOT_FOUND)

    def list_items(self, handle) -> dict:
        offset = 0 if handle is None else self.server.read_handle(handle)
        page = ITEMS[offset:offset + PAGE_SIZE]
        end = offset + len(page)
        next_handle = self.server.make_handle(end) if end < len(ITEMS) else None
        result = {"items": page, "next": next_handle}
        return {"content": [{"type": "text", "text": json.dumps(result)}],
                "structuredContent": result}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    token = os.environ.get("DEMO_TOKEN") or secrets.token_urlsafe(24)
    server = McpServer(args.port, token=token, secret=secrets.token_bytes(32))
    print(f"listening on http://127.0.0.1:{server.server_address[1]}/mcp "
          f"(allowed hosts: {', '.join(server.allowed_hosts)})", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
