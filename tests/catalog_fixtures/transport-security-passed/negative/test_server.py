from server import FastMCP, policy

def test_policy_is_applied(monkeypatch):
    calls = []
    monkeypatch.setattr(FastMCP, "run", lambda self, **kw: calls.append(kw))
    FastMCP("x", transport_security=policy).run(transport_security=policy)
    assert calls[0]["transport_security"] is not None
