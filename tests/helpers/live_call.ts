// Checks that an echo call (brain `echo:`) is alive, for tests that take something away from
// under it (the database, the API process): the caller's audio comes back, a page message is
// answered; and polls on the session's row and log.
import type { Pool } from "../../db/client.ts";
import { TestCaller } from "../../caller/caller.ts";
import { rms } from "../../caller/wav.ts";
import type { Tenant } from "./api_server.ts";

/** `seconds` of a 440 Hz tone at 48 kHz, loud enough to stand far above silence. */
export function tone(seconds = 0.5): Int16Array {
  const pcm = new Int16Array(Math.round(48000 * seconds));
  for (let i = 0; i < pcm.length; i++) {
    pcm[i] = Math.round(6000 * Math.sin(2 * Math.PI * 440 * i / 48000));
  }
  return pcm;
}

/** Says a tone and returns the loudness of what came back in the next 1.5 s (the echo's delay is 0.5 s). */
export async function echoLoudness(caller: TestCaller): Promise<number> {
  const mark = caller.receivedPcm().length;
  await caller.say(tone());
  await new Promise((r) => setTimeout(r, 1500));
  return rms(caller.receivedPcm().subarray(mark));
}

/** Sends a client-message and waits for its server-response; returns its id. */
export async function pageMessageAnswered(caller: TestCaller, t: string, ms = 3000) {
  const id = caller.sendRtvi("client-message", { t, d: {} });
  const res = await caller.waitForMessage((m) => m.id === id, ms);
  if (res.type !== "server-response") throw new Error(`${t}: answered ${res.type}`);
  return id;
}

/** connect with the tenant's secret key through `connectUrl`, then the call up to bot-ready. */
export async function startEchoCall(
  connectUrl: string,
  tenant: Tenant,
): Promise<{ caller: TestCaller; sessionId: string }> {
  const res = await fetch(`${connectUrl}/api/v1/sessions.connect`, {
    method: "POST",
    headers: { authorization: `Bearer ${tenant.sk}`, "content-type": "application/json" },
    body: JSON.stringify({ agent_id: tenant.agent_id }),
  });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`connect: ${res.status} ${JSON.stringify(body)}`);
  const caller = await TestCaller.connect({
    offerUrl: body.webrtc_request_params.endpoint,
    headers: body.webrtc_request_params.headers,
  });
  await caller.ready();
  return { caller, sessionId: body.session_id };
}

export interface SessionRow {
  status: string;
  end_reason: string | null;
  started_at: Date | null;
  ended_at: Date | null;
  call_seconds: number | null;
}

export async function sessionRow(sql: Pool, id: string): Promise<SessionRow> {
  const [row] = await sql<SessionRow[]>`select s.status, s.end_reason, s.started_at, s.ended_at,
      u.call_seconds from sessions s left join usage u on u.session_id = s.id
    where s.id = ${id}`;
  return row;
}

export interface LoggedEvent {
  id: number;
  at: Date;
  source: string;
  kind: string;
  data: Record<string, unknown>;
}

export async function sessionLog(sql: Pool, id: string): Promise<LoggedEvent[]> {
  return await sql<LoggedEvent[]>`select id::int, at, source, kind, data from session_events
    where session_id = ${id} order by id`;
}

/** Polls `probe` every 100 ms until it returns a value, or throws `what` after `ms`. */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  ms: number,
): Promise<T> {
  const until = performance.now() + ms;
  let last: unknown;
  while (performance.now() < until) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} within ${ms} ms${last ? `: ${(last as Error).message}` : ""}`);
}
