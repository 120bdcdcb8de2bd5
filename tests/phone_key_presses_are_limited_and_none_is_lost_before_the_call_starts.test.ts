// Key presses on a phone call go through one limiter, whatever carries them (media/call/
// key_presses.ts: 20 a second, a burst of 20, as web calls' RTVI messages): 500 dtmf events
// in a fraction of a second from a provider's stream reach the brain as at most the burst plus
// the rate over the time they took, the record gets a row per key that passed and a
// phone/dtmf_dropped note, not 1,000 rows. A key pressed at once, while the session token is
// still being checked and before the brain is up, reaches the brain first instead of being lost.
// A whole call through the FAKE Twilio media stream (tests/fakes/) into the in-process worker.
import { assert, assertEquals } from "./helpers/assert.ts";
import { loudFrames, startStreamCallRig, until } from "./helpers/stream_phone_call.ts";
import { KEY_PRESS_LIMIT } from "../media/call/key_presses.ts";
import type { LogEntry } from "./helpers/call_harness.ts";

Deno.test({
  name:
    "500 key presses in a burst reach the brain limited; a key pressed before the call started is not lost",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const rig = await startStreamCallRig();
    try {
      const { stream } = await rig.dial("twilio");
      stream.pressKey("1"); // right after the start message: the token is still being checked
      const sessionId = new URL(stream.socket.url).pathname.split("/").pop()!;
      await until(() => loudFrames(stream) > 10, "the greeting");
      await until(() => rig.brain.digits.length >= 1, "the early key at the brain");
      assertEquals(rig.brain.digits[0].digit, "1");

      const first = performance.now();
      for (let i = 0; i < 500; i++) {
        stream.pressKey("2");
        if (i % 50 === 49) await new Promise((r) => setTimeout(r, 10));
      }
      const seconds = (performance.now() - first) / 1000;
      // The limiter's own bound for the time the presses took, with a second of slack for them to
      // be read later than they were sent.
      const bound = KEY_PRESS_LIMIT.burst + KEY_PRESS_LIMIT.perSecond * (seconds + 1);
      await new Promise((r) => setTimeout(r, 1500));
      const twos = rig.brain.digits.filter((d) => d.digit === "2").length;
      assert(twos > 0, "no key of the burst reached the brain");
      assert(
        twos <= bound,
        `${twos} of 500 keys reached the brain in ${seconds} s (bound ${bound})`,
      );

      await stream.hangUp();
      const record = await rig.service.record(sessionId, "ended");
      const of = (source: string, kind: string) =>
        record.log.filter((e: LogEntry) => e.source === source && e.kind === kind);
      assertEquals(of("phone", "dtmf").length, twos + 1);
      assertEquals(of("to_brain", "dtmf").length, twos + 1);
      const dropped = of("phone", "dtmf_dropped");
      assert(dropped.length >= 1, "no phone/dtmf_dropped note");
      // deno-lint-ignore no-explicit-any
      assertEquals(dropped.reduce((n: number, e: any) => n + e.data.count, 0), 500 - twos);
      console.log(
        JSON.stringify({ pressed: 500, seconds, reached_brain: twos, notes: dropped.length }),
      );
    } finally {
      await rig.close();
    }
  },
});
