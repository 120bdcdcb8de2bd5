// A whole phone call per telephony provider, through the service as the provider would place it:
// the FAKE provider (tests/fakes/, following and citing each provider's documentation) POSTs
// (or GETs) the service's webhook, dials the worker's stream URL it is answered with, and speaks
// the provider's messages in real time with festival speech at 8 kHz. The greeting arrives as
// the provider's media, the caller's turn and key press reach the brain (SessionStart.phone names
// the carrier), speaking over the bot makes the worker send the provider's clear, and the
// provider's stop (or, for Plivo, the socket closing) ends the call `caller_hung_up`.
import { assert, assertEquals } from "./helpers/assert.ts";
import {
  loudFrames,
  phoneSpeech,
  type Provider,
  startStreamCallRig,
  until,
} from "./helpers/stream_phone_call.ts";

const NUMBERS: Record<Provider, { from: string; to: string }> = {
  twilio: { from: "+14155550100", to: "+14155550199" },
  // The dialled number as the session has it: E.164 (Plivo's digits, Exotel's national form).
  plivo: { from: "919876543210", to: "+918041234567" },
  exotel: { from: "09876543210", to: "+918041234567" },
};

for (const provider of ["twilio", "plivo", "exotel"] as const) {
  Deno.test({
    name: `${provider}: the greeting plays, a turn and a key reach the brain, ` +
      "barge-in clears the provider's queue, hanging up ends it caller_hung_up",
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      const rig = await startStreamCallRig();
      try {
        const { stream, callId, offProtocol } = await rig.dial(provider);
        const sessionId = new URL(stream.socket.url).pathname.split("/").pop()!;
        await until(() => loudFrames(stream) > 25, "half a second of the greeting");
        const phone = rig.brain.sessions[0].phone!;
        assertEquals(phone.carrier, provider);
        assertEquals({ from: phone.from, to: phone.to }, NUMBERS[provider]);
        assertEquals(phone.callId, callId);
        // The greeting's end is marked, and the provider says when it has played it.
        await until(() => stream.marksPlayed.length >= 1, "the greeting's mark played");

        await stream.say(await phoneSpeech("hello there"));
        await until(() => rig.brain.turns.length >= 1, "the caller's turn at the brain");
        assert(rig.brain.turns[0].length > 0, "the turn has words");

        stream.pressKey("5");
        await until(() => rig.brain.digits.some((d) => d.digit === "5"), "the key at the brain");

        await until(() => stream.marksPlayed.length >= 2, "the answer played");
        await stream.say(await phoneSpeech("please tell me a long story"));
        const asked = performance.now();
        await until(() => loudFrames(stream, asked) > 50, "a second of the story");
        assertEquals(stream.clears.length, 0);
        await stream.say(await phoneSpeech("stop stop wait a moment please"));
        await until(() => stream.clears.length > 0, "the worker's clear on barge-in");

        await stream.hangUp();
        const record = await rig.service.record(sessionId, "ended");
        assertEquals(record.end_reason, "caller_hung_up");
        // Everything the worker sent was the provider's protocol.
        assertEquals(stream.unreadable, []);
        assertEquals(offProtocol(), 0);
      } finally {
        await rig.close();
      }
    },
  });
}

Deno.test({
  name: "plivo with L16 at 16 kHz: the greeting plays as L16 16 kHz playAudio, a wideband turn " +
    "reaches the brain, hanging up ends it caller_hung_up",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const rig = await startStreamCallRig({ plivoContentType: "audio/x-l16;rate=16000" });
    try {
      const { stream } = await rig.dial("plivo");
      const sessionId = new URL(stream.socket.url).pathname.split("/").pop()!;
      await until(() => loudFrames(stream) > 25, "half a second of the greeting");
      // Every bot message is L16 at 16 kHz: 20 ms is 320 samples, 640 bytes.
      const plays = stream.received.filter((m) => m.event === "playAudio");
      assert(plays.length > 25, `${plays.length} playAudio messages`);
      for (const m of plays) {
        const media = m.media as { contentType: string; sampleRate: number; payload: string };
        assertEquals([media.contentType, media.sampleRate], ["audio/x-l16", 16000]);
        assertEquals(Uint8Array.fromBase64(media.payload).length, 640);
      }
      await until(() => stream.marksPlayed.length >= 1, "the greeting's mark played");
      await stream.say(await phoneSpeech("hello there", 16000));
      await until(() => rig.brain.turns.length >= 1, "the caller's turn at the brain");
      assert(rig.brain.turns[0].length > 0, "the turn has words");
      await stream.hangUp();
      const record = await rig.service.record(sessionId, "ended");
      assertEquals(record.end_reason, "caller_hung_up");
      assertEquals(stream.unreadable, []);
    } finally {
      await rig.close();
    }
  },
});
