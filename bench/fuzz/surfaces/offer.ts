// Surface 2: the worker's offer endpoint (POST offers, PATCH candidates) in a real worker process.
// Properties per input: no 5xx, every refusal in the error envelope with X-Correlation-Id, an
// accepted offer answers {sdp, type:"answer", pc_id} and has what a call needs (a fingerprint, ICE
// credentials, Opus, the data channel: media/rtc/sdp.ts missingForACall), an accepted PATCH
// {status:"success"};
// over the run: the worker never exits, logs no "Uncaught" line and no "unexpected error" (a
// 500), and its RSS is measured before, after, and once the calls the run left have ended.
import type { Tenant } from "../../../tests/helpers/api_server.ts";
import type { TestCaller } from "../../../caller/caller.ts";
import {
  type BaseOffer,
  makeBaseOffer,
  offeredSdp,
  type OfferInput,
  offerInput,
} from "../gen/offer.ts";
import { missingForACall } from "../../../media/rtc/sdp.ts";
import { type Session, type Stack, startStack } from "../stack.ts";
import { installGuard, settle, takeEscapes } from "../guard.ts";
import { Tally } from "../tally.ts";
import { batches, pool } from "../run.ts";

export interface OfferVerdict {
  tag: string;
  status: number;
  violations: { kind: string; detail: string }[];
}

/** Sessions waiting for their first offer, a running call to renegotiate and trickle to. */
export class OfferContext {
  private fresh: Session[] = [];
  private live?: { caller: TestCaller; session: Session };
  private liveStarting?: Promise<{ caller: TestCaller; session: Session }>;
  /**
   * Offers accepted (each starts a call that ends 20 s later without a connection). Only those
   * with everything a call needs are: the rest are refused before the token is spent.
   */
  accepted = 0;
  livesStarted = 0;

  constructor(readonly stack: Stack, readonly tenant: Tenant) {}

  /** A session whose token has not started a call. */
  async takeFresh(): Promise<Session> {
    return this.fresh.pop() ?? await this.stack.connect(this.tenant);
  }

  giveBack(s: Session): void {
    if (this.fresh.length < 32) this.fresh.push(s);
  }

  /** The running call, started again when a fuzzed offer has broken the last one. */
  async liveCall(): Promise<{ caller: TestCaller; session: Session }> {
    const l = this.live;
    if (l && l.caller.chat.readyState === "open" && l.caller.pc.connectionState === "connected") {
      return l;
    }
    this.liveStarting ??= (async () => {
      await l?.caller.hangUp().catch(() => {});
      const started = await this.stack.call(this.tenant);
      this.livesStarted++;
      this.live = started;
      return started;
    })().finally(() => (this.liveStarting = undefined));
    return await this.liveStarting;
  }

  async close(): Promise<void> {
    await this.live?.caller.hangUp().catch(() => {});
  }
}

function forge(token: string): string {
  const [h, p, sig] = token.split(".");
  return `${h}.${p}.${sig[0] === "A" ? "B" : "A"}${sig.slice(1)}`;
}

// deno-lint-ignore no-explicit-any
function envelopeProblem(body: any, headers: Headers): string | undefined {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return "not an object";
  const e = body.error;
  if (typeof e?.code !== "string" || !e.code) return "no error.code";
  if (typeof e.message !== "string" || !e.message) return "no error.message";
  if (typeof e.details !== "object" || e.details === null) return "no error.details";
  if (body.info !== e.message) return "info differs from error.message";
  if (headers.get("x-correlation-id") !== body.correlation_id) return "correlation id differs";
  return undefined;
}

