// In-band keys on a carrier's media stream (the FAKE Exotel stream of tests/fakes,
// into the in-process worker): a caller whose network sends keys as tones in the audio, not as
// dtmf messages, is heard as one key per press, marked via tone in the record.
import { assertEquals } from "./helpers/assert.ts";
import {
  loudFrames,
  type Provider,
  startStreamCallRig,
  until,
} from "./helpers/stream_phone_call.ts";
import { dialTones } from "./helpers/dtmf_audio.ts";
import type { LogEntry } from "./helpers/call_harness.ts";

// Exotel, the Indian carrier (its stream is 16-bit linear PCM); the others decode to the same frames.
for (const provider of ["exotel"] as Provider[]) {
  Deno.test({
    name: `keys sent as tones on ${provider}'s media stream reach the brain once each`,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      const rig = await startStreamCallRig();
      try {
        const { stream } = await rig.dial(provider);
        const sessionId = new URL(stream.socket.url).pathname.split("/").pop()!;
        await until(() => loudFrames(stream) > 10, "the greeting");
        // The fakes speak 8 kHz on the wire (μ-law or 16-bit linear, as each provider does).
        await stream.say(dialTones("369*", 80, 80));
        await until(() => rig.brain.digits.length >= 4, "the keys at the brain");
        await new Promise((r) => setTimeout(r, 300));
        assertEquals(rig.brain.digits.map((d) => d.digit).join(""), "369*");
        await stream.hangUp();
        const record = await rig.service.record(sessionId, "ended");
        const rows = record.log.filter((e: LogEntry) => e.source === "phone" && e.kind === "dtmf");
        assertEquals(rows.map((e: LogEntry) => `${e.data.digit}:${e.data.via}`), [
          "3:tone",
          "6:tone",
          "9:tone",
          "*:tone",
        ]);
      } finally {
        await rig.close();
      }
    },
  });
}
