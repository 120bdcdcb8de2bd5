// Surface 1: sessions.connect on the real API (Hono on Deno.serve) against a real database.
// Properties per input: no 5xx (seen by the client, or only by the server when the client went
// away: counted from the API's own request metric), every refusal in the error envelope with
// the X-Correlation-Id header (except what Deno's HTTP server refuses itself before the app, which
// is only allowed for requests malformed at the HTTP level), a 200 has the documented shape,
// and refusals write nothing (per input in tests; in the bench, sessions written = 200s seen).
import {
  makeTenant,
  rowCounts,
  startTestApi,
  type TestApi,
} from "../../../tests/helpers/api_server.ts";
import { registerNode } from "../../../db/nodes.ts";
import { type ConnectInput, connectInput, type ConnectTenant } from "../gen/connect.ts";
import { rawRequest } from "../raw_http.ts";
import { installGuard, rss, settle, takeEscapes } from "../guard.ts";
import { Tally } from "../tally.ts";
import { batches, pool } from "../run.ts";

export const PAGE_ORIGIN = "http://127.0.0.1:5173";

export interface ConnectTarget {
  api: TestApi;
  port: number;
  tenant: ConnectTenant;
}

export async function startConnectTarget(): Promise<ConnectTarget> {
  const api = await startTestApi({
    // Limits that would refuse nearly everything at fuzzing speed, hiding the paths behind them.
    RATE_LIMIT_PER_SECOND: "0",
    RATE_LIMIT_PER_ADDRESS_PER_SECOND: "0",
    PENDING_SESSIONS_PER_KEY: "0",
    // The node below never heartbeats; it must not go stale (a 500 missing_connect_params).
    NODE_STALE_SECONDS: "86400",
  }, { node: false });
  // Room for every session the run will make.
  await registerNode(api.db.sql, {
    node_id: "node-fuzz",
    offer_base_url: "http://127.0.0.1:9/worker",
    capacity: 1_000_000_000,
  });
  const t = await makeTenant(api, "fuzz", { origins: [PAGE_ORIGIN] });
  return {
    api,
    port: Number(new URL(api.url).port),
    tenant: { agent_id: t.agent_id, sk: t.sk, pk: t.pk, origin: PAGE_ORIGIN },
  };
}

export interface Verdict {
  /** "<status> <code>", or "no answer (...)". */
  tag: string;
  status: number;
  /** 200s answered (two for two pipelined requests). */
  created: number;
  violations: { kind: string; detail: string }[];
}

// deno-lint-ignore no-explicit-any
function envelopeProblem(body: any, headers: Headers): string | undefined {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return "not an object";
  const e = body.error;
  if (typeof e?.code !== "string" || e.code === "") return "no error.code";
  if (typeof e.message !== "string" || e.message === "") return "no error.message";
  if (e.details === null || typeof e.details !== "object" || Array.isArray(e.details)) {
    return "error.details is not an object";
  }
  if (body.info !== e.message) return "info differs from error.message";
  if (typeof body.correlation_id !== "string" || body.correlation_id === "") {
    return "no correlation_id";
  }
  if (headers.get("x-correlation-id") !== body.correlation_id) {
    return "X-Correlation-Id header differs from correlation_id";
  }
  return undefined;
}

function judge(
  input: ConnectInput,
  status: number,
  headers: Headers,
  text: string,
  note?: string,
  statuses: number[] = [status],
): Verdict {
  const v = judgeOne(input, status, headers, text, note);
  return { ...v, created: statuses.filter((s) => s === 200).length };
}

