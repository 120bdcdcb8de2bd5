// How the Indic Parler adapter fails and stops, against the fake OpenAI-compatible speech server
// (https://platform.openai.com/docs/api-reference/audio/createSpeech, its error body included):
// every failure is a SynthesisError that says what happened and never shows the key; an abort or
// an early exit cancels the request at once.
import assert from "node:assert/strict";
import { startFakeIndicParler } from "../../../tests/fakes/indic_parler.ts";
import { SynthesisError } from "../../tts/engine.ts";
import { IndicParlerEngine } from "./tts.ts";
import { abortAfterFirstChunk, drain, waitFor } from "../../../tests/helpers/streams.ts";

const TEXT = "नमस्ते, आज मौसम बहुत अच्छा है। कल बारिश होगी।";
const HI = { voice: "VOICE_ANANYA", language: "LANGUAGE_HI" };

Deno.test("a wrong key: the server's 401 and its code, without the key", async () => {
  const fake = startFakeIndicParler({ apiKey: "test-key" });
  const engine = new IndicParlerEngine({ url: fake.url, apiKey: "wrong-secret-key" });
  try {
    const { chunks, error } = await drain(engine.synthesize(TEXT, HI));
    assert.deepEqual(chunks, []);
    assert.ok(error instanceof SynthesisError, String(error));
    assert.equal(
      error.message,
      "Indic Parler answered HTTP 401 invalid_api_key: Incorrect API key provided.",
    );
    assert.ok(!error.message.includes("wrong-secret-key"));
  } finally {
    await engine.close();
    await fake.close();
  }
});

Deno.test("an error status fails the unit with the status and the provider's code", async () => {
  const fake = startFakeIndicParler({ errorStatus: 503 });
  const engine = new IndicParlerEngine({ url: fake.url, apiKey: "test-key" });
  try {
    const { error } = await drain(engine.synthesize(TEXT, HI));
    assert.ok(error instanceof SynthesisError, String(error));
    assert.equal(
      error.message,
      "Indic Parler answered HTTP 503 server_error: The fake was told to fail.",
    );
  } finally {
    await engine.close();
    await fake.close();
  }
});

Deno.test("a connection dropped mid-body fails the unit after the audio that came", async () => {
  const fake = startFakeIndicParler({ dropAfterChunks: 3, chunkMs: 100 });
  const engine = new IndicParlerEngine({ url: fake.url, apiKey: "test-key" });
  try {
    const { chunks, error } = await drain(engine.synthesize(TEXT, HI));
    assert.ok(error instanceof SynthesisError, String(error));
    assert.match(error.message, /^Indic Parler's connection failed: /);
    assert.ok(chunks.length >= 1 && chunks.every((c) => c.words.length === 0));
  } finally {
    await engine.close();
    await fake.close();
  }
});

Deno.test("a body that stalls for longer than the read timeout fails the unit", async () => {
  const fake = startFakeIndicParler({ chunkDelayMs: 1500 });
  const engine = new IndicParlerEngine({ url: fake.url, apiKey: "test-key", readTimeoutMs: 200 });
  try {
    const started = Date.now();
    const { error } = await drain(engine.synthesize(TEXT, HI));
    assert.ok(error instanceof SynthesisError, String(error));
    assert.equal(error.message, "Indic Parler sent nothing for 200 ms");
    assert.ok(Date.now() - started < 1000);
    await waitFor(() => fake.received[0].aborted, "the fake to see the request cancelled");
  } finally {
    await engine.close();
    await fake.close();
  }
});

Deno.test("a server slow to answer at all fails once connect + read timeouts are spent", async () => {
  const fake = startFakeIndicParler({ firstByteDelayMs: 600 });
  const engine = new IndicParlerEngine({
    url: fake.url,
    apiKey: "test-key",
    connectTimeoutMs: 100,
    readTimeoutMs: 200,
  });
  try {
    const started = Date.now();
    const { error } = await drain(engine.synthesize(TEXT, HI));
    assert.ok(error instanceof SynthesisError, String(error));
    assert.equal(error.message, "Indic Parler did not answer in 300 ms");
    assert.ok(Date.now() - started < 1000);
  } finally {
    await engine.close();
    await fake.close();
  }
});

Deno.test("an answer that is not a WAV is malformed audio", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("ID3 this is an mp3, honest", { headers: { "content-type": "audio/mpeg" } }),
  );
  const engine = new IndicParlerEngine({ url: `http://127.0.0.1:${server.addr.port}` });
  try {
    const { error } = await drain(engine.synthesize(TEXT, HI));
    assert.ok(error instanceof SynthesisError, String(error));
    assert.equal(error.message, "Indic Parler sent malformed audio: not a RIFF/WAVE stream");
  } finally {
    await engine.close();
    await server.shutdown();
  }
});

