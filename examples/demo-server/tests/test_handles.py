"""Control 5: list_items pages through server-minted, signed handles."""

from tests.support import ServerTestCase


class HandleTests(ServerTestCase):
    def list_items(self, handle=None):
        status, reply = self.call_tool("list_items", {} if handle is None else {"handle": handle})
        self.assertEqual(status, 200, reply)
        return reply

    def test_first_page_has_next_handle(self):
        page = self.list_items()["result"]["structuredContent"]
        self.assertEqual(page["items"][0], "item-00")
        self.assertEqual(len(page["items"]), 10)
        self.assertIsNotNone(page["next"])

    def test_next_handle_continues_listing(self):
        handle = self.list_items()["result"]["structuredContent"]["next"]
        page = self.list_items(handle)["result"]["structuredContent"]
        self.assertEqual(page["items"][0], "item-10")

    def test_tampered_handle_is_rejected(self):
        handle = self.list_items()["result"]["structuredContent"]["next"]
        offset, expiry, sig = handle.split(".")
        tampered = f"{int(offset) + 10}.{expiry}.{sig}"  # skip ahead without a signature
        reply = self.list_items(tampered)
        self.assertIn("error", reply)
        self.assertIn("signature", reply["error"]["message"])
