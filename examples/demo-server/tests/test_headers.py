"""Control 4: Mcp-Method / Mcp-Name must equal the JSON-RPC body; missing is rejected."""

from tests.support import ServerTestCase

HEADER_MISMATCH = -32020


class HeaderTests(ServerTestCase):
    def assertHeaderError(self, status, reply):
        self.assertEqual(status, 400, reply)
        self.assertEqual(reply["error"]["code"], HEADER_MISMATCH)

    # ---- Mcp-Method --------------------------------------------------------------
    def test_mcp_method_header_matching_body_is_accepted(self):
        status, reply = self.rpc("tools/list", headers=self.headers("tools/list"))
        self.assertEqual(status, 200, reply)
        self.assertIn("tools", reply["result"])

    def test_mcp_method_header_mismatch_is_rejected(self):
        status, reply = self.rpc("tools/list", headers=self.headers("initialize"))
        self.assertHeaderError(status, reply)

    def test_missing_mcp_method_header_is_rejected(self):
        status, reply = self.rpc("tools/list", headers=self.headers(None))
        self.assertHeaderError(status, reply)

    # ---- Mcp-Name (tools/call) -----------------------------------------------------
    def echo(self, name_header):
        params = {"name": "echo", "arguments": {"text": "hi"}}
        return self.rpc("tools/call", params, headers=self.headers("tools/call", name=name_header))

    def test_mcp_name_header_matching_body_is_accepted(self):
        status, reply = self.echo("echo")
        self.assertEqual(status, 200, reply)
        self.assertEqual(reply["result"]["content"][0]["text"], "hi")

    def test_mcp_name_header_mismatch_is_rejected(self):
        self.assertHeaderError(*self.echo("list_items"))

    def test_missing_mcp_name_header_is_rejected(self):
        self.assertHeaderError(*self.echo(None))
