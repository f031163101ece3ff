"""Shared test fixture: one in-process server per test class, on 127.0.0.1, ephemeral port.

Deliberately no socket timeouts anywhere: the suite has no timeout of its own, the
harness running it (unguard) enforces one. A test that hangs is a result too.
"""

import http.client
import json
import threading
import unittest

from demo_server.server import McpServer

TOKEN = "test-token-7f3a"
ALLOWED_ORIGIN = "https://mcp.example.ch"
FOREIGN_ORIGIN = "https://evil.example"


class ServerTestCase(unittest.TestCase):
    server: McpServer
    port: int

    @classmethod
    def setUpClass(cls):
        cls.server = McpServer(0, token=TOKEN, secret=b"test-secret")
        cls.port = cls.server.server_address[1]
        # A short poll interval keeps shutdown() in tearDownClass fast.
        cls.thread = threading.Thread(target=cls.server.serve_forever, args=(0.05,),
                                      daemon=True)
        cls.thread.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()
        cls.thread.join()

    # ---- request helpers -------------------------------------------------------
    def headers(self, method, *, name=None, host=None, token=TOKEN, **extra):
        """Headers of a well-formed request; pass None to leave one out."""
        headers = {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream",
                   "Mcp-Method": method, "Mcp-Name": name}
        if host is not None:
            headers["Host"] = host  # http.client then does not send its own
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        headers.update(extra)
        return {k: v for k, v in headers.items() if v is not None}

    def request(self, verb, headers, body=None):
        """Send one request; return (status, body bytes). Reads the whole body."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port)
        try:
            conn.request(verb, "/mcp", body=body, headers=headers)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def rpc(self, method, params=None, *, headers=None, **header_kwargs):
        """POST a JSON-RPC request; return (status, decoded JSON or raw body)."""
        if headers is None:
            name = (params or {}).get("name") if method == "tools/call" else None
            headers = self.headers(method, name=name, **header_kwargs)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                           "params": params or {}})
        status, raw = self.request("POST", headers, body)
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw

    def call_tool(self, name, arguments=None, **header_kwargs):
        return self.rpc("tools/call", {"name": name, "arguments": arguments or {}},
                        **header_kwargs)
