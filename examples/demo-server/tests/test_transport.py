"""Controls 1 and 2: Host allow-list (port-exact) and Origin allow-list.

Every negative test has a positive twin that differs in exactly the property under
test, so a red negative test means "the control let it through", not "the request
was broken anyway".
"""

from tests.support import ALLOWED_ORIGIN, FOREIGN_ORIGIN, ServerTestCase


class TransportTests(ServerTestCase):
    def assertAccepted(self, status, reply):
        self.assertEqual(status, 200, reply)
        self.assertIn("tools", reply["result"])

    # ---- Host: the port is part of the allow-list entry ------------------------
    def test_right_host_right_port_is_accepted(self):
        self.assertAccepted(*self.rpc("tools/list", host=f"127.0.0.1:{self.port}"))

    def test_right_host_wrong_port_is_rejected(self):
        status, _ = self.rpc("tools/list", host=f"127.0.0.1:{self.port + 1}")
        self.assertEqual(status, 421)

    def test_localhost_right_port_is_accepted(self):
        self.assertAccepted(*self.rpc("tools/list", host=f"localhost:{self.port}"))

    def test_localhost_wrong_port_is_rejected(self):
        status, _ = self.rpc("tools/list", host=f"localhost:{self.port + 1}")
        self.assertEqual(status, 421)

    def test_public_host_is_accepted(self):
        self.assertAccepted(*self.rpc("tools/list", host="mcp.example.ch:8000"))

    def test_foreign_host_is_rejected(self):
        status, _ = self.rpc("tools/list", host="evil.example:8000")
        self.assertEqual(status, 421)

    # ---- Origin: checked when a browser sends one -------------------------------
    def test_allowed_origin_is_accepted(self):
        self.assertAccepted(*self.rpc("tools/list", Origin=ALLOWED_ORIGIN))

    def test_foreign_origin_is_rejected(self):
        status, _ = self.rpc("tools/list", Origin=FOREIGN_ORIGIN)
        self.assertEqual(status, 403)
