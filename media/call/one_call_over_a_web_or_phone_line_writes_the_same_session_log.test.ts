// One Call runs every kind of line (line.ts): the same script played through a line that is a
// web call (a page hears the call) and through one that is a phone call (no page: the record
// keeps what it would have heard) writes the same session log, kind for kind and in order. The
// line is a test's, driven on a 20 ms clock as a real one is; the engines, the brain (the SDK's),
// the conversation and the record are the real ones. Script: the greeting, one spoken caller
// turn, the bot's reply, and the brain ending the call.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { callerSpeechWav } from "../../tests/helpers/audio.ts";
import { freshDatabase } from "../../tests/helpers/database.ts";
import { readWav } from "../../caller/wav.ts";
import { createBrain } from "../../sdk/brain/mod.ts";
import { localEngines } from "../../tests/helpers/local_engines.ts";
import type { CallEngines } from "../engines/call_engines.ts";
import type { FrameSource } from "../audio/frame_source.ts";
import type { DtmfDigit } from "../phone/line.ts";
import { Emitter } from "../rtc/emitter.ts";
import type { Pool } from "../../db/client.ts";
import { Call } from "./call.ts";
import type { CallLine, EndStatus, PhoneAbout } from "./line.ts";
import { SessionLog } from "./session_log.ts";
import type { SessionEvent } from "../../db/events.ts";

/** A line on a 20 ms clock: the caller's frames (silence unless it speaks), the bot's pulled. */
class ScriptLine implements CallLine {
  readonly channel = "wideband" as const;
  readonly onCallerFrame = new Emitter<[Int16Array]>();
  readonly onDtmf = new Emitter<[DtmfDigit]>();
  readonly onEnded = new Emitter<[string]>();
  /** What a page was told (a web line), in order. */
  readonly told: { type: string; data?: unknown }[] = [];
  readonly page?: { emit(type: string, data?: unknown): boolean };
  /** A page says when it is ready; a phone line is ready when answered. */
  readonly onReady?: Emitter<[unknown]>;
  readonly transfer?: () => Promise<{ ok: boolean; detail: string }>;
  readonly stats?: () => Record<string, number>;
  botFrames = 0;
  hungUp?: { status: EndStatus; reason: string };
  private speech: Int16Array[] = [];
  private source?: FrameSource;
  private sent?: (pcm: Int16Array | undefined) => void;
  private timer = setInterval(() => this.tick(), 20);

  constructor(readonly phone?: PhoneAbout) {
    if (phone) {
      this.transfer = () => Promise.resolve({ ok: false, detail: "a test line" });
      this.stats = () => ({ bot_frames: this.botFrames });
    } else {
      this.page = { emit: (type, data) => (this.told.push({ type, data }), true) };
      this.onReady = new Emitter();
    }
  }

  /** 16 kHz speech the caller says, from the next frame on. */
  say(pcm: Int16Array): void {
    for (let i = 0; i + 320 <= pcm.length; i += 320) this.speech.push(pcm.slice(i, i + 320));
  }

  get speaking(): boolean {
    return this.speech.length > 0;
  }

  private tick(): void {
    this.onCallerFrame.emit(this.speech.shift() ?? new Int16Array(320));
    const pcm = this.source?.next();
    if (pcm) this.botFrames++;
    this.sent?.(pcm);
  }

  play(source: FrameSource, sent?: (pcm: Int16Array | undefined) => void): void {
    this.source = source;
    this.sent = sent;
  }

  clear(): void {}

  hangUp(end: { status: EndStatus; reason: string }): Promise<void> {
    this.hungUp = end;
    clearInterval(this.timer);
    return Promise.resolve();
  }

  readonly pacing = { skipped: 0 };
}

async function until(done: () => boolean, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Plays the script through `line`; returns the session log as written, and the brain's turns. */
async function playScript(
  line: ScriptLine,
  env: { sql: Pool; engines: CallEngines; brainUrl: string; caller: Int16Array },
): Promise<{ events: SessionEvent[]; call: Call }> {
  const events: SessionEvent[] = [];
  // No session row: the record's end is kept in the log (end_not_recorded), alike for both.
  const sessionId = line.phone ? "ses_phone" : "ses_web";
  const log = new SessionLog(env.sql, sessionId, 500, {
    write: (batch) => (events.push(...batch), Promise.resolve()),
  });
  const call = new Call(line, {
    sessionId,
    tokenId: "tok",
    agentId: "agt_script",
    brainUrl: env.brainUrl,
    engines: env.engines,
    sql: env.sql,
    log,
  });
  call.open();
  line.onReady?.emit("a test page");
  await until(() => line.botFrames > 0 && !call.conversation!.speaker.busy, "the greeting");
  line.say(env.caller);
  await call.ended;
  log.close();
  return { events, call };
}

Deno.test("a web call and a phone call over one Call write the same session log for one script", async () => {
  const served = createBrain({
    onSessionStart: () => "Hello.",
    async *onTurn(_turn, session) {
      yield "We open at nine.";
      session.end();
    },
  }).serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const engines = await localEngines();
  const db = await freshDatabase();
  try {
    const caller = (await readWav(await callerSpeechWav("what time do you open", 0.3, 16000)))
      .samples;
    const env = { sql: db.sql, engines, brainUrl: served.url, caller };
    const phone = {
      carrier: "sip" as const,
      from: "+14155550100",
      to: "+14155550111",
      call_id: "c1",
    };
    const web = await playScript(new ScriptLine(), env);
    const tel = await playScript(new ScriptLine(phone), env);
    for (const { call } of [web, tel]) {
      assertEquals([call.endStatus, call.endReason], ["ended", "brain_ended"]);
    }
    // The call's own story, kind for kind; a phone adds its page's record and its line's counts.
    const story = (events: SessionEvent[]) =>
      events.filter((e) => e.source !== "phone").map((e) => `${e.source}:${e.kind}`);
    console.log(story(web.events).join(" "));
    assertEquals(story(tel.events), story(web.events));
    // The script happened: greeted, the caller's turn sent, the reply played, the brain's end.
    const steps = ["worker:call_started", "from_brain:greeting", "to_brain:user_turn"]
      .concat("from_brain:speech_unit", "worker:end_requested", "worker:call_ended");
    let at = -1;
    for (const step of steps) {
      at = story(web.events).indexOf(step, at + 1);
      assert(at >= 0, `no ${step} in order`);
    }
    // What the page was told, but for interim words and a unit's progress, is what the phone's
    // record holds, in the same order.
    const kept = (t: { type: string; data?: unknown }) => {
      const d = t.data as Record<string, unknown> | undefined;
      if (t.type === "user-transcription") return d?.final === true;
      return t.type !== "bot-output" || d?.spoken_status === "completed";
    };
    const pageTold = web.call.line as ScriptLine;
    const recorded = tel.events.filter((e) => e.source === "phone" && e.kind !== "line");
    assertEquals(recorded.map((e) => e.kind), pageTold.told.filter(kept).map((t) => t.type));
    assert(recorded.some((e) => e.kind === "user-transcription"), "the caller's turn was heard");
  } finally {
    await engines.close();
    await served.shutdown();
    await db.close();
  }
});
