// Keys a trunk sends as DTMF tones in the caller's audio, on a real SIP call (SIPp signalling, a
// UDP phone sending μ-law), pressed while the bot is still speaking its greeting: each reaches
// the brain once (a key sent both as a tone and as an RFC 4733 event, as some gateways do, once
// too), the bot is not cut off, and the recogniser never hears the tones as words. The tones'
// frames are silenced before the VAD: Silero v5 rates a steady DTMF pair near 0 (a held key
// included), so the VAD alone would rarely start a turn on one, but inside a caller's turn the
// recogniser hears whatever the line carries, and a recording would keep the tones (a PIN typed
// on the keypad could be decoded from it): the recording's caller channel shows the silencing.
import { assert, assertEquals } from "./helpers/assert.ts";
import { assertSippPassed } from "./helpers/sipp.ts";
import { keypadCall, ulaw, until } from "./helpers/keypad_call.ts";
import { dialTones, dtmfTone } from "./helpers/dtmf_audio.ts";
import type { LogEntry } from "./helpers/call_harness.ts";
import { DtmfTones } from "../media/phone/dtmf_tones.ts";

const GREETING = "Welcome to the hotel desk. To check a booking, please enter your booking " +
  "number on your keypad, followed by the hash key. To speak to someone, stay on the line.";

Deno.test({
  name:
    "keys sent as tones reach the brain once each and never barge in on the bot or reach the recogniser",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const call = await keypadCall({ greeting: GREETING, record: true });
    try {
      const { caller, seen } = call;
      // Over the greeting: 2580 as tones (-10 dBm0, a handset's level), 7 as a tone and then as
      // its RFC 4733 event, then # as a tone, which ends the call.
      await new Promise((r) => setTimeout(r, 1500));
      await caller.say(ulaw(dialTones("258", 100, 100)));
      await caller.say(ulaw(dialTones("0", 1200, 100))); // a key held down for over a second
      await caller.say(ulaw(dtmfTone("7", 100)));
      await caller.press("7", 101, 100);
      await caller.say(ulaw(dialTones("#", 100, 200)));
      assertSippPassed(await call.sipp);
      await until("the #", () => seen.digits.includes("#"));
      assertEquals(seen.digits.join(""), "25807#");
      assertEquals(seen.turns, []);
      const record = await call.service.record(call.sessionId, "ended", 20_000);
      const of = (kind: string) => record.log.filter((e: LogEntry) => e.kind === kind);
      // The bot was never cut off, the VAD never started a caller's turn, no words were heard.
      for (const kind of ["barge_in", "user-started-speaking", "user-transcription", "user_turn"]) {
        assertEquals(of(kind).length, 0, `${kind}: ${JSON.stringify(of(kind))}`);
      }
      const phoneRows = record.log.filter((e: LogEntry) =>
        e.source === "phone" && e.kind === "dtmf"
      );
      assertEquals(phoneRows.map((e: LogEntry) => e.data.digit).join(""), "25807#");
      // 7's row is whichever form came first (the event, here: the tone ends only once audio
      // follows the event); the other form was counted as a duplicate, not written.
      const tones = phoneRows.filter((e: LogEntry) => e.data.via === "tone").length;
      assert(tones === 5 || tones === 6, `${tones} rows via tone`);
      const line = of("line")[0].data;
      assertEquals([line.toneDigits, line.dtmfDuplicates], [6, 1]);
      assert(line.toneMutedFrames >= 30, JSON.stringify(line));
      // The recording's caller channel (16 kHz stereo, caller left) holds no key a receiver hears.
      const wav = await Deno.readFile(new URL(record.recording.url));
      const pcm = new Int16Array(wav.buffer, 44, (wav.length - 44) >> 1);
      const left = pcm.filter((_, i) => i % 2 === 0);
      let recorded = "";
      const receiver = new DtmfTones((d) => (recorded += d.digit));
      for (let at = 0; at + 320 <= left.length; at += 320) receiver.hear(left.slice(at, at + 320));
      receiver.close();
      assertEquals(recorded, "", "keys are audible on the recording");
      console.log(JSON.stringify({ muted_frames: line.toneMutedFrames, tones: line.toneDigits }));
    } finally {
      await call.close();
    }
  },
});
