// How the Sarvam adapter words its failures, against the fake streaming endpoint
// (https://docs.sarvam.ai/api-reference-docs/text-to-speech/stream; error codes from
// https://docs.sarvam.ai/api/errors-troubleshooting): the handshake's refusal, error frames, its
// timeouts. Drops, aborts and closing, as every provider owes them, are tests/conformance/tts.ts.
import assert from "node:assert/strict";
import { startFakeSarvamTts } from "../../../tests/fakes/sarvam_tts.ts";
import { type SynthesisChunk, SynthesisError } from "../../tts/engine.ts";
import { SarvamSynthesisEngine } from "./tts.ts";
import { drain, waitFor } from "../../../tests/helpers/streams.ts";

const TEXT = "नमस्ते, आज मौसम बहुत अच्छा है। कल बारिश होगी।";
const HI = { voice: "VOICE_ANANYA", language: "LANGUAGE_HI" };

Deno.test("a wrong key: the handshake's 403, said as such, without the key", async () => {
  const fake = startFakeSarvamTts({ apiKey: "test-key" });
  const engine = new SarvamSynthesisEngine({ apiKey: "wrong-secret-key", url: fake.url });
  try {
    const { chunks, error } = await drain(engine.synthesize(TEXT, HI));
    assert.deepEqual(chunks, []);
    assert.ok(error instanceof SynthesisError, String(error));
    assert.match(error.message, /HTTP 403/);
    assert.match(error.message, /API key was not accepted/);
    assert.ok(!error.message.includes("wrong-secret-key"));
    assert.equal(fake.received.length, 1);
    assert.deepEqual(fake.received[0].messages, []);
  } finally {
    await engine.close();
    await fake.close();
  }
});

Deno.test("an error frame mid-unit fails it with the provider's code", async () => {
  const fake = startFakeSarvamTts({ errorAfterChunks: 2 });
  const engine = new SarvamSynthesisEngine({ apiKey: "test-key", url: fake.url });
  try {
    const { chunks, error } = await drain(engine.synthesize(TEXT, HI));
    assert.ok(error instanceof SynthesisError, String(error));
    assert.equal(error.message, "Sarvam error internal_server_error: Synthesis failed on the fake");
    assert.equal(chunks.length, 2); // the audio before the error was delivered
    await waitFor(() => fake.received[0].closed !== null, "the socket to close");
    assert.equal(fake.received[0].closed!.by, "client");
  } finally {
    await engine.close();
    await fake.close();
  }
});

Deno.test("a provider silent for longer than the read timeout fails the unit", async () => {
  const fake = startFakeSarvamTts({ firstByteDelayMs: 1500 });
  const engine = new SarvamSynthesisEngine({
    apiKey: "test-key",
    url: fake.url,
    readTimeoutMs: 200,
  });
  try {
    const started = Date.now();
    const { error } = await drain(engine.synthesize(TEXT, HI));
    const took = Date.now() - started;
    assert.ok(error instanceof SynthesisError, String(error));
    assert.equal(error.message, "Sarvam sent nothing for 200 ms");
    assert.ok(took < 1000, `failed after ${took} ms`);
  } finally {
    await engine.close();
    await fake.close();
  }
});

Deno.test("a server that never completes the handshake hits the connect timeout", async () => {
  // Accepts TCP and says nothing: a WebSocket handshake that never ends.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const c of listener) held.push(c);
  })().catch(() => {});
  const port = (listener.addr as Deno.NetAddr).port;
  const engine = new SarvamSynthesisEngine({
    apiKey: "test-key",
    url: `ws://127.0.0.1:${port}`,
    connectTimeoutMs: 200,
  });
  try {
    const started = Date.now();
    const { error } = await drain(engine.synthesize(TEXT, HI));
    assert.ok(error instanceof SynthesisError, String(error));
    assert.equal(error.message, "could not connect to Sarvam in 200 ms");
    assert.ok(Date.now() - started < 1000);
  } finally {
    await engine.close();
    listener.close();
    for (const c of held) c.close();
    await accepting;
  }
});

Deno.test("a slow consumer is not a slow provider: no read timeout once the unit is in", async () => {
  const fake = startFakeSarvamTts({ chunkMs: 500 });
  const engine = new SarvamSynthesisEngine({
    apiKey: "test-key",
    url: fake.url,
    readTimeoutMs: 100,
  });
  try {
    const chunks: SynthesisChunk[] = [];
    for await (const c of engine.synthesize(TEXT, HI)) {
      chunks.push(c);
      if (chunks.length === 1) await new Promise((r) => setTimeout(r, 300));
    }
    assert.ok(chunks.at(-1)!.words.length > 0);
  } finally {
    await engine.close();
    await fake.close();
  }
});
