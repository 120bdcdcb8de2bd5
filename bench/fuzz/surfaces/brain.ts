// Surface 4: frames from the customer's brain.
//
// For volume, the worker's own decoding path runs in this process: a real Conversation (the
// call's brain side, media/call/conversation.ts) with stand-in speech engines dials a WebSocket
// here, and each frame is handed to its BrainConnection's receive (media/brain/connection.ts:
// decode, session-log entry, then the conversation's frame handling), exactly what a WebSocket
// message triggers; the speaker is pulled as the outbound pacer would, so units start and
// bot-output events are sent. Per frame: nothing thrown, no unhandled rejection, a frame that
// decodes is not called a protocol error, every message the page would get is valid JSON within
// the data channel's size, and every session-log entry could be stored (jsonb).
//
// A smaller sample goes through a real worker process: the fuzzer is the agent's brain (a
// WebSocket server), a test caller places each call, and the brain sends its frames.
import { Conversation, type ConversationOptions } from "../../../media/call/conversation.ts";
import { defaultConfig } from "../../../media/call/call_config.ts";
import type { CallEngines } from "../../../media/engines/call_engines.ts";
import type { SessionLog } from "../../../media/call/session_log.ts";
import type { BrainConnection } from "../../../media/brain/connection.ts";
import { RecognitionRouter, SynthesisRouter } from "../../../media/engines/routing.ts";
import type { RecognitionEngine, RecognitionStream } from "../../../media/stt/engine.ts";
import {
  catalogNames,
  type SynthesisChunk,
  type SynthesisEngine,
} from "../../../media/tts/engine.ts";
import type { VoiceActivity } from "../../../media/vad/voice_activity.ts";
import { RtviSession } from "../../../media/rtvi/session.ts";
import { MAX_RTVI_MESSAGE_BYTES, overBytes } from "../../../media/rtvi/protocol.ts";
import { unstorable } from "../../../common/http/json_body.ts";
import { setQuiet } from "../../../common/log.ts";
import { decodeServiceFrame } from "../../../proto/frames.ts";
import { type BrainFrameInput, brainSequence, liveBrainSequence } from "../gen/brain.ts";
import { installGuard, rss, settle, takeEscapes } from "../guard.ts";
import { Tally } from "../tally.ts";
import { type Stack, startStack } from "../stack.ts";
import { judgeWorker } from "./offer.ts";
import fc from "fast-check";

// ---------- stand-in engines ----------

const SERVES = {
  LANGUAGE_EN: {
    stt: [{ engine: "fake-stt", kind: "local" as const }],
    tts: {
      VOICE_ANANYA: [{ engine: "fake-tts", kind: "local" as const }],
      VOICE_ARJUN: [{ engine: "fake-tts", kind: "local" as const }],
    },
  },
  LANGUAGE_HI: {
    stt: [{ engine: "fake-stt", kind: "local" as const }],
    tts: { VOICE_ANANYA: [{ engine: "fake-tts", kind: "local" as const }] },
  },
};

class FakeRecogniser implements RecognitionEngine {
  name = "fake-stt";
  kind = "local" as const;
  languages = ["LANGUAGE_EN", "LANGUAGE_HI"];
  open(): Promise<RecognitionStream> {
    return Promise.resolve({
      push: () => {},
      onInterim: () => {},
      finish: () => Promise.resolve({ text: "", audioMs: 0 }),
      close: () => {},
    });
  }
  close() {
    return Promise.resolve();
  }
}

/** One 20 ms frame of silence per unit, with a word timing per word: no real synthesis cost. */
class FakeSynthesizer implements SynthesisEngine {
  name = "fake-tts";
  kind = "local" as const;
  streaming = true;
  sampleRate = 48000;
  wordTimings = "engine" as const;
  catalog = {
    LANGUAGE_EN: { VOICE_ANANYA: "a", VOICE_ARJUN: "b" },
    LANGUAGE_HI: { VOICE_ANANYA: "c" },
  };
  voices: string[];
  languages: string[];
  constructor() {
    ({ voices: this.voices, languages: this.languages } = catalogNames(this.catalog));
  }
  async *synthesize(text: string): AsyncIterable<SynthesisChunk> {
    await Promise.resolve();
    yield {
      pcm: new Int16Array(960 * 2),
      words: [{ word: text.slice(0, 20), startMs: 0, endMs: 20 }],
    } as unknown as SynthesisChunk;
  }
  close() {
    return Promise.resolve();
  }
}

