// `deno task mcp`: the MCP server over stdio, for MCP clients that launch a local command.
// It talks to a running API over HTTP (API_URL, default http://127.0.0.1:8787) with
// ADMIN_TOKEN. stdout carries the protocol only; diagnostics go to stderr.
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createMcpServer } from "../api/mcp/tools.ts";
import { DEFAULT_API_URL, httpAdminCall } from "./api_client.ts";

if (import.meta.main) {
  const adminToken = Deno.env.get("ADMIN_TOKEN");
  if (!adminToken) {
    console.error(
      "ADMIN_TOKEN is not set: the MCP server calls the admin API with it. " +
        "Set ADMIN_TOKEN (and API_URL if the API is not at " + DEFAULT_API_URL + ").",
    );
    Deno.exit(2);
  }
  const apiUrl = Deno.env.get("API_URL") || DEFAULT_API_URL;
  const server = createMcpServer(httpAdminCall(apiUrl, adminToken));
  await server.connect(new StdioServerTransport());
  console.error(`MCP server on stdio; API at ${apiUrl}`);
}
