// A FAKE Indic Parler-TTS server for tests: not the model, a local stand-in on 127.0.0.1 that
// answers the OpenAI-compatible speech endpoint media/providers/indic_parler/tts.ts speaks, so the adapter
// can be tested (and a whole call run) without a GPU.
//
// It follows OpenAI's "create speech" reference
// (https://platform.openai.com/docs/api-reference/audio/createSpeech) as self-hosted Parler
// servers expose it (github.com/fedirz/parler-tts-server): POST /v1/audio/speech with a JSON
// body {model, input, voice, response_format}; a "wav" answer is a RIFF/WAVE PCM16 mono file at
// the model's 44.1 kHz (https://huggingface.co/ai4bharat/indic-parler-tts), "pcm" the bare
// samples. Errors use OpenAI's body, {"error":{"message","type","param","code"}}: a wrong or
// missing Bearer key is a 401 invalid_api_key.
//
// Its audio is the same speech-like tone as the Sarvam fake's (fakeSpeech): its length follows
// the text and it is not silence. The body goes out in pieces so that streaming, a dropped
// connection and a stall can be tested; every request is recorded for assertions.
import { fakeSpeech } from "./sarvam_tts.ts";

export interface FakeIndicParlerOptions {
  /** The Bearer key the fake wants; default "test-key"; null: no auth at all. */
  apiKey?: string | null;
  /** Audio per character of text; default 70 ms. */
  msPerChar?: number;
  /** The WAV's rate; default 44100. */
  sampleRate?: number;
  /** Audio per body piece; default 200 ms. */
  chunkMs?: number;
  /** Wait before each body piece after the first; default 0. */
  chunkDelayMs?: number;
  /** Wait before answering at all (a server that generates first); default 0. */
  firstByteDelayMs?: number;
  /** Answer every request with this status and an OpenAI error body. */
  errorStatus?: number;
  /** Cut the connection after this many body pieces (the WAV header is the first). */
  dropAfterChunks?: number;
}

/** One request, as the fake saw it. */
export interface FakeParlerRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  /** The JSON body (or its raw text if it was not JSON). */
  body: unknown;
  /** Body pieces sent. */
  chunks: number;
  /** The client went away before the whole answer was sent. */
  aborted: boolean;
  /** The whole answer was sent. */
  completed: boolean;
}

export interface FakeIndicParler {
  /** http://127.0.0.1:<port> (the engine's `url`). */
  url: string;
  received: FakeParlerRequest[];
  /** The live options: a test may change them between requests. */
  options:
    & Required<Pick<FakeIndicParlerOptions, "msPerChar" | "sampleRate" | "chunkMs">>
    & FakeIndicParlerOptions;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A 44-byte RIFF/WAVE header for `samples` PCM16 mono samples at `rate`. */
export function wavHeader(rate: number, samples: number): Uint8Array {
  const b = new Uint8Array(44);
  const v = new DataView(b.buffer);
  const put = (o: number, s: string) => [...s].forEach((c, i) => b[o + i] = c.charCodeAt(0));
  put(0, "RIFF");
  v.setUint32(4, 36 + 2 * samples, true);
  put(8, "WAVE");
  put(12, "fmt ");
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true);
  v.setUint16(22, 1, true);
  v.setUint32(24, rate, true);
  v.setUint32(28, rate * 2, true);
  v.setUint16(32, 2, true);
  v.setUint16(34, 16, true);
  put(36, "data");
  v.setUint32(40, 2 * samples, true);
  return b;
}

function le16(samples: Int16Array): Uint8Array {
  const out = new Uint8Array(samples.length * 2);
  const v = new DataView(out.buffer);
  samples.forEach((s, i) => v.setInt16(2 * i, s, true));
  return out;
}

function openAiError(status: number, message: string, code: string | null, type: string) {
  return Response.json({ error: { message, type, param: null, code } }, { status });
}

export function startFakeIndicParler(options: FakeIndicParlerOptions = {}): FakeIndicParler {
  const opts = { apiKey: "test-key", msPerChar: 70, sampleRate: 44_100, chunkMs: 200, ...options };
  const received: FakeParlerRequest[] = [];
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen() {},
    // A dropped body lands here (the answer had started): keep it off the test's output.
    onError: () => new Response(null, { status: 500 }),
  }, async (req) => {
    const u = new URL(req.url);
    const raw = await req.text();
    let body: unknown = raw;
    try {
      body = JSON.parse(raw);
    } catch { /* recorded as text */ }
    const rec: FakeParlerRequest = {
      method: req.method,
      path: u.pathname,
      query: Object.fromEntries(u.searchParams),
      headers: Object.fromEntries(req.headers),
      body,
      chunks: 0,
      aborted: false,
      completed: false,
    };
    received.push(rec);
    if (opts.firstByteDelayMs) await sleep(opts.firstByteDelayMs);
    if (req.method !== "POST" || u.pathname !== "/v1/audio/speech") {
      return openAiError(
        404,
        `No route ${req.method} ${u.pathname}`,
        null,
        "invalid_request_error",
      );
    }
    if (opts.apiKey !== null && req.headers.get("authorization") !== `Bearer ${opts.apiKey}`) {
      return openAiError(
        401,
        "Incorrect API key provided.",
        "invalid_api_key",
        "invalid_request_error",
      );
    }
    if (opts.errorStatus) {
      return openAiError(
        opts.errorStatus,
        "The fake was told to fail.",
        "server_error",
        "server_error",
      );
    }
    const b = body as { input?: unknown; voice?: unknown; response_format?: unknown };
    if (typeof b?.input !== "string" || !b.input || typeof b.voice !== "string") {
      return openAiError(
        400,
        "input and voice are required strings",
        null,
        "invalid_request_error",
      );
    }
    const format = b.response_format ?? "wav";
    if (format !== "wav" && format !== "pcm") {
      return openAiError(
        400,
        `The fake makes wav or pcm, not ${format}`,
        null,
        "invalid_request_error",
      );
    }
    const audio = fakeSpeech(b.input, opts.sampleRate, opts.msPerChar);
    const step = Math.max(1, Math.round((opts.sampleRate * opts.chunkMs) / 1000));
    const pieces: Uint8Array[] = format === "wav" ? [wavHeader(opts.sampleRate, audio.length)] : [];
    for (let at = 0; at < audio.length; at += step) {
      pieces.push(le16(audio.subarray(at, at + step)));
    }
    let next = 0;
    const stream = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (next > 0 && opts.chunkDelayMs) await sleep(opts.chunkDelayMs);
        if (rec.aborted) return;
        if (opts.dropAfterChunks === next) {
          return c.error(new Error("the fake drops the connection"));
        }
        if (next === pieces.length) {
          rec.completed = true;
          return c.close();
        }
        c.enqueue(pieces[next++]);
        rec.chunks++;
      },
      cancel() {
        if (!rec.completed) rec.aborted = true;
      },
    });
    return new Response(stream, {
      headers: { "content-type": format === "wav" ? "audio/wav" : "audio/pcm" },
    });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    received,
    options: opts,
    close: () => server.shutdown(),
  };
}