function fakeEngines(): CallEngines {
  const vad = {
    push: () => Promise.resolve([]),
    close: () => {},
    setStartMs: () => {},
    configure: () => {},
    endSpeech: () => {},
    processedMs: 0,
    settings: { startMs: 200 },
    inSpeech: false,
  } as unknown as VoiceActivity;
  return {
    vad: () => Promise.resolve(vad),
    recognition: new RecognitionRouter([new FakeRecogniser()], {}),
    synthesis: new SynthesisRouter([new FakeSynthesizer()], {}),
    serves: SERVES,
    close: () => Promise.resolve(),
  };
}

// ---------- what the worker would store and send ----------

/** Checks session-log entries as PostgreSQL's jsonb would take them (sql.json: JSON.stringify). */
export class CheckedLog {
  entries = 0;
  refused: { kind: string; why: string }[] = [];
  add(source: string, kind: string, data?: unknown): void {
    this.entries++;
    let why: string | undefined;
    try {
      JSON.stringify(data ?? {});
      why = unstorable({ kind, data })?.message;
    } catch (err) {
      why = `not serializable: ${(err as Error).message}`;
    }
    if (why && this.refused.length < 1000) this.refused.push({ kind: `${source}/${kind}`, why });
  }
  flush(): Promise<void> {
    return Promise.resolve();
  }
}

/** The page's side of the data channel: what werift would refuse to send, and bad JSON. */
export class CheckedPage {
  sent = 0;
  problems: string[] = [];
  send = (text: string) => {
    this.sent++;
    if (overBytes(text, MAX_RTVI_MESSAGE_BYTES)) {
      // werift throws this from RTCDataChannel.send (the page's a=max-message-size).
      throw new Error(`max-message-size exceeded: ${text.length} > ${MAX_RTVI_MESSAGE_BYTES}`);
    }
    try {
      const m = JSON.parse(text);
      if (m.label !== "rtvi-ai" && m.type !== "signalling") {
        this.problems.push(`unlabelled: ${text.slice(0, 80)}`);
      }
    } catch {
      this.problems.push(`not JSON: ${text.slice(0, 80)}`);
    }
  };
}

// ---------- the in-process conversation ----------

/** A WebSocket endpoint that accepts the conversation's dial and reads what it is sent. */
export function silentBrain(): { url: string; received: () => number; close(): Promise<void> } {
  let received = 0;
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    (req) => {
      const { socket, response } = Deno.upgradeWebSocket(req);
      socket.binaryType = "arraybuffer";
      socket.onmessage = (e) => {
        received++;
        decodeServiceFrame(new Uint8Array(e.data as ArrayBuffer));
      };
      return response;
    },
  );
  return {
    url: `ws://127.0.0.1:${server.addr.port}/brain`,
    received: () => received,
    close: async () => {
      ac.abort();
      await server.finished;
    },
  };
}

export class ConversationHarness {
  conversation!: Conversation;
  log = new CheckedLog();
  page = new CheckedPage();
  rtvi!: RtviSession;
  ends: string[] = [];
  private engines = fakeEngines();
  private brain?: BrainConnection;

  /** `makeRtvi` replaces the RTVI session (to run an older one against the same frames). */
  constructor(
    private brainUrl: string,
    private makeRtvi: (send: (text: string) => void) => RtviSession = (send) =>
      new RtviSession(send),
  ) {}

  async start(): Promise<void> {
    this.rtvi = this.makeRtvi(this.page.send);
    const opts: ConversationOptions = {
      sessionId: `ses_fuzz${crypto.randomUUID().slice(0, 8)}`,
      agentId: "ag_fuzz",
      brainUrl: this.brainUrl,
      init: {},
      config: defaultConfig(),
      engines: this.engines,
      log: this.log as unknown as SessionLog,
      rtvi: this.rtvi,
      endCall: (status, reason) => {
        this.ends.push(`${status}/${reason}`);
      },
      greetingTimeoutMs: 60_000,
    };
    this.conversation = new Conversation(opts);
    await this.conversation.start();
    // deno-lint-ignore no-explicit-any
    this.brain = (this.conversation as any).brain as BrainConnection;
    if (!this.brain) throw new Error(`the conversation did not dial the brain: ${this.ends}`);
  }

  /** One WebSocket message from the brain, handed over as the socket layer hands it. */
  deliver(bytes: Uint8Array): void {
    // deno-lint-ignore no-explicit-any
    const connection = this.brain as any;
    // Exactly the message's bytes (the encoder's may be a view into a larger pool).
    const copy = new Uint8Array(bytes);
    // On its own RFC 6455 socket (media/brain/socket.ts) a message arrives as bytes; on Deno's
    // WebSocket it arrived as an ArrayBuffer.
    connection.receive("socket" in connection ? copy : copy.buffer);
  }

  /** The outbound pacer's ticks: `n` frames of the bot's voice. */
  pull(n: number): void {
    for (let i = 0; i < n; i++) this.conversation.speaker.next();
  }

