import { assertEquals } from "../../tests/helpers/assert.ts";
import { CallRecording, RECORDING_RATE } from "./recording.ts";

Deno.test("the recording is a 16 kHz two-channel WAV with the caller left and the bot right", async () => {
  const dir = await Deno.makeTempDir();
  const rec = new CallRecording(`${dir}/sub/call.wav`);
  const caller = new Int16Array(320).fill(1200);
  const bot = new Int16Array(960).fill(-3000);
  for (let i = 0; i < 100; i++) {
    if (i < 50) rec.pushCaller(caller);
    rec.tick(i >= 50 ? bot : undefined);
  }
  assertEquals(await rec.close(), 2);
  const bytes = await Deno.readFile(`${dir}/sub/call.wav`);
  const v = new DataView(bytes.buffer);
  assertEquals(new TextDecoder().decode(bytes.subarray(0, 4)), "RIFF");
  assertEquals(v.getUint16(22, true), 2);
  assertEquals(v.getUint32(24, true), RECORDING_RATE);
  assertEquals(v.getUint32(40, true), bytes.length - 44);
  const frame = (n: number, ch: number) => v.getInt16(44 + (n * 320 + 10) * 4 + ch * 2, true);
  assertEquals([frame(10, 0), frame(10, 1)], [1200, 0]);
  assertEquals([frame(70, 0), frame(70, 1)], [0, -3000]);
  await Deno.remove(dir, { recursive: true });
});
