"""Plain functionality: initialize, tools/list, echo, unknown tool."""

from tests.support import ServerTestCase


class ToolTests(ServerTestCase):
    def test_initialize_names_the_server(self):
        status, reply = self.rpc("initialize")
        self.assertEqual(status, 200, reply)
        self.assertEqual(reply["result"]["serverInfo"]["name"], "unguard-demo-server")

    def test_tools_list_names_both_tools(self):
        status, reply = self.rpc("tools/list")
        self.assertEqual(status, 200, reply)
        self.assertEqual([t["name"] for t in reply["result"]["tools"]], ["echo", "list_items"])

    def test_echo_returns_text(self):
        status, reply = self.call_tool("echo", {"text": "grüezi"})
        self.assertEqual(status, 200, reply)
        self.assertEqual(reply["result"]["content"][0]["text"], "grüezi")

    def test_unknown_tool_is_an_error(self):
        status, reply = self.call_tool("delete_everything")
        self.assertEqual(status, 200, reply)
        self.assertIn("unknown tool", reply["error"]["message"])
