// What the three FAKE telephony media streams (twilio_media_stream.ts, plivo_audio_stream.ts,
// exotel_voicebot_stream.ts) share: not a provider, a local stand-in that dials the worker's
// WebSocket the way the provider's media server does and behaves as its documentation says. Each
// provider file gives its wire (its documented messages, cited there); this file is the provider's
// side of a call: its clock (caller audio sent in real time, one chunk per chunkMs, silence when
// the caller says nothing, as the providers stream continuously), its playback of what the worker
// sends (played in order, in real time; a mark answered once the audio before it has played; a
// clear drops what is queued and answers the pending marks), DTMF and hanging up.
import { g711Decode, g711Encode } from "../../media/phone/g711.ts";

/** What one provider's messages look like: built and read as its documentation says. */
export interface FakeWire {
  /** Coding both ways: G.711 μ-law, or 16-bit little-endian PCM (Exotel, Plivo's L16). */
  audio: "mulaw" | "slin16";
  /** The audio's rate both ways (8000 unless said: Plivo's L16 may be 16000). */
  rate?: 8000 | 16000;
  /** Caller audio per media message, in ms. */
  chunkMs: number;
  /** The messages that open the stream (connected, start). */
  opening(): unknown[];
  /** One chunk of caller audio: `chunk` counts from 1, `elapsedMs` since the stream began. */
  media(payload: string, chunk: number, elapsedMs: number): unknown;
  dtmf(digit: string): unknown;
  /** The provider's last message when the call ends (none for Plivo, which just closes). */
  stop(): unknown | undefined;
  /** The answer to a mark once the audio before it has played. */
  played(name: string): unknown;
  /** The answer to a clear, where the provider sends one (Plivo's clearedAudio). */
  cleared(): unknown | undefined;
  /** A message from the worker, read as the provider would. */
  read(message: Record<string, unknown>): WorkerMessage;
}

export type WorkerMessage =
  | { kind: "media"; payload: string }
  | { kind: "mark"; name: string }
  | { kind: "clear" }
  | { kind: "unknown"; event: string };

/** What the fake heard from the worker. */
export interface BotChunk {
  /** performance.now() when it arrived. */
  at: number;
  /** The audio, decoded to PCM at the wire's rate. */
  pcm: Int16Array;
}

export class FakeProviderStream {
  readonly bot: BotChunk[] = [];
  /** Every message the worker sent, parsed, in order. */
  readonly received: Record<string, unknown>[] = [];
  readonly clears: number[] = [];
  readonly marksPlayed: string[] = [];
  /** Messages the fake could not read as its protocol (a test can require none). */
  readonly unreadable: string[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  #queue: Int16Array[] = [];
  #queueDone: (() => void)[] = [];
  #chunk = 0;
  #startedAt = 0;
  #timer?: ReturnType<typeof setTimeout>;
  /** When the provider will have played everything the worker sent so far. */
  #playedUntil = 0;
  #pendingMarks: { name: string; timer: ReturnType<typeof setTimeout> }[] = [];

  private constructor(readonly socket: WebSocket, readonly wire: FakeWire) {
    this.closed = new Promise((resolve) => {
      socket.addEventListener("close", (e) => {
        this.#stopClock();
        for (const m of this.#pendingMarks.splice(0)) clearTimeout(m.timer);
        resolve({ code: e.code, reason: e.reason });
      });
    });
    socket.addEventListener("message", (e) => this.#onMessage(e.data));
  }

  /** Dials `url` as the provider does and sends its opening messages; the clock starts. */
  static async open(url: string, wire: FakeWire): Promise<FakeProviderStream> {
    const socket = new WebSocket(url);
    const fake = new FakeProviderStream(socket, wire);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener("open", () => resolve(), { once: true });
      socket.addEventListener("error", () => reject(new Error(`could not open ${url}`)), {
        once: true,
      });
    });
    for (const m of wire.opening()) fake.#send(m);
    fake.#startedAt = performance.now();
    fake.#tick();
    return fake;
  }

  /** Samples per ms of the wire's audio (8 at 8 kHz). */
  get perMs(): number {
    return (this.wire.rate ?? 8000) / 1000;
  }

  /** The caller says `pcm` (at the wire's rate): sent in real time from the next chunk on. */
  say(pcm: Int16Array): Promise<void> {
    this.#queue.push(pcm);
    return new Promise((resolve) => this.#queueDone.push(resolve));
  }

  pressKey(digit: string): void {
    this.#send(this.wire.dtmf(digit));
  }

  /** The caller hangs up: the provider's stop message (if it has one), then the socket closes. */
  async hangUp(): Promise<void> {
    this.#stopClock();
    const stop = this.wire.stop();
    if (stop !== undefined) this.#send(stop);
    if (this.socket.readyState === WebSocket.OPEN) this.socket.close(1000, "call ended");
    await this.closed;
  }

  /** All the bot audio received after `since` (performance.now()), as one PCM at the wire's rate. */
  botAudio(since = 0): Int16Array {
    const chunks = this.bot.filter((c) => c.at >= since);
    const out = new Int16Array(chunks.reduce((n, c) => n + c.pcm.length, 0));
    let at = 0;
    for (const c of chunks) {
      out.set(c.pcm, at);
      at += c.pcm.length;
    }
    return out;
  }

  #send(message: unknown): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  /** The provider's clock: one chunk every chunkMs on a fixed grid (no drift from late timers). */
  #tick = (): void => {
    const samples = this.wire.chunkMs * this.perMs;
    const pcm = this.#take(samples);
    this.#chunk++;
    const payload = this.wire.audio === "mulaw"
      ? g711Encode("PCMU", pcm).toBase64()
      : slinBytes(pcm).toBase64();
    this.#send(this.wire.media(payload, this.#chunk, (this.#chunk - 1) * this.wire.chunkMs));
    const next = this.#startedAt + this.#chunk * this.wire.chunkMs;
    this.#timer = setTimeout(this.#tick, Math.max(0, next - performance.now()));
  };

  #stopClock(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** The next `n` samples of what the caller says, silence where it says nothing. */
  #take(n: number): Int16Array {
    const out = new Int16Array(n);
    let at = 0;
    while (at < n && this.#queue.length > 0) {
      const head = this.#queue[0];
      const k = Math.min(n - at, head.length);
      out.set(head.subarray(0, k), at);
      at += k;
      if (k === head.length) {
        this.#queue.shift();
        this.#queueDone.shift()?.();
      } else {
        this.#queue[0] = head.subarray(k);
      }
    }
    return out;
  }

