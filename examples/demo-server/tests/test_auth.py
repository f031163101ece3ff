"""Control 3: bearer token."""

from tests.support import TOKEN, ServerTestCase


class AuthTests(ServerTestCase):
    def test_right_token_is_accepted(self):
        status, reply = self.rpc("tools/list", token=TOKEN)
        self.assertEqual(status, 200, reply)

    def test_wrong_token_is_rejected(self):
        status, _ = self.rpc("tools/list", token=TOKEN + "x")
        self.assertEqual(status, 401)

    def test_missing_token_is_rejected(self):
        status, _ = self.rpc("tools/list", token=None)
        self.assertEqual(status, 401)
