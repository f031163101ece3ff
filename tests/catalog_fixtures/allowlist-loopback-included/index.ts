import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

const port = Number(process.env.PORT ?? 3000);
const publicHost = process.env.MCP_PUBLIC_HOST; // e.g. mcp.example.com:443

export function transportFor(server: McpServer): StreamableHTTPServerTransport {
  return new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableDnsRebindingProtection: true,
    allowedHosts: [
      `127.0.0.1:${port}`, // container health check
      `localhost:${port}`,
      ...(publicHost ? [publicHost] : []),
    ],
    allowedOrigins: [`http://localhost:${port}`],
  });
}

const fallbackHost = "127.0.0.1"; // not an allow-list entry
