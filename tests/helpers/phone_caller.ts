// The media side of a phone for SIP call tests: a UDP socket that sends a continuous 20 ms μ-law
// RTP stream (silence, or speech sox encoded from festival), RFC 4733 key presses in the same
// stream, and keeps the RTP the worker sends back. SIPp does the signalling and names this
// socket's port in its SDP offer.
import dgram from "node:dgram";
import { callerSpeechWav } from "./audio.ts";
import { buildRtp, parseRtp } from "../../media/phone/rtp_packet.ts";
import { g711Decode } from "../../media/phone/g711.ts";

const ULAW_SILENCE = 0xff;
const DTMF_EVENTS: Record<string, number> = { "*": 10, "#": 11 };

/** Festival speaking `text` as 8 kHz μ-law bytes, encoded by sox. */
export async function ulawSpeech(text: string): Promise<Uint8Array> {
  const wav = await callerSpeechWav(text, 0.2, 8000);
  const out = await new Deno.Command("sox", {
    args: ["-D", wav, "-t", "raw", "-e", "u-law", "-"],
    stdout: "piped",
    stderr: "null",
  }).output();
  if (!out.success) throw new Error("sox could not encode μ-law");
  return out.stdout;
}

export interface HeardPacket {
  at: number;
  payloadType: number;
  payload: Uint8Array;
}

export class PhoneCaller {
  readonly heard: HeardPacket[] = [];
  private queue: { pt: number; payload: Uint8Array; ts?: number; marker?: boolean }[] = [];
  private seq = 1000;
  private ts = 160_000;
  private ssrc = 0x5eed;
  private running = false;
  private pumping?: Promise<void>;
  private target?: { address: string; port: number };
  /** Where the worker's RTP comes from: its port, which its SDP answer named. */
  from?: { address: string; port: number };

  private constructor(private readonly socket: dgram.Socket, readonly port: number) {
    socket.on("message", (m, rinfo) => {
      const p = parseRtp(new Uint8Array(m));
      if (typeof p === "string") return;
      this.from ??= { address: rinfo.address, port: rinfo.port };
      this.heard.push({ at: performance.now(), payloadType: p.payloadType, payload: p.payload });
    });
  }

  static async open(): Promise<PhoneCaller> {
    const socket = dgram.createSocket("udp4");
    await new Promise<void>((ok) => socket.bind(0, "127.0.0.1", ok));
    return new PhoneCaller(socket, socket.address().port);
  }

  /**
   * Waits for the worker's first RTP packet (it sends to the offer's port from the answer on),
   * then streams back to where it came from: the port its SDP answer named.
   */
  async start(timeoutMs = 20_000): Promise<void> {
    const until = performance.now() + timeoutMs;
    while (!this.from && performance.now() < until) await new Promise((r) => setTimeout(r, 10));
    if (!this.from) throw new Error("no RTP from the worker");
    this.target = this.from;
    const t0 = performance.now();
    let sent = 0;
    this.running = true;
    // Paced on a 20 ms grid, catching up after a late wake as a phone's clock would, one packet
    // per task: Deno's node:dgram sends a burst made in one task in reverse order (docs/sip.md).
    const pump = async () => {
      while (this.running) {
        const due = Math.floor((performance.now() - t0) / 20);
        if (sent <= due) {
          this.sendNext();
          sent++;
          await new Promise((r) => setTimeout(r, 0));
        } else await new Promise((r) => setTimeout(r, t0 + sent * 20 - performance.now()));
      }
    };
    this.pumping = pump();
  }

  private sendNext(): void {
    const next = this.queue.shift();
    const pt = next?.pt ?? 0;
    const payload = next?.payload ?? new Uint8Array(160).fill(ULAW_SILENCE);
    const ts = next?.ts ?? this.ts;
    if (next?.ts === undefined) this.ts += 160;
    const bytes = buildRtp({
      marker: next?.marker ?? false,
      payloadType: pt,
      sequenceNumber: this.seq++ & 0xffff,
      timestamp: ts,
      ssrc: this.ssrc,
    }, payload);
    this.socket.send(bytes, this.target!.port, this.target!.address);
  }

  /** Queues μ-law speech, 160 bytes a packet; resolves when it has been sent. */
  async say(ulaw: Uint8Array): Promise<void> {
    for (let i = 0; i + 160 <= ulaw.length; i += 160) {
      this.queue.push({ pt: 0, payload: ulaw.subarray(i, i + 160) });
    }
    while (this.queue.length > 0) await new Promise((r) => setTimeout(r, 20));
  }

  /**
   * One key press as RFC 4733 events (payload type `pt`): `ms` of event packets sharing the
   * start timestamp with a growing duration, then the end packet three times. `shape` sends it as
   * some carriers do: no marker bit on the first packet, the end packet `ends` times (0: all lost).
   */
  async press(
    digit: string,
    pt = 101,
    ms = 160,
    shape: { marker?: boolean; ends?: number } = {},
  ): Promise<void> {
    const event = DTMF_EVENTS[digit] ?? Number(digit);
    const start = this.ts;
    const packets = ms / 20;
    const ends = shape.ends ?? 3;
    for (let i = 1; i < packets + ends; i++) {
      const end = i >= packets;
      const duration = Math.min(i, packets) * 160;
      const payload = new Uint8Array([event, (end ? 0x80 : 0) | 10, duration >> 8, duration & 255]);
      this.queue.push({ pt, payload, ts: start, marker: i === 1 && (shape.marker ?? true) });
    }
    if (ends === 0) {
      // The last packet before the lost ends still goes: the event's full length, unended.
      const duration = packets * 160;
      const payload = new Uint8Array([event, 10, duration >> 8, duration & 255]);
      this.queue.push({ pt, payload, ts: start, marker: false });
    }
    // The audio clock moves on by the event's length.
    this.ts += packets * 160;
    while (this.queue.length > 0) await new Promise((r) => setTimeout(r, 20));
  }

  /** The μ-law audio heard since `since` (performance.now()), decoded to 8 kHz PCM. */
  audioSince(since: number): Int16Array {
    const chunks = this.heard.filter((h) => h.at >= since && h.payloadType === 0)
      .map((h) => h.payload);
    const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let o = 0;
    for (const c of chunks) {
      all.set(c, o);
      o += c.length;
    }
    return g711Decode("PCMU", all);
  }

  async close(): Promise<void> {
    this.running = false;
    await this.pumping;
    await new Promise<void>((ok) => this.socket.close(() => ok()));
  }
}
