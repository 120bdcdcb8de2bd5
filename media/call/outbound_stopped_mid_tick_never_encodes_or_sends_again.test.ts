// A call can end inside its own outbound tick: the speaker's last frame completes its unit, the
// conversation goes idle, and a brain that had asked to end the call ends it there (Call.end stops
// the outbound and closes its encoder). The tick must then encode and send nothing: before, it
// encoded that last frame with the closed encoder ("pacer tick failed: Error: OpusEncoder is
// closed" at the end of every call the brain ended) or, with no encoder yet, made a new one that
// was never closed and sent a packet after the call had ended.
import assert from "node:assert/strict";
import { OpusRtpSender } from "../rtc/rtp_sender.ts";
import { OutboundAudio } from "./outbound.ts";
import { RecordingSink } from "../../tests/helpers/rtp_sink.ts";

const tone = Int16Array.from({ length: 960 }, (_, i) => 8000 * Math.sin(i / 5));
const frames = (n: number) => new Promise((r) => setTimeout(r, 20 * n));

/** An outbound whose source stops it while giving frame `stopAt` (1-based). */
async function stoppedBy(stopAt: number) {
  const sink = new RecordingSink();
  const tx = new OpusRtpSender(sink);
  const errors: unknown[] = [];
  const out = new OutboundAudio(() => tx, { onError: (e) => errors.push(e) });
  let asked = 0;
  out.source = {
    next: () => {
      if (++asked === stopAt) out.stop();
      return tone;
    },
  };
  out.start();
  while (asked < stopAt) await frames(1);
  await frames(5); // ticks that would come after the stop, had it not taken

  return { sent: sink.packets.length, asked, errors, voiced: out.voiced };
}

Deno.test("an outbound stopped by its source mid-tick never encodes after closing its encoder", async () => {
  const r = await stoppedBy(3);
  assert.deepEqual(r.errors, []);
  assert.deepEqual([r.sent, r.voiced, r.asked], [2, 2, 3], "two frames out, none after the stop");
});

Deno.test("an outbound stopped by its source before any frame went out sends nothing", async () => {
  const r = await stoppedBy(1);
  assert.deepEqual(r.errors, []);
  assert.deepEqual([r.sent, r.voiced, r.asked], [0, 0, 1]);
});

Deno.test("a stopped outbound does not start again", async () => {
  const sink = new RecordingSink();
  const out = new OutboundAudio(() => new OpusRtpSender(sink));
  out.stop();
  out.start();
  await frames(4);
  assert.equal(sink.packets.length, 0);
});
