// What the three FAKE carrier call APIs (twilio_calls_api.ts, plivo_call_api.ts,
// exotel_connect_api.ts) share: not a carrier, a local HTTP server on 127.0.0.1 that takes the
// request placing a call as the carrier documents it (each file cites its pages and checks its
// own fields), answers as the carrier does, and then plays the call the test scripted: the status
// callbacks in the carrier's order, and for an answered call the media stream to the worker as the
// inbound fakes open it. Anything else (the worker hanging a call up) goes to the FAKE REST API of
// tests/fakes/telephony_rest.ts, which knows each placed call; when it ends one, its stream ends.
import type { FakeProviderStream } from "./provider_media_stream.ts";
import type { FakeTelephonyRest } from "./telephony_rest.ts";

/** How the callee's side goes: answers, is busy, never answers, the call fails, a machine answers. */
export type CallScript = "answer" | "busy" | "no-answer" | "failed" | "machine";

export interface Callback {
  url: string;
  params: Record<string, string>;
  /** Our API's answer. */
  status: number;
  body: string;
}

export interface PlayedCall {
  callId: string;
  script: CallScript;
  callbacks: Callback[];
  /** The stream to the worker, for an answered call. */
  stream?: FakeProviderStream;
  /** What went wrong playing it (a callback refused, no stream in the answer). */
  error?: string;
}

export interface Placed {
  /** The carrier's answer to the request. */
  response: Response;
  /** The carrier's id of the call its REST API is later asked about (hang-ups). */
  callId?: string;
  /**
   * Plays the call once the answer has gone (absent: refused, nothing to play); `hungUp` says
   * whether the REST API was told to end the call meanwhile (its stream is then never opened).
   */
  play?: (script: CallScript, hungUp: () => boolean) => Promise<PlayedCall>;
}

export interface FakeCallApi {
  url: string;
  /** Each placing request's path, its fields, and the status and body the fake answered. */
  requests: { path: string; fields: Record<string, unknown>; status: number; answer: string }[];
  /** The scripts of the next calls, in order (`answer` once they run out). */
  scripts: CallScript[];
  /** Resolves with the n-th placed call (0-based) once it has been played. */
  played(n?: number): Promise<PlayedCall>;
  close(): Promise<void>;
}

export function startFakeCallApi(
  place: (
    req: Request,
    path: string,
    recordFields: (f: Record<string, unknown>) => void,
  ) => Promise<Placed | undefined>,
  rest?: FakeTelephonyRest,
): FakeCallApi {
  const ac = new AbortController();
  const calls: Promise<PlayedCall>[] = [];
  const streams = new Map<string, FakeProviderStream>();
  const ended = new Set<string>();
  if (rest) {
    rest.onCallEnded = (id) => {
      ended.add(id);
      void streams.get(id)?.hangUp();
    };
  }
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      let fields: Record<string, unknown> = {};
      const placed = await place(req.clone(), path, (f) => (fields = f));
      if (!placed) {
        if (!rest) return Response.json({ error: "no such resource" }, { status: 404 });
        return await fetch(`${rest.url}${path}`, {
          method: req.method,
          headers: req.headers,
          body: req.body ? await req.arrayBuffer() : undefined,
        });
      }
      fake.requests.push({
        path,
        fields,
        status: placed.response.status,
        answer: await placed.response.clone().text(),
      });
      if (placed.play) {
        const play = placed.play;
        const script = fake.scripts.shift() ?? "answer";
        // Known to the REST fake at once: a hang-up may come while the call is still playing.
        if (placed.callId) rest?.calls.add(placed.callId);
        // The carrier answers the request first, then the call goes on (a tick later).
        const done = new Promise<void>((r) => setTimeout(r, 20)).then(() =>
          play(script, () => placed.callId !== undefined && ended.has(placed.callId))
        )
          .then((call) => {
            if (call.stream) streams.set(call.callId, call.stream);
            return call;
          });
        calls.push(done);
      }
      return placed.response;
    },
  );
  const fake: FakeCallApi = {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests: [],
    scripts: [],
    async played(n = 0) {
      const until = Date.now() + 15_000;
      while (!calls[n]) {
        if (Date.now() > until) throw new Error(`no call ${n} was placed`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return await calls[n];
    },
    close: async () => {
      for (const s of streams.values()) await s.hangUp().catch(() => {});
      ac.abort();
      await server.finished;
    },
  };
  return fake;
}

/** POSTs a callback form as a carrier does, with `headers` (its signature); records the answer. */
export async function postCallback(
  call: PlayedCall,
  url: string,
  params: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Callback> {
  const r = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(params),
  });
  const cb = { url, params, status: r.status, body: await r.text() };
  call.callbacks.push(cb);
  if (r.status >= 300) call.error ??= `callback ${params.CallStatus ?? params.Status}: ${r.status}`;
  return cb;
}

export const basicOf = (user: string, pass: string) => `Basic ${btoa(`${user}:${pass}`)}`;
