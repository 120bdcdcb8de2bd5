// The stream phone line on its own, over a real WebSocket: a provider-side socket in the test
// sends Twilio's messages by hand (chunks of uneven size, a gap in the timestamps), and the line
// gives one 16 kHz frame per 20 ms of the caller's time, the key presses, the clear, and the
// end (stop → caller_hung_up; silence on the socket → media_timeout).
import { assert, assertEquals } from "../../../tests/helpers/assert.ts";
import { g711Encode } from "../g711.ts";
import type { LineEndReason } from "../line.ts";
import { type CallControl, StreamPhoneLine } from "./stream_line.ts";
import { twilioDialect } from "./twilio/dialect.ts";
import { plivoDialect } from "./plivo/dialect.ts";

interface Rig {
  line: StreamPhoneLine;
  provider: WebSocket;
  fromLine: Record<string, unknown>[];
  frames: Int16Array[];
  ended: Promise<LineEndReason>;
  close(): Promise<void>;
}

async function rig(
  mediaTimeoutMs = 10_000,
  control?: CallControl,
): Promise<Rig> {
  const ac = new AbortController();
  let resolveLine!: (l: StreamPhoneLine) => void;
  const made = new Promise<StreamPhoneLine>((r) => (resolveLine = r));
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    (req) => {
      const { socket, response } = Deno.upgradeWebSocket(req);
      const line = new StreamPhoneLine(socket, twilioDialect, { mediaTimeoutMs, control });
      line.started.then(() => line.accept({ from: "+14155550100", to: "+14155550199" }));
      resolveLine(line);
      return response;
    },
  );
  const provider = new WebSocket(`ws://127.0.0.1:${server.addr.port}/`);
  const fromLine: Record<string, unknown>[] = [];
  provider.onmessage = (e) => fromLine.push(JSON.parse(e.data));
  await new Promise((r) => (provider.onopen = r));
  const send = (m: unknown) => provider.send(JSON.stringify(m));
  send({ event: "connected", protocol: "Call", version: "1.0.0" });
  send({
    event: "start",
    sequenceNumber: "1",
    start: {
      streamSid: "MZ1",
      callSid: "CA1",
      accountSid: "AC1",
      tracks: ["inbound"],
      customParameters: {},
      mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
    },
    streamSid: "MZ1",
  });
  const line = await made;
  await line.started;
  const frames: Int16Array[] = [];
  line.onCallerFrame.on((f) => frames.push(f));
  const ended = line.onEnded.once().then(([r]) => r);
  return {
    line,
    provider,
    fromLine,
    frames,
    ended,
    async close() {
      if (provider.readyState === WebSocket.OPEN) provider.close();
      await line.hangUp();
      ac.abort();
      await server.finished;
    },
  };
}

const media = (samples: number, timestampMs: number, level = 1000) => ({
  event: "media",
  streamSid: "MZ1",
  media: {
    track: "inbound",
    chunk: "1",
    timestamp: String(timestampMs),
    payload: g711Encode("PCMU", new Int16Array(samples).fill(level)).toBase64(),
  },
});

const settle = () => new Promise((r) => setTimeout(r, 100));

Deno.test("uneven chunks and a gap in the stamps come out as one 16 kHz frame per 20 ms of caller time", async () => {
  const r = await rig();
  try {
    assertEquals([r.line.carrier, r.line.callId, r.line.from], ["twilio", "CA1", "+14155550100"]);
    // 0-40 ms as one chunk, 40-50 and 50-60 as halves, then 60-120 ms never came.
    r.provider.send(JSON.stringify(media(320, 0)));
    r.provider.send(JSON.stringify(media(80, 40)));
    r.provider.send(JSON.stringify(media(80, 50)));
    r.provider.send(JSON.stringify(media(160, 120)));
    await settle();
    assertEquals(r.frames.length, 7); // 140 ms
    assert(r.frames.every((f) => f.length === 320));
    const stats = r.line.stats();
    assertEquals(stats.concealed_frames, 3);
    assertEquals(stats.caller_frames, 7);
  } finally {
    await r.close();
  }
});

Deno.test("a key press reaches onDtmf; a non-key is ignored; clear() sends Twilio's clear", async () => {
  const r = await rig();
  try {
    const digits: string[] = [];
    r.line.onDtmf.on((d) => digits.push(d.digit));
    for (const digit of ["7", "x", "#"]) {
      r.provider.send(JSON.stringify({
        event: "dtmf",
        streamSid: "MZ1",
        sequenceNumber: "5",
        dtmf: { track: "inbound_track", digit },
      }));
    }
    r.line.clear();
    await settle();
    assertEquals(digits, ["7", "#"]);
    assertEquals(r.fromLine, [{ event: "clear", streamSid: "MZ1" }]);
  } finally {
    await r.close();
  }
});

