// A FAKE Sarvam text-to-speech WebSocket for tests: not Sarvam, a local stand-in that speaks the
// documented streaming protocol on 127.0.0.1 so media/providers/sarvam/tts.ts can be tested (and a whole
// call run) without the network or a key.
//
// It follows https://docs.sarvam.ai/api-reference-docs/text-to-speech/stream and the streaming
// guide (https://docs.sarvam.ai/api-reference-docs/api-guides-tutorials/text-to-speech/streaming-api/web-socket):
// GET /text-to-speech/ws?model=...&send_completion_event=true with the api-subscription-key
// header; then config, text..., flush (and ping) messages in; audio frames (base64 PCM16LE at the
// config's speech_sample_rate), an {"type":"event","data":{"event_type":"final"}} per flush, and
// {"type":"error","data":{"message","code"}} frames out. A wrong key is refused at the handshake
// with HTTP 403 and the documented error body (https://docs.sarvam.ai/api/errors-troubleshooting).
//
// Its audio is real but not speech: per character msPerChar ms of a tone, shaped word by word by
// a raised-cosine envelope with silence at the spaces, so its length follows the text and a test
// can tell it from silence. Everything received is recorded for assertions.

export interface FakeSarvamTtsOptions {
  /** The key the fake accepts; default "test-key". */
  apiKey?: string;
  /** Audio per character of text; default 70 ms. */
  msPerChar?: number;
  /** Audio per frame; default 100 ms. */
  chunkMs?: number;
  /** Wait before each frame after the first; default 0. */
  chunkDelayMs?: number;
  /** Wait between the flush and the first audio frame; default 0. */
  firstByteDelayMs?: number;
  /** Send an error frame instead of the frame after this many audio frames (0: before any). */
  errorAfterChunks?: number;
  /** Close the socket (no final) after this many audio frames. */
  dropAfterChunks?: number;
}

/** One connection, as the fake saw it. */
export interface FakeSarvamConnection {
  /** Date.now() when the request came. */
  at: number;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  /** Every message received, JSON-parsed (a non-JSON one as its raw text). */
  messages: unknown[];
  /** Audio frames sent. */
  audioFrames: number;
  /** Set once the socket is closed: who closed it, with which code. */
  closed: { by: "client" | "server"; code: number } | null;
}

export interface FakeSarvamTts {
  /** ws://127.0.0.1:<port> (the engine's `url`). */
  url: string;
  /** Connections in order, the refused ones included (with no messages). */
  received: FakeSarvamConnection[];
  /** The live options: a test may change them between units. */
  options:
    & Required<Pick<FakeSarvamTtsOptions, "apiKey" | "msPerChar" | "chunkMs">>
    & FakeSarvamTtsOptions;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A deterministic speech-like signal for `text`: `msPerChar` per UTF-16 unit, each word a tone of
 * `hz` under a raised-cosine envelope, silence at whitespace. Shared with the other fakes.
 */
export function fakeSpeech(text: string, rate: number, msPerChar: number, hz = 180): Int16Array {
  const perChar = (rate * msPerChar) / 1000;
  const out = new Int16Array(Math.round(text.length * perChar));
  for (const m of text.matchAll(/\S+/g)) {
    const from = Math.round(m.index * perChar);
    const to = Math.min(out.length, Math.round((m.index + m[0].length) * perChar));
    for (let i = from; i < to; i++) {
      const env = Math.sin((Math.PI * (i - from)) / (to - from));
      out[i] = Math.round(9000 * env * Math.sin((2 * Math.PI * hz * i) / rate));
    }
  }
  return out;
}

/** Base64 of PCM16 little-endian bytes. */
export function pcmBase64(samples: Int16Array): string {
  const bytes = new Uint8Array(samples.length * 2);
  const v = new DataView(bytes.buffer);
  samples.forEach((s, i) => v.setInt16(2 * i, s, true));
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin);
}

