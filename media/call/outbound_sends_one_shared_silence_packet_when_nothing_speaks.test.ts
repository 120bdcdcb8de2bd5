import assert from "node:assert/strict";
import { OPUS_SILENCE_20MS, OpusDecoder } from "../../wasm/opus.ts";
import { OpusRtpSender } from "../rtc/rtp_sender.ts";
import { OutboundAudio } from "./outbound.ts";
import { RecordingSink } from "../../tests/helpers/rtp_sink.ts";

Deno.test("with nothing to say, outbound sends the one silence packet, shared, never encoded", async () => {
  const sink = new RecordingSink();
  const tx = new OpusRtpSender(sink);
  const out = new OutboundAudio(() => tx);
  let asked = 0;
  // Speaks one frame of a tone after two silent ones, then is quiet again.
  out.source = {
    next: () => {
      asked++;
      return asked === 3
        ? Int16Array.from({ length: 960 }, (_, i) => 8000 * Math.sin(i / 5))
        : undefined;
    },
  };
  out.start();
  await sink.received(6);
  out.stop();
  const payloads = sink.packets.map((p) => p.payload);
  const silent = payloads.filter((_, i) => i !== 2);
  for (const p of silent) {
    assert.deepEqual([...p], [...OPUS_SILENCE_20MS]);
    assert.equal(p.buffer, OPUS_SILENCE_20MS.buffer, "the constant itself, not a copy");
  }
  assert.notEqual(payloads[2].buffer, OPUS_SILENCE_20MS.buffer);
  assert.equal(out.voiced, 1);
  // And what the page hears for it: 20 ms of digital silence.
  const dec = new OpusDecoder({ sampleRate: 48000 });
  assert.ok(dec.decode(silent[0]).every((s) => s === 0));
  assert.ok(dec.decode(payloads[2]).some((s) => s !== 0));
  dec.close();
});