Deno.test("Twilio's stop ends the line caller_hung_up and the line closes the socket", async () => {
  const r = await rig();
  try {
    const closed = new Promise<number>((res) => (r.provider.onclose = (e) => res(e.code)));
    r.provider.send(JSON.stringify({ event: "stop", streamSid: "MZ1", stop: {} }));
    assertEquals(await r.ended, "caller_hung_up");
    assertEquals(await closed, 1000);
  } finally {
    await r.close();
  }
});

Deno.test("a transfer whose stream stops before the provider's REST answer ends the line transferred", async () => {
  let answer!: (ok: boolean) => void;
  const control = {
    hangUp: () => Promise.resolve("200"),
    // The provider runs the new instructions (and stops the stream) before it answers the update.
    transfer: () =>
      new Promise<{ ok: boolean; detail: string }>((
        res,
      ) => (answer = (ok) => res({ ok, detail: "" }))),
  };
  const r = await rig(10_000, control);
  try {
    const result = r.line.transfer("+14155550123");
    r.provider.send(JSON.stringify({ event: "stop", streamSid: "MZ1", stop: {} }));
    await settle();
    answer(true);
    assertEquals((await result).ok, true);
    assertEquals(await r.ended, "transferred");
  } finally {
    await r.close();
  }
});

Deno.test("a stream that goes silent ends the line media_timeout", async () => {
  const r = await rig(300);
  try {
    assertEquals(await r.ended, "media_timeout");
  } finally {
    await r.close();
  }
});

Deno.test("a Plivo stream in L16 at 16 kHz: caller samples pass through unresampled, the line is wideband, the bot's audio goes out as L16 16 kHz", async () => {
  const ac = new AbortController();
  let resolveLine!: (l: StreamPhoneLine) => void;
  const made = new Promise<StreamPhoneLine>((r) => (resolveLine = r));
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    (req) => {
      const { socket, response } = Deno.upgradeWebSocket(req);
      const line = new StreamPhoneLine(socket, plivoDialect);
      line.started.then(() => line.accept());
      resolveLine(line);
      return response;
    },
  );
  const provider = new WebSocket(`ws://127.0.0.1:${server.addr.port}/`);
  const fromLine: Record<string, unknown>[] = [];
  provider.onmessage = (e) => fromLine.push(JSON.parse(e.data));
  await new Promise((r) => (provider.onopen = r));
  const send = (m: unknown) => provider.send(JSON.stringify(m));
  send({
    event: "start",
    start: {
      callId: "c1",
      streamId: "s1",
      tracks: ["inbound"],
      mediaFormat: { encoding: "audio/x-l16", sampleRate: 16000 },
    },
  });
  const line = await made;
  await line.started;
  assertEquals(line.format, { audio: "slin16", rate: 16000 });
  assertEquals(line.channel, "wideband");
  const frames: Int16Array[] = [];
  line.onCallerFrame.on((f) => frames.push(f.slice()));
  // 20 ms at 16 kHz, little-endian: a ramp that must arrive sample for sample.
  const samples = Int16Array.from({ length: 320 }, (_, i) => i * 50 - 8000);
  const bytes = new Uint8Array(640);
  samples.forEach((v, i) => new DataView(bytes.buffer).setInt16(i * 2, v, true));
  send({
    event: "media",
    media: { track: "inbound", timestamp: "1000", payload: bytes.toBase64() },
  });
  const tone = Int16Array.from({ length: 960 }, (_, i) => Math.round(8000 * Math.sin(i / 10)));
  let n = 0;
  line.play({ next: () => (n++ < 3 ? tone : undefined) });
  const deadline = Date.now() + 5000;
  while (
    (frames.length < 1 || !fromLine.some((m) => m.event === "checkpoint")) && Date.now() < deadline
  ) {
    await new Promise((r) => setTimeout(r, 20));
  }
  assertEquals(frames.length, 1);
  assertEquals([...frames[0]], [...samples]);
  const plays = fromLine.filter((m) => m.event === "playAudio");
  assert(plays.length >= 3, `${plays.length} playAudio`);
  for (const m of plays) {
    const media = m.media as { contentType: string; sampleRate: number; payload: string };
    assertEquals([media.contentType, media.sampleRate], ["audio/x-l16", 16000]);
    assertEquals(Uint8Array.fromBase64(media.payload).length, 640);
  }
  provider.close();
  await line.hangUp();
  ac.abort();
  await server.finished;
});
