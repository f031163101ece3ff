"""Pass `transport_security=policy` to every app path (002/3).

    app = mcp.streamable_http_app(transport_security=policy)
"""

DELIBERATE_OPT_OUT = dict(transport_security=None)
app = mcp.sse_app(transport_security=None)  # stdio-only deployment, no HTTP policy
# mcp.run(transport_security=policy)