function judgeOne(
  input: ConnectInput,
  status: number,
  headers: Headers,
  text: string,
  note?: string,
): Omit<Verdict, "created"> {
  const violations: Verdict["violations"] = [];
  const bareAllowed = input.via === "raw" ? input.framing : input.overLimits;
  const what = `${input.note} → ${status || note} ${text.slice(0, 200)}`;
  if (status === 0) {
    // No answer: fine when the client went away, or for a request Deno's server drops.
    const expected = (input.via === "raw" && input.after === "close") || bareAllowed;
    if (!expected) violations.push({ kind: "no answer", detail: what });
    return { tag: `no answer (${note})`, status, violations };
  }
  if (status >= 500) {
    // The whole request, so the finding can be replayed.
    const sent = input.via === "raw"
      ? new TextDecoder("latin1").decode(input.bytes)
      : `${input.method} headers ${JSON.stringify(input.headers)} body ${
        new TextDecoder().decode(input.body ?? new Uint8Array())
      }`;
    violations.push({ kind: "5xx", detail: `${what} ‖ sent: ${sent}` });
  }
  // deno-lint-ignore no-explicit-any
  let body: any = undefined;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch { /* not JSON */ }
  if (!headers.get("x-correlation-id")) {
    // Answered by Deno's HTTP server itself, before the app: allowed only for bad framing.
    if (!bareAllowed) {
      violations.push({ kind: "refusal outside the envelope", detail: what });
    }
    return { tag: `${status} (by Deno's HTTP server, empty body)`, status, violations };
  }
  if (status === 200) {
    const keys = body && typeof body === "object" ? Object.keys(body).sort().join(",") : "";
    if (keys !== "session_id,webrtc_request_params") {
      violations.push({ kind: "200 of the wrong shape", detail: what });
    }
    return { tag: "200", status, violations };
  }
  if (input.via === "fetch" && (input.method === "HEAD" || status === 204)) {
    return { tag: `${status} (no body)`, status, violations };
  }
  if (input.via === "fetch" && input.method === "OPTIONS" && status < 300) {
    return { tag: `${status} preflight`, status, violations };
  }
  const problem = envelopeProblem(body, headers);
  if (problem) {
    violations.push({ kind: "refusal outside the envelope", detail: `${problem}: ${what}` });
  }
  return { tag: `${status} ${body?.error?.code ?? "?"}`, status, violations };
}