Deno.test("a server that is not there fails at once", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close(); // nothing listens there now
  const engine = new IndicParlerEngine({ url: `http://127.0.0.1:${port}` });
  try {
    const { error } = await drain(engine.synthesize(TEXT, HI));
    assert.ok(error instanceof SynthesisError, String(error));
    assert.match(error.message, /^Indic Parler's connection failed: /);
  } finally {
    await engine.close();
  }
});

Deno.test("an abort stops the unit at once and cancels the request", async () => {
  const fake = startFakeIndicParler({ chunkDelayMs: 40, chunkMs: 50 });
  const engine = new IndicParlerEngine({ url: fake.url, apiKey: "test-key" });
  try {
    const reason = new Error("barge-in");
    const { thrown, msAfterAbort } = await abortAfterFirstChunk(
      (signal) => engine.synthesize(TEXT, { ...HI, signal }),
      reason,
    );
    assert.equal(thrown, reason);
    assert.ok(msAfterAbort < 200, "the abort was not prompt");
    await waitFor(() => fake.received[0].aborted, "the fake to see the request cancelled");
    assert.equal(fake.received[0].completed, false);
  } finally {
    await engine.close();
    await fake.close();
  }
});

Deno.test("an already aborted signal throws its reason and makes no request", async () => {
  const fake = startFakeIndicParler();
  const engine = new IndicParlerEngine({ url: fake.url, apiKey: "test-key" });
  try {
    const reason = new Error("too late");
    const { error } = await drain(
      engine.synthesize(TEXT, { ...HI, signal: AbortSignal.abort(reason) }),
    );
    assert.equal(error, reason);
    assert.equal(fake.received.length, 0);
  } finally {
    await engine.close();
    await fake.close();
  }
});

Deno.test("leaving the loop early cancels the request", async () => {
  const fake = startFakeIndicParler({ chunkDelayMs: 40, chunkMs: 50 });
  const engine = new IndicParlerEngine({ url: fake.url, apiKey: "test-key" });
  try {
    for await (const _ of engine.synthesize(TEXT, HI)) break;
    await waitFor(() => fake.received[0].aborted, "the fake to see the request cancelled", 500);
  } finally {
    await engine.close();
    await fake.close();
  }
});

Deno.test("closing the engine fails its open units; it then takes no more", async () => {
  const fake = startFakeIndicParler({ chunkDelayMs: 40, chunkMs: 50 });
  const engine = new IndicParlerEngine({ url: fake.url, apiKey: "test-key" });
  try {
    const stream = engine.synthesize(TEXT, HI)[Symbol.asyncIterator]();
    await stream.next();
    const pending = stream.next();
    await engine.close();
    await assert.rejects(
      pending,
      (e) => e instanceof SynthesisError && e.message === "engine closed",
    );
    assert.throws(() => engine.synthesize(TEXT, HI), SynthesisError);
    await waitFor(() => fake.received[0].aborted, "the fake to see the request cancelled");
  } finally {
    await fake.close();
  }
});