  #onMessage(data: unknown): void {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(String(data));
    } catch {
      this.unreadable.push(String(data).slice(0, 80));
      return;
    }
    this.received.push(parsed);
    const m = this.wire.read(parsed);
    const now = performance.now();
    switch (m.kind) {
      case "media": {
        const bytes = Uint8Array.fromBase64(m.payload);
        const pcm = this.wire.audio === "mulaw" ? g711Decode("PCMU", bytes) : pcmOf(bytes);
        this.bot.push({ at: now, pcm });
        this.#playedUntil = Math.max(now, this.#playedUntil) + pcm.length / this.perMs;
        return;
      }
      case "mark": {
        const entry = {
          name: m.name,
          timer: setTimeout(() => this.#markPlayed(entry), Math.max(0, this.#playedUntil - now)),
        };
        this.#pendingMarks.push(entry);
        return;
      }
      case "clear": {
        this.clears.push(now);
        this.#playedUntil = now;
        // What was queued is dropped; its marks are answered at once.
        for (const entry of [...this.#pendingMarks]) {
          clearTimeout(entry.timer);
          this.#markPlayed(entry);
        }
        const answer = this.wire.cleared();
        if (answer !== undefined) this.#send(answer);
        return;
      }
      default:
        this.unreadable.push(m.event);
    }
  }

  #markPlayed(entry: { name: string; timer: ReturnType<typeof setTimeout> }): void {
    const i = this.#pendingMarks.indexOf(entry);
    if (i < 0) return;
    this.#pendingMarks.splice(i, 1);
    this.marksPlayed.push(entry.name);
    this.#send(this.wire.played(entry.name));
  }
}

function slinBytes(pcm: Int16Array): Uint8Array {
  const bytes = new Uint8Array(pcm.length * 2);
  const view = new DataView(bytes.buffer);
  pcm.forEach((s, i) => view.setInt16(i * 2, s, true));
  return bytes;
}

function pcmOf(bytes: Uint8Array): Int16Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Int16Array.from({ length: bytes.length >> 1 }, (_, i) => view.getInt16(i * 2, true));
}

/** A random-looking id of `prefix` and 32 hex digits, as Twilio's SIDs are. */
export function sid(prefix: string): string {
  const hex = [...crypto.getRandomValues(new Uint8Array(16))]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${prefix}${hex}`;
}