/** Sends one input and judges the answer (rows are the caller's business). */
export async function sendConnect(target: ConnectTarget, input: ConnectInput): Promise<Verdict> {
  if (input.via === "raw") {
    const r = await rawRequest(target.port, {
      bytes: input.bytes,
      after: input.after,
      responses: input.responses,
    });
    return judge(input, r.status, r.headers, r.body, r.note, r.statuses);
  }
  let headers: Headers;
  try {
    headers = new Headers(input.headers);
  } catch (err) {
    // fetch refuses to send it (a value Headers will not hold): not an input the server sees.
    return {
      tag: `not sendable (${(err as Error).name})`,
      status: -1,
      created: 0,
      violations: [],
    };
  }
  try {
    const res = await fetch(target.api.url + input.path, {
      method: input.method,
      headers,
      body: input.body as BodyInit | undefined,
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    return judge(input, res.status, res.headers, text);
  } catch (err) {
    return {
      tag: `no answer (${(err as Error).name})`,
      status: 0,
      created: 0,
      violations: [{ kind: "no answer", detail: `${input.note}: ${(err as Error).message}` }],
    };
  }
}

async function requestSeries(target: ConnectTarget): Promise<string[]> {
  const res = await fetch(`${target.api.url}/metrics`, {
    headers: { authorization: `Bearer ${target.api.adminToken}` },
  });
  return (await res.text()).split("\n").filter((l) => l.startsWith("voice_http_requests_total{"));
}

/** 5xx answers the API counted, including those to clients that had gone away. */
export async function serverFiveXX(target: ConnectTarget): Promise<number> {
  let n = 0;
  for (const line of await requestSeries(target)) {
    if (/status="5\d\d"/.test(line)) n += Number(line.split(" ").pop());
  }
  return n;
}

/**
 * One input with the full property, rows compared before and after (the CI sample's check).
 * Returns the violations; empty means the input passed.
 */
export async function checkConnectInput(
  target: ConnectTarget,
  input: ConnectInput,
): Promise<Verdict> {
  const before = await rowCounts(target.api.db);
  const verdict = await sendConnect(target, input);
  // A client that went away (or half-closed) before its answer cannot tell what the server did:
  // it may have served the request (Deno drops the answer on a half-closed connection).
  if (verdict.status === 0 && input.via === "raw" && input.after !== "keep") return verdict;
  const after = await rowCounts(target.api.db);
  const written = after.sessions - before.sessions;
  const expected = verdict.created;
  if (
    written !== expected || after.usage - before.usage !== expected ||
    after.events !== before.events
  ) {
    verdict.violations.push({
      kind: expected ? "a 200 did not write one session" : "a refusal wrote rows",
      detail: `${input.note} → ${verdict.tag}: ${JSON.stringify(before)} → ${
        JSON.stringify(after)
      }`,
    });
  }
  return verdict;
}

/** The bench: `runs` inputs, `concurrency` at a time; rows are compared over the whole run. */
export async function fuzzConnect(runs: number, seed: number, concurrency = 8): Promise<Tally> {
  installGuard();
  const tally = new Tally("connect (sessions.connect: bodies, headers, raw HTTP)");
  const target = await startConnectTarget();
  try {
    const arb = connectInput(target.tenant);
    const rowsBefore = await rowCounts(target.api.db);
    const fiveBefore = await serverFiveXX(target);
    const rssBefore = rss();
    let twoHundreds = 0;
    let unanswered = 0;
    for (const batch of batches(arb, runs, seed)) {
      await pool(batch, concurrency, async (input) => {
        const v = await sendConnect(target, input);
        if (v.status === -1) {
          tally.outcome(v.tag);
          return;
        }
        tally.inputs++;
        tally.outcome(v.tag);
        twoHundreds += v.created;
        if (v.status === 0) unanswered++;
        for (const x of v.violations) tally.fail(x.kind, x.detail);
      }, (err, input) => tally.fail("fuzzer error", `${input.note}: ${(err as Error)?.stack}`));
      for (const e of takeEscapes()) tally.fail(e.kind, e.detail);
    }
    await settle(200);
    for (const e of takeEscapes()) tally.fail(e.kind, e.detail);
    const rowsAfter = await rowCounts(target.api.db);
    const serverSide = (await serverFiveXX(target)) - fiveBefore;
    const seen = tally.fiveXX;
    if (serverSide > seen) {
      tally.fail("5xx", `${serverSide - seen} 5xx answered to clients that had gone away`);
      tally.fiveXX += serverSide - seen - 1;
    }
    tally.figure("5xx counted by the API's own metric", serverSide);
    // Its `method` label is whatever the client sent: every new method is a new series, kept.
    tally.figure(
      "series of voice_http_requests_total after the run",
      (await requestSeries(target)).length,
    );
    const sessions = rowsAfter.sessions - rowsBefore.sessions;
    tally.figure(
      "sessions written / 200s seen / requests the client left before an answer",
      `${sessions} / ${twoHundreds} / ${unanswered}`,
    );
    // Each 200 wrote one session and one usage row; a request whose client left may or may not
    // have been served; nothing else wrote.
    const usage = rowsAfter.usage - rowsBefore.usage;
    if (sessions < twoHundreds || sessions > twoHundreds + unanswered || usage !== sessions) {
      tally.fail(
        "refusals wrote rows",
        `${JSON.stringify(rowsBefore)} → ${JSON.stringify(rowsAfter)}`,
      );
    }
    if (rowsAfter.events !== rowsBefore.events) tally.fail("refusals wrote rows", "session_events");
    tally.memory.push({
      process: "API (in this process)",
      beforeBytes: rssBefore,
      afterBytes: rss(),
    });
  } finally {
    await target.api.close();
  }
  tally.finish();
  return tally;
}
