// A FAKE of Sarvam's realtime speech-to-text WebSocket (`saaras:v3-realtime`), for tests: it
// speaks the documented protocol on 127.0.0.1 and records everything it is sent. It recognises
// nothing: each utterance gets the next transcript of its script, whatever the audio, with
// partials growing by one word per `wordEveryMs` of audio received. It follows:
//   https://docs.sarvam.ai/api-reference/speech-to-text/transcribe/realtime/ws.md
//     GET /speech-to-text-realtime/ws, the API-SUBSCRIPTION-KEY header (or the subprotocol
//     `api-subscription-key.<key>`, echoed back), speech_start / speech_end for endpointing=manual
//   https://docs.sarvam.ai/api/api-guides-tutorials/speech-to-text/realtime-streaming/llms.txt
//     {"event":"audio_input","audio":"<base64>"}, transcript.partial / transcript.final,
//     structured error events {code, message, is_fatal}
// Event fields beyond `event` and `text` (session_id, utterance_idx, language) follow what public
// clients of the endpoint read. How a wrong key is refused is not stated on the pages we could
// read: `refuseAuth` picks an HTTP 403 at the upgrade (default) or a close (1008) after it.
//
// Utterances are counted across every connection of the fake: the Nth utterance it sees (from
// speech_start, or a first audio_input without one, to speech_end or flush) gets transcripts[N]
// ("" once the script runs out). A transcript given as several strings is sent as several finals
// (all but the last as their words are "heard", the last at the end of the utterance).

export interface FakeSarvamFault {
  /** The utterance hit (0-based, counted across connections). */
  utterance: number;
  /**
   * error: an error event (then a close 1011 if fatal); drop: the server closes the connection
   * (1011) mid-utterance; delay: the final comes `delayMs` late; hang: no final at all.
   */
  kind: "error" | "drop" | "delay" | "hang";
  /** error / drop: once this much audio of the utterance has arrived (error: default its end). */
  afterMs?: number;
  delayMs?: number;
  code?: string;
  message?: string;
  /** Default true. */
  isFatal?: boolean;
}

export interface FakeSarvamSttOptions {
  /** The key it accepts; default "test-key". */
  apiKey?: string;
  /** One per utterance, in order; several strings make several finals. */
  transcripts?: (string | string[])[];
  /** One more partial word per this much audio; default 200 ms. */
  wordEveryMs?: number;
  /** Every final this late; default 0. */
  finalDelayMs?: number;
  faults?: FakeSarvamFault[];
  /** How a wrong key is refused: "http" (403 at the upgrade, default) or "close" (1008). */
  refuseAuth?: "http" | "close";
  /** Default 0 (any free port). */
  port?: number;
}

/** One WebSocket connection, as the fake saw it. */
export interface FakeConnection {
  path: string;
  query: Record<string, string>;
  /** Request headers, names lower-cased. */
  headers: Record<string, string>;
  /** Every client message: parsed JSON, or {text} / {binary: byteLength} when not JSON. */
  messages: unknown[];
  /** Audio bytes of the audio_input frames, decoded. */
  audioBytes: number;
  /** Set when the connection has closed. */
  closeCode?: number;
}

export interface FakeSarvamStt {
  /** Base URL for the engine's `url` option (ws://127.0.0.1:port). */
  url: string;
  received: {
    /** Accepted connections, in order. */
    connections: FakeConnection[];
    /** Upgrade requests refused for their key (`at`: Date.now() when it came). */
    refused: {
      path: string;
      query: Record<string, string>;
      headers: Record<string, string>;
      at: number;
    }[];
  };
  /** Protocol deviations seen (unknown events, bad base64, audio outside an utterance...). */
  violations: string[];
  /** Utterances seen so far. */
  readonly utterances: number;
  /** The audio a connection sent, as 16-bit little-endian samples. */
  audioOf(conn: FakeConnection): Int16Array;
  /** The key it accepts from now on (a key that was refused is accepted again). */
  acceptKey(apiKey: string): void;
  /** Changes the script (and faults) for the utterances still to come. */
  script(next: { transcripts?: (string | string[])[]; faults?: FakeSarvamFault[] }): void;
  /** Closes every open connection now (1011), as a provider outage would. */
  dropAll(): void;
  close(): Promise<void>;
}

interface Utterance {
  index: number;
  segments: string[][];
  /** Segments already sent as finals. */
  done: number;
  /** Words of the current segment already sent as a partial. */
  shown: number;
  bytes: number;
  errorSent: boolean;
}

