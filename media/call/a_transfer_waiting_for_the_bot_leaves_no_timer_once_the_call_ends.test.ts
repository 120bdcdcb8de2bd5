// The brain's Transfer while the bot is still speaking waits for it to fall quiet, bounded by a
// play-out timer. A call that ends before then (the caller hangs up) leaves that timer behind no
// more: before the fix it held the conversation for 15 s after the call. Deno's op sanitizer is
// off by default for timers; it is asked for here, so a timer left running fails the test.
import { assert } from "../../tests/helpers/assert.ts";
import { createBrain } from "../../sdk/brain/mod.ts";
import { localEngines } from "../../tests/helpers/local_engines.ts";
import { defaultConfig } from "./call_config.ts";
import { Conversation } from "./conversation.ts";
import { SessionLog } from "./session_log.ts";
import type {
  SessionEventData,
  SessionEventKind,
  SessionSource,
} from "../../common/session_events.ts";

/** The session log as written, in this process (no database). */
class KeptLog extends SessionLog {
  kinds: string[] = [];
  constructor() {
    super(undefined as never, "ses_transfer", 500, { write: () => Promise.resolve() });
  }
  override add<S extends SessionSource, K extends SessionEventKind<S>>(
    source: S,
    kind: K,
    data: SessionEventData<S, K>,
  ): void {
    this.kinds.push(kind);
    super.add(source, kind, data);
  }
}

async function until(done: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

Deno.test({
  name: "a transfer waiting for the bot to finish leaves no timer once the call ends",
  sanitizeOps: true,
  sanitizeResources: true,
}, async () => {
  const served = createBrain({
    onSessionStart: () =>
      "Thank you for calling. Please hold on while I look up your account and find someone " +
      "who can help you with your order today.",
    onTurn: () => {},
    onDtmf: (_dtmf, session) => session.transfer("tel:+14155550199"),
  }).serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const engines = await localEngines();
  const log = new KeptLog();
  const transfers: string[] = [];
  const conversation = new Conversation({
    sessionId: "ses_transfer",
    agentId: "ag_transfer",
    brainUrl: served.url,
    init: null,
    config: defaultConfig(),
    engines,
    log,
    rtvi: { emit: () => true },
    transfer: (target) => {
      transfers.push(target);
      return Promise.resolve({ ok: true, detail: "test line" });
    },
    endCall: () => {},
  });
  try {
    await conversation.start();
    // Nothing pulls the speaker's frames here, so the greeting stays queued: the bot is busy.
    await until(() => conversation.speaker.busy, "the greeting to be queued");
    conversation.onDtmf({ digit: "0", durationMs: 100 });
    await until(() => log.kinds.includes("transfer_requested"), "the brain's transfer");
    assert(conversation.speaker.busy, "the bot fell quiet before the transfer came");
    await conversation.finish("hangup");
    assert(transfers.length === 0, "a call that ended still transferred");
  } finally {
    await conversation.finish("hangup");
    log.close();
    await engines.close();
    await served.shutdown();
  }
});