/** Sends one input (resolving its token and pc_id against the context) and judges the answer. */
export async function sendOffer(ctx: OfferContext, input: OfferInput): Promise<OfferVerdict> {
  const { stack } = ctx;
  let session: Session;
  let pcId = "pc_not_a_connection";
  if (input.target === "live") {
    const live = await ctx.liveCall();
    session = live.session;
    pcId = live.caller.pcId ?? pcId;
  } else {
    session = await ctx.takeFresh();
  }
  let auth: string | undefined;
  let other: Session | undefined;
  switch (input.token) {
    case "valid":
      auth = `Bearer ${session.token}`;
      break;
    case "none":
      break;
    case "garbage":
      auth = input.garbage;
      break;
    case "malformed":
      auth = `Bearer ${session.token.slice(0, 40)}`;
      break;
    case "forged":
      auth = `Bearer ${forge(session.token)}`;
      break;
    case "other-session":
      other = await ctx.takeFresh();
      auth = `Bearer ${other.token}`;
      break;
    case "expired":
    case "other-node": {
      const past = Date.now() - 600_000;
      const minted = await stack.signer.mint(
        {
          sid: session.session_id,
          aud: input.token === "expired" ? stack.worker.nodeId : "node-elsewhere",
          sub: stack.echo.agent_id,
          ten: stack.echo.workspace_id,
          input: {},
        },
        input.token === "expired"
          ? { jti: "tok_fuzz_old", expiresAt: new Date(past + 300_000) }
          : { jti: "tok_fuzz_other", expiresAt: new Date(Date.now() + 300_000) },
        input.token === "expired" ? past : Date.now(),
      );
      auth = `Bearer ${minted.token}`;
      break;
    }
  }
  const body = typeof input.body === "string"
    ? input.body.replaceAll("\\u0001pc_id", pcId)
    : input.body;
  const headers = new Headers({ "content-type": "application/json" });
  if (auth !== undefined) headers.set("authorization", auth);
  const what = (status: number, text: string) =>
    `${input.method} ${input.note} → ${status} ${text.slice(0, 300)}`;
  let status = 0;
  let text = "";
  let resHeaders = new Headers();
  try {
    const res = await fetch(session.endpoint, {
      method: input.method,
      headers,
      body: body as BodyInit,
      signal: AbortSignal.timeout(30_000),
    });
    status = res.status;
    resHeaders = res.headers;
    text = await res.text();
  } catch (err) {
    return {
      tag: `no answer (${(err as Error).name})`,
      status: 0,
      violations: [{ kind: "no answer", detail: what(0, (err as Error).message) }],
    };
  } finally {
    if (other) ctx.giveBack(other);
  }
  const violations: OfferVerdict["violations"] = [];
  // deno-lint-ignore no-explicit-any
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch { /* judged below */ }
  if (status >= 500) {
    const sent = typeof body === "string" ? body : `bytes ${JSON.stringify([...body])}`;
    violations.push({ kind: "5xx", detail: `${what(status, text)} ‖ body sent: ${sent}` });
  }
  let tag: string;
  if (status === 200) {
    if (input.method === "POST") {
      const ok = parsed?.type === "answer" && typeof parsed?.sdp === "string" &&
        typeof parsed?.pc_id === "string";
      if (!ok) violations.push({ kind: "200 of the wrong shape", detail: what(status, text) });
      // An offer no call can connect with must be a 400 that leaves the token unspent.
      const missing = missingForACall(offeredSdp(input) ?? "");
      if (missing) {
        violations.push({
          kind: "accepted an offer lacking what a call needs",
          detail: `${missing}: ${what(status, text)}`,
        });
      }
      if (input.target === "fresh") ctx.accepted++;
      tag = input.target === "live" ? "200 renegotiated" : "200 accepted";
    } else {
      if (parsed?.status !== "success") {
        violations.push({ kind: "200 of the wrong shape", detail: what(status, text) });
      }
      tag = "200 candidates";
    }
  } else {
    const problem = envelopeProblem(parsed, resHeaders);
    if (problem) {
      violations.push({
        kind: "refusal outside the envelope",
        detail: `${problem}: ${what(status, text)}`,
      });
    }
    tag = `${status} ${parsed?.error?.code ?? "?"}`;
  }
  // A fresh session whose token was not spent can serve another input.
  if (input.target === "fresh" && !(status === 200 && input.method === "POST")) {
    ctx.giveBack(session);
  }
  return { tag, status, violations };
}

/** Folds the worker's own health into the tally (exits, Uncaught lines, logged 500s). */
export function judgeWorker(
  stack: Stack,
  tally: Tally,
  seen: { unexpected: number; uncaught: number },
) {
  const h = stack.health();
  if (h.exited) tally.fail("crash", `the worker exited: ${h.lines.join(" | ")}`);
  for (let i = seen.uncaught; i < h.uncaught; i++) {
    tally.fail("unhandled", `worker: ${h.lines.find((l) => /Uncaught/.test(l)) ?? ""}`);
  }
  if (h.unexpectedErrors > seen.unexpected) {
    tally.figure("worker 'unexpected error' log lines (500s)", h.unexpectedErrors);
  }
  seen.unexpected = h.unexpectedErrors;
  seen.uncaught = h.uncaught;
}

/** Waits until the worker has no calls (or `ms` passes); returns how many are left. */
export async function waitCallsEnded(stack: Stack, ms: number): Promise<number> {
  const until = Date.now() + ms;
  for (;;) {
    const r = await fetch(`${stack.worker.url}/healthz`).then((r) => r.json()).catch(() => ({
      calls: -1,
    }));
    if (r.calls <= 0 || Date.now() > until) return r.calls;
    await settle(500);
  }
}

export async function fuzzOffer(
  runs: number,
  seed: number,
  options: { concurrency?: number; settleMs?: number; base?: BaseOffer } = {},
): Promise<Tally> {
  installGuard();
  const tally = new Tally("offer (worker POST offer / PATCH candidates)");
  const base = options.base ?? await makeBaseOffer();
  const stack = await startStack();
  const ctx = new OfferContext(stack, stack.echo);
  const seen = { unexpected: 0, uncaught: 0 };
  try {
    const rssBefore = await stack.workerRss();
    for (const batch of batches(offerInput(base), runs, seed)) {
      const inFlight = new Set<string>();
      await pool(batch, options.concurrency ?? 6, async (input) => {
        inFlight.add(input.note);
        const v = await sendOffer(ctx, input);
        inFlight.delete(input.note);
        tally.inputs++;
        tally.outcome(v.tag);
        for (const x of v.violations) tally.fail(x.kind, x.detail);
      }, (err, input) => tally.fail("fuzzer error", `${input.note}: ${(err as Error)?.stack}`));
      for (const e of takeEscapes()) tally.fail(e.kind, `fuzzer process: ${e.detail}`);
      judgeWorker(stack, tally, seen);
      if (stack.health().exited) {
        tally.fail("crash", `inputs in flight when the worker died: ${[...inFlight].join(" || ")}`);
        break;
      }
    }
    const rssAfter = await stack.workerRss();
    await ctx.close();
    const left = await waitCallsEnded(stack, options.settleMs ?? 25_000);
    tally.memory.push({
      process: "worker",
      beforeBytes: rssBefore,
      afterBytes: rssAfter,
      settledBytes: await stack.workerRss(),
    });
    tally.figure("offers accepted (calls started, then timed out unconnected)", ctx.accepted);
    tally.figure("live calls started (renegotiated and trickled to)", ctx.livesStarted);
    tally.figure("calls still on the worker when RSS settled", left);
    judgeWorker(stack, tally, seen);
  } finally {
    await stack.close();
  }
  tally.finish();
  return tally;
}
