"""Demo MCP-style streamable-HTTP server used by unguard's bundled example."""