export function startFakeSarvamStt(options: FakeSarvamSttOptions = {}): FakeSarvamStt {
  let apiKey = options.apiKey ?? "test-key";
  const wordEveryMs = options.wordEveryMs ?? 200;
  const finalDelayMs = options.finalDelayMs ?? 0;
  let transcripts = options.transcripts ?? [];
  let faults = options.faults ?? [];
  let utterances = 0;
  let sessions = 0;
  const received: FakeSarvamStt["received"] = { connections: [], refused: [] };
  const violations: string[] = [];
  const audio = new Map<FakeConnection, Uint8Array[]>();
  const open = new Map<WebSocket, Promise<void>>();
  const timers = new Set<ReturnType<typeof setTimeout>>();

  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };
  const faultOf = (u: Utterance, kind: FakeSarvamFault["kind"]) =>
    faults.find((f) => f.utterance === u.index && f.kind === kind);

  function serve(req: Request): Response {
    const url = new URL(req.url);
    const query = Object.fromEntries(url.searchParams);
    const headers = Object.fromEntries([...req.headers].map(([k, v]) => [k.toLowerCase(), v]));
    if (url.pathname !== "/speech-to-text-realtime/ws") return new Response(null, { status: 404 });
    if (req.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      return new Response("expected a WebSocket upgrade", { status: 426 });
    }
    // The key: the header, or (browsers) the subprotocol api-subscription-key.<key>.
    const protocol = (headers["sec-websocket-protocol"] ?? "").split(",").map((p) => p.trim())
      .find((p) => p.startsWith("api-subscription-key."));
    const key = headers["api-subscription-key"] ?? protocol?.slice("api-subscription-key.".length);
    const authorised = key === apiKey;
    if (!authorised && (options.refuseAuth ?? "http") === "http") {
      received.refused.push({ path: url.pathname, query, headers, at: Date.now() });
      return new Response("invalid API subscription key", { status: 403 });
    }
    const { socket, response } = Deno.upgradeWebSocket(req, protocol ? { protocol } : {});
    if (!authorised) {
      received.refused.push({ path: url.pathname, query, headers, at: Date.now() });
      open.set(socket, new Promise((resolve) => (socket.onclose = () => resolve())));
      socket.onopen = () => socket.close(1008, "invalid API subscription key");
      return response;
    }
    const conn: FakeConnection = {
      path: url.pathname,
      query,
      headers,
      messages: [],
      audioBytes: 0,
    };
    received.connections.push(conn);
    audio.set(conn, []);
    session(socket, conn);
    return response;
  }

  function session(socket: WebSocket, conn: FakeConnection): void {
    const sessionId = `fake-session-${++sessions}`;
    const rate = Number(conn.query.sample_rate ?? 16000);
    const language = conn.query.language_code ?? "";
    const manual = conn.query.endpointing === "manual";
    let utt: Utterance | null = null;
    const send = (m: object) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(m));
    };
    const closed = new Promise<void>((resolve) => {
      socket.onclose = (e) => {
        conn.closeCode = e.code;
        resolve();
      };
    });
    open.set(socket, closed);
    socket.onopen = () => send({ event: "session.begin", session_id: sessionId });

    const begin = () => {
      const script = transcripts[utterances];
      const segments = (Array.isArray(script) ? script : [script ?? ""])
        .map((s) => s.split(/\s+/).filter(Boolean));
      utt = { index: utterances++, segments, done: 0, shown: 0, bytes: 0, errorSent: false };
    };

    const error = (u: Utterance) => {
      const f = faultOf(u, "error")!;
      u.errorSent = true;
      const fatal = f.isFatal ?? true;
      send({
        event: "error",
        code: f.code ?? "processing_error",
        message: f.message ?? "fake: scripted error",
        is_fatal: fatal,
      });
      if (fatal) socket.close(1011, "fake: fatal error");
    };

    /** Partials (and the finals of all but the last segment) as audio is "heard". */
    const hear = (u: Utterance) => {
      let words = Math.floor((u.bytes / 2 / rate) * 1000 / wordEveryMs);
      for (let i = 0; i < u.done; i++) words -= u.segments[i].length;
      while (u.done < u.segments.length - 1 && words >= u.segments[u.done].length) {
        words -= u.segments[u.done].length;
        final(u, u.segments[u.done++]);
        u.shown = 0;
      }
      const seg = u.segments[u.done];
      const n = Math.min(words, seg.length);
      if (n > u.shown) {
        u.shown = n;
        send({
          event: "transcript.partial",
          utterance_idx: u.index,
          text: seg.slice(0, n).join(" "),
          language,
        });
      }
    };

    const final = (u: Utterance, words: string[]) =>
      send({
        event: "transcript.final",
        utterance_idx: u.index,
        text: words.join(" "),
        language,
        language_confidence: 1,
      });

    const end = () => {
      const u = utt!;
      utt = null;
      const f = faultOf(u, "error");
      if (f && !u.errorSent) return error(u);
      if (faultOf(u, "hang")) return;
      const delay = finalDelayMs + (faultOf(u, "delay")?.delayMs ?? 0);
      later(delay, () => {
        for (const words of u.segments.slice(u.done)) final(u, words);
      });
    };

    const audioInput = (m: Record<string, unknown>) => {
      if (typeof m.audio !== "string") {
        return violations.push("audio_input without an audio string");
      }
      let bytes: Uint8Array;
      try {
        bytes = Uint8Array.from(atob(m.audio), (c) => c.charCodeAt(0));
      } catch {
        return violations.push("audio_input whose audio is not base64");
      }
      if (bytes.length % 2) violations.push("audio_input with an odd number of bytes");
      audio.get(conn)!.push(bytes);
      conn.audioBytes += bytes.length;
      if (!utt) {
        if (manual) violations.push("audio_input outside speech_start / speech_end");
        begin();
      }
      const u = utt!;
      u.bytes += bytes.length;
      const ms = (u.bytes / 2 / rate) * 1000;
      const drop = faultOf(u, "drop");
      if (drop && ms >= (drop.afterMs ?? 200)) {
        return socket.close(1011, "fake: connection dropped");
      }
      const f = faultOf(u, "error");
      if (f && f.afterMs !== undefined && !u.errorSent && ms >= f.afterMs) return error(u);
      hear(u);
    };

    socket.onmessage = (e) => {
      if (typeof e.data !== "string") {
        conn.messages.push({ binary: (e.data as ArrayBuffer).byteLength ?? 0 });
        return violations.push("binary frame (the documented audio is base64 in JSON)");
      }
      let m: Record<string, unknown>;
      try {
        m = JSON.parse(e.data);
      } catch {
        conn.messages.push({ text: e.data });
        return violations.push("a text frame that is not JSON");
      }
      conn.messages.push(m);
      switch (m.event) {
        case "audio_input":
          return audioInput(m);
        case "speech_start":
          if (!manual) violations.push("speech_start without endpointing=manual");
          if (utt) violations.push("speech_start inside an utterance");
          return begin();
        case "speech_end":
        case "flush":
          if (m.event === "speech_end" && !manual) {
            violations.push("speech_end without endpointing=manual");
          }
          if (!utt) {
            if (m.event === "speech_end") violations.push("speech_end without an utterance");
            return;
          }
          return end();
        case "ping":
          return send({ event: "pong" });
        case "config.update":
          return send({ event: "config.updated" });
        case "end":
          send({ event: "session.end", session_id: sessionId });
          return socket.close(1000);
        default:
          violations.push(`unknown event ${JSON.stringify(m.event)}`);
          send({
            event: "error",
            code: "invalid_message",
            message: "unknown event",
            is_fatal: false,
          });
      }
    };
  }

  const server = Deno.serve(
    { hostname: "127.0.0.1", port: options.port ?? 0, onListen() {} },
    serve,
  );

  return {
    url: `ws://127.0.0.1:${server.addr.port}`,
    received,
    violations,
    get utterances() {
      return utterances;
    },
    audioOf(conn) {
      const chunks = audio.get(conn) ?? [];
      const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
      let at = 0;
      for (const c of chunks) {
        bytes.set(c, at);
        at += c.length;
      }
      const view = new DataView(bytes.buffer);
      return Int16Array.from({ length: bytes.length >> 1 }, (_, i) => view.getInt16(i * 2, true));
    },
    acceptKey(key) {
      apiKey = key;
    },
    script(next) {
      if (next.transcripts) {
        transcripts = [...transcripts.slice(0, utterances), ...next.transcripts];
      }
      if (next.faults) faults = next.faults;
    },
    dropAll() {
      for (const socket of open.keys()) {
        if (socket.readyState === WebSocket.OPEN) socket.close(1011, "fake: outage");
      }
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const socket of open.keys()) {
        if (socket.readyState < WebSocket.CLOSING) socket.close(1001, "fake: shutting down");
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.all(open.values()).then(() => open.clear()),
        new Promise((resolve) => (timer = setTimeout(resolve, 1000))),
      ]);
      clearTimeout(timer);
      await server.shutdown();
    },
  };
}