export function startFakeSarvamTts(options: FakeSarvamTtsOptions = {}): FakeSarvamTts {
  const opts = { apiKey: "test-key", msPerChar: 70, chunkMs: 100, ...options };
  const received: FakeSarvamConnection[] = [];
  const sockets = new Set<WebSocket>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const u = new URL(req.url);
    const conn: FakeSarvamConnection = {
      at: Date.now(),
      path: u.pathname,
      query: Object.fromEntries(u.searchParams),
      headers: Object.fromEntries(req.headers),
      messages: [],
      audioFrames: 0,
      closed: null,
    };
    received.push(conn);
    if (u.pathname !== "/text-to-speech/ws") {
      return Response.json({ error: { message: "Not Found", code: "not_found_error" } }, {
        status: 404,
      });
    }
    if (req.headers.get("api-subscription-key") !== opts.apiKey) {
      return Response.json(
        { error: { message: "Invalid API key", code: "invalid_api_key_error" } },
        { status: 403 },
      );
    }
    if (req.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      return new Response("expected a WebSocket upgrade", { status: 426 });
    }
    const { socket, response } = Deno.upgradeWebSocket(req);
    sockets.add(socket);
    serve(socket, conn, opts);
    return response;
  });
  return {
    url: `ws://127.0.0.1:${server.addr.port}`,
    received,
    options: opts,
    async close() {
      for (const s of sockets) if (s.readyState <= WebSocket.OPEN) s.close(1001);
      await server.shutdown();
    },
  };
}

function serve(
  socket: WebSocket,
  conn: FakeSarvamConnection,
  opts: FakeSarvamTts["options"],
) {
  let config: Record<string, unknown> | null = null;
  let text = "";
  let serverClosing = false;
  // One flush at a time, in order.
  let work = Promise.resolve();
  const send = (frame: unknown) => {
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
  };
  const open = () => socket.readyState === WebSocket.OPEN;
  const error = (message: string, code: string) => send({ type: "error", data: { message, code } });
  socket.onclose = (ev) => {
    conn.closed ??= { by: serverClosing ? "server" : "client", code: ev.code };
  };
  socket.onmessage = (ev) => {
    let msg: { type?: string; data?: Record<string, unknown> };
    try {
      msg = JSON.parse(ev.data);
      conn.messages.push(msg);
    } catch {
      conn.messages.push(ev.data);
      return error("Invalid JSON message", "invalid_request_error");
    }
    if (msg.type === "config") config = msg.data ?? {};
    else if (msg.type === "text") {
      if (!config) return error("Send a config message first", "invalid_request_error");
      text += String(msg.data?.text ?? "");
    } else if (msg.type === "flush") {
      const unit = text;
      text = "";
      work = work.then(() => speak(unit));
    } else if (msg.type !== "ping") {
      error(`Unknown message type ${msg.type}`, "invalid_request_error");
    }
  };

  async function speak(unit: string) {
    if (!config || !open()) return;
    if (config.output_audio_codec !== undefined && config.output_audio_codec !== "linear16") {
      return error("The fake speaks linear16 only", "invalid_request_error");
    }
    // The model page's defaults: 24 kHz for v3, 22.05 kHz for v2.
    const rate = Number(
      config.speech_sample_rate ?? (conn.query.model === "bulbul:v2" ? 22050 : 24000),
    );
    if (![8000, 16000, 22050, 24000].includes(rate)) {
      return error(`Unsupported speech_sample_rate ${rate}`, "invalid_request_error");
    }
    const audio = fakeSpeech(unit, rate, opts.msPerChar);
    const step = Math.max(1, Math.round((rate * opts.chunkMs) / 1000));
    const requestId = crypto.randomUUID();
    if (opts.firstByteDelayMs) await sleep(opts.firstByteDelayMs);
    for (let at = 0, n = 0; at < audio.length; at += step, n++) {
      if (!open()) return;
      if (n > 0 && opts.chunkDelayMs) await sleep(opts.chunkDelayMs);
      if (!open()) return;
      if (opts.errorAfterChunks === n) {
        return error("Synthesis failed on the fake", "internal_server_error");
      }
      if (opts.dropAfterChunks === n) {
        serverClosing = true;
        return socket.close();
      }
      send({
        type: "audio",
        data: {
          request_id: requestId,
          content_type: "audio/pcm",
          audio: pcmBase64(audio.subarray(at, at + step)),
        },
      });
      conn.audioFrames++;
    }
    if (conn.query.send_completion_event !== "false") {
      send({ type: "event", data: { event_type: "final", request_id: requestId } });
    }
  }
}
