// A phone line that echoes the bot back (issue 35): a SIP call through a real worker process
// (local engines: espeak-ng speaks, Silero and pocketsphinx listen) whose phone sends the bot's
// own voice back 120 ms later at -6 dB (a loud speakerphone) and says nothing itself. With the
// agent's echo cancellation at its default (auto: on for a phone line) the bot is never cut off
// by its own voice (a few pauses it resumes from at most); with it 'off', the same line cuts the bot off, which shows
// the echo this test sends is one the VAD takes for a caller.
import { assert, assertEquals } from "./helpers/assert.ts";
import { type LogEntry, startCallService } from "./helpers/call_harness.ts";
import { assertSippPassed, freeUdpPort } from "./helpers/sipp.ts";
import { echoCall, EchoingPhone } from "./helpers/echoing_phone.ts";
import { createBrain } from "../sdk/brain/mod.ts";

const GREETING = "Hello, you have reached the hotel desk. We have rooms near the airport, " +
  "near the station and in the old town, and all of them have breakfast included. " +
  "Tell me which one you would like and for how many nights.";

/** Events that mean the bot heard something over itself: paused, or cut off. */
const selfInterruptions = (log: LogEntry[]) =>
  log.filter((e) => e.source === "worker" && ["bot_paused", "barge_in"].includes(e.kind));

async function echoingCall(echoCancellation: "auto" | "off") {
  const brain = createBrain({ onSessionStart: () => GREETING, onTurn: () => "Certainly." });
  const sipPort = await freeUdpPort();
  const service = await startCallService(brain, { workerEnv: { SIP_PORT: String(sipPort) } });
  const phone = await EchoingPhone.open({ delayMs: 120, gainDb: -6 });
  try {
    const set = await service.api.admin("/api/v1/agents.update", {
      agent_id: service.tenant.agent_id,
      echo_cancellation: echoCancellation,
    });
    assertEquals(set.status, 200);
    const { sessionId, done } = await echoCall(service, sipPort, phone, 11_000);
    assertSippPassed(await done);
    const record = await service.record(sessionId, "ended", 20_000);
    return { log: record.log as LogEntry[], received: phone.received.length };
  } finally {
    await phone.close();
    await service.close();
  }
}

Deno.test("a phone caller whose line echoes the bot back never makes the bot interrupt itself", async () => {
  const { log, received } = await echoingCall("auto");
  assert(received > 400, `the phone heard only ${received} packets`);
  const echo = log.find((e) => e.kind === "echo_cancellation");
  assertEquals(echo?.data, { setting: "auto", on: true });
  // Never cut off by its own voice. A few pauses the filter let through while it learnt the line
  // (the bot resumes at once) are tolerated: on CI's busy host two came in one call, where the
  // bench's quiet runs show none (docs/echo.md); with the canceller off the same line pauses the
  // bot 17-25 times a call and cuts it off (the test below).
  const heard = selfInterruptions(log);
  assertEquals(heard.filter((e) => e.kind === "barge_in"), [], JSON.stringify(heard));
  assert(heard.length <= 3, `the bot paused for its own voice ${heard.length} times`);
  const cancelled = log.find((e) => e.kind === "echo_cancelled");
  assert(cancelled && cancelled.data.frames > 400, JSON.stringify(cancelled));
});

Deno.test("with echo cancellation off the same echoing line makes the bot interrupt itself", async () => {
  const { log } = await echoingCall("off");
  assertEquals(log.find((e) => e.kind === "echo_cancellation")?.data, {
    setting: "off",
    on: false,
  });
  // What the canceller prevents: the bot cut off by its own voice, and more pauses than it allows.
  const heard = selfInterruptions(log);
  assert(
    heard.some((e) => e.kind === "barge_in") && heard.length > 3,
    `the echo did not cut the bot off (${JSON.stringify(heard)}): the test proves nothing`,
  );
});
