"""GET /mcp opens an SSE stream; it passes the same Host/Origin/auth checks as POST."""

import http.client

from tests.support import ALLOWED_ORIGIN, FOREIGN_ORIGIN, ServerTestCase


class SseTests(ServerTestCase):
    def stream_headers(self, origin):
        return self.headers(None, Accept="text/event-stream", Origin=origin,
                            **{"Content-Type": None})

    def test_allowed_origin_stream_sends_keepalive(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port)
        try:
            conn.request("GET", "/mcp", headers=self.stream_headers(ALLOWED_ORIGIN))
            response = conn.getresponse()
            self.assertEqual(response.status, 200)
            self.assertEqual(response.getheader("Content-Type"), "text/event-stream")
            self.assertEqual(response.readline(), b": keepalive\n")
        finally:
            conn.close()  # the stream never ends by itself

    def test_foreign_origin_stream_is_rejected(self):
        status, body = self.request("GET", self.stream_headers(FOREIGN_ORIGIN))
        self.assertEqual(status, 403)
        self.assertIn(b"Origin", body)
