// Dialling a session as a page does: sessions.connect with the key (and the page's Origin for a
// pk_ key), then the offer to the worker endpoint it returns. Shared by the caller simulator and
// the scenario runner; a refusal comes back as a failure with the service's error code.
import { CallerHttpError, type CallerOptions, TestCaller } from "./caller.ts";
import type { Failure, FailureKind } from "./call_events.ts";

export interface DialOptions {
  /** API base URL, e.g. http://127.0.0.1:8787. */
  api: string;
  /** sk_ or pk_ key. */
  key: string;
  agent: string;
  /** Sent as the Origin header (a pk_ key's allowlist decides on it). */
  origin?: string;
  /** The connect body's `config` and `init`. */
  config?: Record<string, unknown>;
  init?: Record<string, unknown>;
  /** The connect body's `display_name` label. */
  displayName?: string;
  signal?: AbortSignal;
  /** Given the peer connection once its sockets exist (where an impaired link is put). */
  onSockets?: CallerOptions["onSockets"];
}

export type Dialled =
  | { kind: "ok"; sessionId: string; caller: TestCaller }
  | { kind: "failed"; sessionId: string | null; failure: Failure; exitCode: 2 | 130 };

/** sessions.connect, then the offer; `onSession` hears the session id as soon as it exists. */
export async function dial(o: DialOptions, onSession?: (id: string) => void): Promise<Dialled> {
  const body: Record<string, unknown> = { agent_id: o.agent };
  if (o.config) body.config = o.config;
  if (o.init) body.init = o.init;
  if (o.displayName) body.display_name = o.displayName;
  const headers: Record<string, string> = {
    authorization: `Bearer ${o.key}`,
    "content-type": "application/json",
  };
  if (o.origin) headers.origin = o.origin;
  const base = o.api.replace(/\/+$/, "");
  const failed = (failure: Failure, sessionId: string | null = null, exitCode: 2 | 130 = 2) =>
    ({ kind: "failed", sessionId, failure, exitCode }) as const;
  let connect: { status: number; body: unknown };
  try {
    const res = await fetch(`${base}/api/v1/sessions.connect`, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      signal: o.signal,
    });
    connect = { status: res.status, body: parseMaybe(await res.text()) };
  } catch (err) {
    if (o.signal?.aborted) {
      return failed({ kind: "interrupted", message: "interrupted" }, null, 130);
    }
    return failed({
      kind: "unreachable",
      message: `cannot reach the API at ${base}: ${(err as Error).message}`,
    });
  }
  if (connect.status !== 200) return failed(originNamed(refusal("connect refused", connect), o));
  const params = connect.body as {
    session_id: string;
    webrtc_request_params: { endpoint: string; headers: Record<string, string> };
  };
  onSession?.(params.session_id);
  try {
    const caller = await TestCaller.connect({
      offerUrl: params.webrtc_request_params.endpoint,
      headers: params.webrtc_request_params.headers,
      onSockets: o.onSockets,
    });
    return { kind: "ok", sessionId: params.session_id, caller };
  } catch (err) {
    const failure = err instanceof CallerHttpError
      ? refusal("offer refused", { status: err.status, body: parseMaybe(err.body) })
      : { kind: "offer refused" as const, message: (err as Error).message };
    return failed(failure, params.session_id);
  }
}

/** An origin refusal says which Origin was sent (or that none was): the key's allowlist lacks it. */
function originNamed(f: Failure, o: DialOptions): Failure {
  if (f.code !== "origin_not_allowed") return f;
  const sent = o.origin
    ? `sent with Origin ${o.origin}, which is not on the key's allowlist`
    : "sent without an Origin header: a pk_ key needs one on its allowlist";
  return { ...f, message: `${f.message} (${sent})` };
}

function parseMaybe(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text; // not JSON: shown as text
  }
}

/** The service's error envelope `{error:{code,message}}` as a failure. */
export function refusal(kind: FailureKind, r: { status: number; body: unknown }): Failure {
  const env = (r.body as { error?: { code?: string; message?: string } } | null)?.error;
  if (env && typeof env === "object") {
    return {
      kind,
      code: env.code,
      message: `HTTP ${r.status} ${env.code ?? "?"}: ${env.message ?? ""}`.trim(),
    };
  }
  const text = typeof r.body === "string" ? r.body : JSON.stringify(r.body);
  return { kind, message: `HTTP ${r.status}: ${text.slice(0, 300)}` };
}
