// Placing calls the way a customer's server and page do: a session from sessions.connect with the
// agent's secret key, then the test caller over WebRTC to the worker it names.
import type { Tenant, TestApi } from "../../tests/helpers/api_server.ts";
import { TestCaller } from "../../caller/caller.ts";

/** What a caller needs to reach the session's worker, as sessions.connect gives it. */
export interface Session {
  sessionId: string;
  /** The worker's offer URL and the headers (the session token) to send with the offer. */
  endpoint: string;
  headers: Record<string, string>;
}

/** One session for the tenant's agent (`body`: more connect fields); throws on any answer but 200. */
export async function connectSession(
  api: TestApi,
  tenant: Tenant,
  body: Record<string, unknown> = {},
): Promise<Session> {
  const r = await api.post(
    "/api/v1/sessions.connect",
    { agent_id: tenant.agent_id, ...body },
    tenant.sk,
  );
  if (r.status !== 200) throw new Error(`connect: ${r.status} ${JSON.stringify(r.body)}`);
  const p = r.body.webrtc_request_params;
  return { sessionId: r.body.session_id, endpoint: p.endpoint, headers: p.headers };
}

/** A web call in progress: connected, bot-ready seen, microphone open. */
export async function dialWebCall(
  api: TestApi,
  tenant: Tenant,
  readyMs = 15_000,
): Promise<{ caller: TestCaller; sessionId: string }> {
  const s = await connectSession(api, tenant);
  const caller = await TestCaller.connect({ offerUrl: s.endpoint, headers: s.headers });
  try {
    await caller.ready(readyMs);
  } catch (e) {
    await caller.hangUp().catch(() => {});
    throw e;
  }
  caller.openMicrophone();
  return { caller, sessionId: s.sessionId };
}
