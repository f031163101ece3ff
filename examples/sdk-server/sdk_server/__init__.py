"""An inventory MCP server on the official `mcp` SDK (2.x), with its security controls.

`sdk_server.app` builds the ASGI apps and serves them, `sdk_server.tools` holds the
tools, `sdk_server.inventory` talks to the upstream inventory API,
`sdk_server.auth` checks the bearer token and `sdk_server.headers` holds the
`Mcp-Method` / `Mcp-Name` header match.
"""