  async finish(): Promise<void> {
    await this.conversation.finish("fuzz_done");
  }
}

export interface BrainDirectOptions {
  /** Frames per conversation before a fresh one is started. */
  perConversation?: number;
}

/** Runs `sequences` through harnesses; one input is one frame. */
export async function feedBrainFrames(
  tally: Tally,
  brainUrl: string,
  sequences: BrainFrameInput[][],
  options: BrainDirectOptions & { state?: { harness?: ConversationHarness; frames: number } } = {},
): Promise<void> {
  const state = options.state ?? { frames: 0 };
  const per = options.perConversation ?? 200;
  for (const seq of sequences) {
    if (!state.harness || state.frames >= per) {
      if (state.harness) await closeHarness(tally, state.harness);
      state.harness = new ConversationHarness(brainUrl);
      await state.harness.start();
      state.frames = 0;
    }
    const h = state.harness;
    for (const frame of seq) {
      tally.inputs++;
      state.frames++;
      const endsBefore = h.ends.length;
      try {
        h.deliver(frame.bytes);
        h.pull(3);
      } catch (err) {
        // An exception out of a WebSocket onmessage handler is an uncaught error in the worker.
        tally.fail(
          "crash",
          `${frame.note}: ${(err as Error).stack} ‖ bytes ${
            JSON.stringify([...frame.bytes.slice(0, 200)])
          }`,
        );
        continue;
      }
      const ended = h.ends.slice(endsBefore);
      const protocolError = ended.some((e) => e.includes("brain_protocol_error"));
      tally.outcome(
        frame.valid
          ? (protocolError ? "decodable, yet protocol error" : "ok")
          : protocolError
          ? "refused: brain_protocol_error"
          : "undecodable, yet accepted",
      );
      if (frame.valid && protocolError) {
        tally.fail("a decodable frame failed the call", frame.note);
      }
      if (!frame.valid && !protocolError) {
        tally.fail("an undecodable frame was accepted", frame.note);
      }
      if (frame.encoded && !frame.valid) {
        tally.add("frames encodeBrainFrame made that the worker cannot decode");
      }
    }
    await settle();
    for (const e of takeEscapes()) tally.fail(e.kind, e.detail);
  }
}

async function closeHarness(tally: Tally, h: ConversationHarness): Promise<void> {
  try {
    await h.finish();
  } catch (err) {
    tally.fail("crash", `finish: ${(err as Error).stack}`);
  }
  tally.add("page messages sent", h.page.sent);
  tally.add(
    "page messages not sent (over 64 KiB; dropped by RtviSession.emit)",
    h.rtvi.counts.outboundDropped,
  );
  for (const p of h.page.problems) tally.fail("malformed page message", p);
  tally.add("session-log entries", h.log.entries);
  for (const r of h.log.refused) {
    tally.add(`session-log entries jsonb would refuse (${r.kind})`);
  }
}

export async function fuzzBrainDirect(runs: number, seed: number): Promise<Tally> {
  installGuard();
  setQuiet(true);
  const tally = new Tally("brain frames (worker decoding path, in process)");
  const brain = silentBrain();
  const state: { harness?: ConversationHarness; frames: number } = { frames: 0 };
  const rssBefore = rss();
  try {
    let left = runs;
    let i = 0;
    while (left > 0) {
      const seqs = fc.sample(brainSequence(), { numRuns: 50, seed: seed + i++ });
      const trimmed: BrainFrameInput[][] = [];
      for (const s of seqs) {
        if (left <= 0) break;
        const take = s.slice(0, left);
        trimmed.push(take);
        left -= take.length;
      }
      await feedBrainFrames(tally, brain.url, trimmed, { state });
    }
    if (state.harness) await closeHarness(tally, state.harness);
    await settle(50);
    for (const e of takeEscapes()) tally.fail(e.kind, e.detail);
  } finally {
    await brain.close();
  }
  tally.memory.push({
    process: "this process (conversations in it)",
    beforeBytes: rssBefore,
    afterBytes: rss(),
  });
  tally.finish();
  return tally;
}

// ---------- through a real worker ----------

/**
 * The agent's brain, scripted by the fuzzer: each call that dials it takes the next sequence
 * from `script`, sends its frames once SessionStart has arrived, then stays until the worker
 * closes the socket.
 */
export class FuzzBrain {
  readonly url: string;
  private ac = new AbortController();
  private server: Deno.HttpServer<Deno.NetAddr>;
  private queue: { frames: BrainFrameInput[]; done: (r: { closeCode: number }) => void }[] = [];
  calls = 0;

