// When the event loop stalls, the pacer skips the frames it missed; those frames still pass in
// the call's time (the RTP clock advances over them), so the tap — the recording — must see
// them too, as silence. Before, a recording of a call on a busy worker came out seconds short
// of the call (bench/media/network.ts measured 34.6 s of recording for a 50.0 s call).
import assert from "node:assert/strict";
import { FrameClock } from "../audio/frame_clock.ts";
import { OpusRtpSender } from "../rtc/rtp_sender.ts";
import { OutboundAudio } from "./outbound.ts";
import { RecordingSink } from "../../tests/helpers/rtp_sink.ts";

Deno.test("the tap sees every frame of the call's time, skipped ones as silence", async () => {
  const sink = new RecordingSink();
  const tx = new OpusRtpSender(sink);
  const out = new OutboundAudio(() => tx, { clock: new FrameClock() });
  const tapped: (Int16Array | undefined)[] = [];
  out.tap = (pcm) => tapped.push(pcm);
  out.source = { next: () => new Int16Array(960).fill(1000) };
  out.start();
  await sink.received(3);
  // Stall the event loop for 300 ms: far more than the clock's 3 frames of catch-up.
  const until = performance.now() + 300;
  while (performance.now() < until) { /* busy */ }
  await sink.received(sink.packets.length + 3);
  out.stop();
  assert.ok(out.stats.skipped > 0, "the pacer skipped frames");
  const ts = sink.packets.map((p) => p.header.timestamp);
  const frames = (ts.at(-1)! - ts[0]) / 960 + 1;
  assert.equal(tapped.length, frames, "one tap per frame of the RTP clock");
  assert.equal(tapped.filter((p) => p === undefined).length, out.stats.skipped);
});
