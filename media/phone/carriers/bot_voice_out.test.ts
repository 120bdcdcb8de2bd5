import { assertEquals } from "../../../tests/helpers/assert.ts";
import { BotVoiceOut } from "./bot_voice_out.ts";
import { twilioDialect } from "./twilio/dialect.ts";
import { exotelDialect } from "./exotel/dialect.ts";
import { plivoDialect } from "./plivo/dialect.ts";
import type { LineFormat, StreamDialect } from "./dialect.ts";

/** A 440 Hz tone at 48 kHz for `frames` 20 ms frames, then nothing. */
function tone(frames: number) {
  let n = 0;
  return {
    next() {
      if (n >= frames) return undefined;
      const f = Int16Array.from(
        { length: 960 },
        (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * (n * 960 + i)) / 48000)),
      );
      n++;
      return f;
    },
  };
}

function run(dialect: StreamDialect, frames: number, ticks: number, format?: LineFormat) {
  const sent: { bytes: number; frames: number }[] = [];
  const marks: string[] = [];
  const out = new BotVoiceOut(
    dialect,
    (payload, n) => sent.push({ bytes: Uint8Array.fromBase64(payload).length, frames: n }),
    (name) => marks.push(name),
    format,
  );
  out.source = tone(frames);
  for (let i = 0; i < ticks; i++) out.tick();
  out.close();
  return { sent, marks };
}

Deno.test("Twilio: one 20 ms μ-law message per frame while the bot speaks, the filter's tail, a mark, then nothing", () => {
  const { sent, marks } = run(twilioDialect, 5, 50);
  assertEquals(sent, Array(7).fill({ bytes: 160, frames: 1 }));
  assertEquals(marks, ["bot-1"]);
});

Deno.test("Exotel: 16-bit PCM in 3,200-byte messages; the last one topped up with silence", () => {
  const { sent, marks } = run(exotelDialect, 13, 50);
  // 13 frames and 2 of tail: one full message, then 5 frames padded to 10.
  assertEquals(sent, [{ bytes: 3200, frames: 10 }, { bytes: 3200, frames: 10 }]);
  assertEquals(marks, ["bot-1"]);
});

Deno.test("nothing is sent while nothing speaks", () => {
  const { sent, marks } = run(twilioDialect, 0, 50);
  assertEquals(sent, []);
  assertEquals(marks, []);
});

Deno.test("Plivo L16 at 16 kHz: one 640-byte message (320 samples) per frame, then the tail and a mark", () => {
  const { sent, marks } = run(plivoDialect, 5, 50, { audio: "slin16", rate: 16000 });
  assertEquals(sent, Array(7).fill({ bytes: 640, frames: 1 }));
  assertEquals(marks, ["bot-1"]);
});