  constructor() {
    this.server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, signal: this.ac.signal, onListen: () => {} },
      (req) => this.accept(req),
    );
    this.url = `ws://127.0.0.1:${this.server.addr.port}/brain`;
  }

  /** The next call gets `frames`; resolves when its socket closes. */
  script(frames: BrainFrameInput[]): Promise<{ closeCode: number }> {
    return new Promise((done) => this.queue.push({ frames, done }));
  }

  private accept(req: Request): Response {
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.binaryType = "arraybuffer";
    const job = this.queue.shift();
    this.calls++;
    let started = false;
    socket.onmessage = () => {
      if (started || !job) return;
      started = true;
      for (const f of job.frames) {
        if (socket.readyState !== WebSocket.OPEN) break;
        socket.send(new Uint8Array(f.bytes));
      }
    };
    socket.onclose = (e) => job?.done({ closeCode: e.code });
    socket.onerror = () => {};
    return response;
  }

  async close(): Promise<void> {
    this.ac.abort();
    await this.server.finished;
  }
}

/** Session status and end reason, once the session has ended (or `ms` passed). */
async function ended(stack: Stack, sessionId: string, ms = 10_000) {
  const until = Date.now() + ms;
  for (;;) {
    const [row] = await stack.api.db.sql<{ status: string; end_reason: string | null }[]>`
      select status, end_reason from sessions where id = ${sessionId}`;
    if (row && (row.status === "ended" || row.status === "failed")) return row;
    if (Date.now() > until) return row;
    await settle(100);
  }
}

export async function fuzzBrainLive(
  calls: number,
  seed: number,
  options: { stack?: Stack; brain?: FuzzBrain } = {},
): Promise<Tally> {
  installGuard();
  const tally = new Tally("brain frames (real WebSocket into a worker process)");
  const brain = options.brain ?? new FuzzBrain();
  const stack = options.stack ?? await startStack({ brainUrl: brain.url });
  const seen = { unexpected: 0, uncaught: 0 };
  try {
    const rssBefore = await stack.workerRss();
    const sequences = fc.sample(liveBrainSequence(), { numRuns: calls, seed });
    for (const frames of sequences) {
      const closed = brain.script(frames);
      const { caller, session } = await stack.call(stack.brain!);
      const big: string[] = [];
      caller.chat.onMessage.subscribe((d) => {
        const text = typeof d === "string" ? d : new TextDecoder().decode(d);
        if (overBytes(text)) big.push(text.slice(0, 80));
      });
      // Long enough for the frames to arrive and a unit or two to start playing.
      await Promise.race([closed, settle(1500)]);
      await caller.hangUp();
      await Promise.race([closed, settle(3000)]);
      const row = await ended(stack, session.session_id);
      tally.inputs += frames.length;
      const undecodable = frames.findIndex((f) => !f.valid);
      const tag = `${row?.status === "ended" ? "ok: " : ""}${row?.status ?? "?"}/${
        row?.end_reason ?? "?"
      }`;
      tally.outcome(tag);
      // A frame over the worker's frame limit (if it has one) ends the call as too large.
      const refusedReasons = ["brain_protocol_error", "brain_frame_too_large"];
      // An EndSession before the bad frame may end the call first (brain_ended).
      const endedFirst = frames.slice(0, Math.max(0, undecodable)).some((f) =>
        f.note.startsWith("end_session")
      );
      if (undecodable >= 0 && !endedFirst && !refusedReasons.includes(row?.end_reason ?? "")) {
        tally.fail(
          "an undecodable frame was accepted",
          `${frames[undecodable].note} → ${tag}`,
        );
      }
      if (undecodable < 0 && row?.end_reason === "brain_protocol_error") {
        tally.fail("a decodable frame failed the call", frames.map((f) => f.note).join(", "));
      }
      for (const b of big) tally.fail("page message over 64 KiB", b);
      judgeWorker(stack, tally, seen);
      if (stack.health().exited) {
        tally.fail("crash", `the worker died on: ${frames.map((f) => f.note).join(", ")}`);
        break;
      }
    }
    // The session log: every entry of these calls was stored? (A batch with one entry PostgreSQL
    // refuses is lost whole; the worker logs a warning.)
    const [logRows] = await stack.api.db.sql<{ n: number }[]>`
      select count(*)::int as n from session_events`;
    tally.figure("session-log rows stored", logRows.n);
    const lost = stack.worker.child.output().split("\n").filter((l) =>
      l.includes("could not write session events")
    ).length;
    tally.figure("session-log batches the database refused (events lost)", lost);
    tally.memory.push({
      process: "worker",
      beforeBytes: rssBefore,
      afterBytes: await stack.workerRss(),
    });
  } finally {
    if (!options.stack) await stack.close();
    if (!options.brain) await brain.close();
  }
  tally.finish();
  return tally;
}
