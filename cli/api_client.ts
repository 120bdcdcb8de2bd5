// The operator tools' HTTP client for the admin routes: shared by `deno task admin` and the
// stdio MCP server, so both reach the API the same way.
import type { AdminCall } from "../api/mcp/tools.ts";

export const DEFAULT_API_URL = "http://127.0.0.1:8787";

/** The API could not be reached at all (as opposed to answering with a refusal). */
export class ApiUnreachable extends Error {}

/**
 * An AdminCall that POSTs JSON to `${apiUrl}${path}` with the admin token as a bearer.
 * Network failures throw ApiUnreachable naming the URL, never the token.
 */
export function httpAdminCall(apiUrl: string, adminToken: string): AdminCall {
  const base = apiUrl.replace(/\/+$/, "");
  return async (path, body) => {
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    } catch (err) {
      throw new ApiUnreachable(`Cannot reach the API at ${base}: ${(err as Error).message}`);
    }
    const text = await res.text();
    try {
      return { status: res.status, body: text ? JSON.parse(text) : null };
    } catch {
      return { status: res.status, body: text };
    }
  };
}
