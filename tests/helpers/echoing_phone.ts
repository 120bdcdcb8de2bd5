// A phone whose line echoes the bot back (issue 35): the media side of a SIP call that sends, every
// 20 ms, the bot's audio it received `delayMs` before at `gainDb`, mixed with the caller's own
// speech when it talks (double-talk), as μ-law RTP. SIPp does the signalling (echoCall), as in
// tests/sip_phone_call_with_rtp_audio_gets_an_answer_spoken_back.test.ts.
import dgram from "node:dgram";
import { buildRtp, parseRtp } from "../../media/phone/rtp_packet.ts";
import { g711Decode, g711Encode } from "../../media/phone/g711.ts";
import { readWav } from "../../caller/wav.ts";
import { callerSpeechWav } from "./audio.ts";
import { type CallService, connectPhoneSession } from "./call_harness.ts";
import { runSipp, type SippRun } from "./sipp.ts";
import { request, sdpOffer, XML_HEAD } from "./sipp_scenario.ts";

const FRAME = 160;

export interface EchoPath {
  /** How long after the bot's audio reached the phone it comes back (speakerphone, hybrid). */
  delayMs: number;
  /** How loud it comes back, against the bot's audio as received (e.g. -6, -12, -20). */
  gainDb: number;
}

/** Festival speaking `text` at 8 kHz (the caller's own voice on the line). */
export async function callerVoice8k(text: string): Promise<Int16Array> {
  return (await readWav(await callerSpeechWav(text, 0.2, 8000))).samples;
}

export class EchoingPhone {
  /** The bot's audio as received, one 8 kHz frame per packet, with its arrival time. */
  readonly received: { at: number; pcm: Int16Array }[] = [];
  #next = 0;
  #own: Int16Array[] = [];
  #seq = 2000;
  #ts = 320_000;
  #running = false;
  #pumping?: Promise<void>;
  #from?: { address: string; port: number };

  private constructor(
    private readonly socket: dgram.Socket,
    readonly port: number,
    public echo?: EchoPath,
  ) {
    socket.on("message", (m, rinfo) => {
      const p = parseRtp(new Uint8Array(m));
      if (typeof p === "string" || p.payloadType !== 0) return;
      this.#from ??= { address: rinfo.address, port: rinfo.port };
      this.received.push({ at: performance.now(), pcm: g711Decode("PCMU", p.payload) });
    });
  }

  static async open(echo?: EchoPath): Promise<EchoingPhone> {
    const socket = dgram.createSocket("udp4");
    await new Promise<void>((ok) => socket.bind(0, "127.0.0.1", ok));
    return new EchoingPhone(socket, socket.address().port, echo);
  }

  /** Starts sending once the worker's first packet names where to (its SDP answer's port). */
  async start(timeoutMs = 20_000): Promise<void> {
    const until = performance.now() + timeoutMs;
    while (!this.#from && performance.now() < until) await new Promise((r) => setTimeout(r, 10));
    if (!this.#from) throw new Error("no RTP from the worker");
    const t0 = performance.now();
    let sent = 0;
    this.#running = true;
    // On a 20 ms grid, one packet per task (tests/helpers/phone_caller.ts says why).
    this.#pumping = (async () => {
      while (this.#running) {
        if (sent <= Math.floor((performance.now() - t0) / 20)) {
          this.#send();
          sent++;
          await new Promise((r) => setTimeout(r, 0));
        } else {
          await new Promise((r) => setTimeout(r, Math.max(0, t0 + sent * 20 - performance.now())));
        }
      }
    })();
  }

  /** The caller talks: `pcm8k` goes out mixed with the echo; resolves when it has all been sent. */
  async say(pcm8k: Int16Array): Promise<void> {
    for (let i = 0; i < pcm8k.length; i += FRAME) {
      const f = new Int16Array(FRAME);
      f.set(pcm8k.subarray(i, i + FRAME));
      this.#own.push(f);
    }
    while (this.#own.length > 0) await new Promise((r) => setTimeout(r, 20));
  }

  /** The bot's frame that reached the phone `delayMs` ago, or none (taken once each). */
  #echoFrame(): Int16Array | undefined {
    if (!this.echo) return undefined;
    const due = performance.now() - this.echo.delayMs;
    // More than a few frames due at once (a stall here): skip to the latest, keeping the delay.
    let last = this.#next;
    while (last < this.received.length && this.received[last].at <= due) last++;
    if (last === this.#next) return undefined;
    this.#next = last - this.#next > 3 ? last : this.#next + 1;
    return this.received[this.#next - 1].pcm;
  }

  #send(): void {
    const own = this.#own.shift();
    const echo = this.#echoFrame();
    const gain = this.echo ? 10 ** (this.echo.gainDb / 20) : 0;
    const mix = new Int16Array(FRAME);
    for (let i = 0; i < FRAME; i++) {
      const v = (own?.[i] ?? 0) + (echo ? echo[i] * gain : 0);
      mix[i] = Math.max(-32768, Math.min(32767, Math.round(v)));
    }
    const bytes = buildRtp({
      marker: false,
      payloadType: 0,
      sequenceNumber: this.#seq++ & 0xffff,
      timestamp: this.#ts,
      ssrc: 0xec40,
    }, g711Encode("PCMU", mix));
    this.#ts = (this.#ts + FRAME) >>> 0;
    this.socket.send(bytes, this.#from!.port, this.#from!.address);
  }

  async close(): Promise<void> {
    this.#running = false;
    await this.#pumping;
    await new Promise<void>((ok) => this.socket.close(() => ok()));
  }
}

const DIALLED = "+15550100", CALLER = "+15550111";
const AT = `sip:${DIALLED}@[remote_ip]:[remote_port]`;

/**
 * One phone call to the service's agent: SIPp dials the worker with a fresh session's token,
 * `phone` is its media, and SIPp hangs up (BYE) after `holdMs`. Resolves once the phone's media
 * is flowing; `done` is SIPp's run.
 */
export async function echoCall(
  service: CallService,
  sipPort: number,
  phone: EchoingPhone,
  holdMs: number,
): Promise<{ sessionId: string; done: Promise<SippRun> }> {
  const { sessionId, token } = await connectPhoneSession(service);
  const to = `To: <${AT}>;tag=[$wtag]`;
  const xml = `${XML_HEAD}<scenario name="echoing-phone">
  <send retrans="500"><![CDATA[${
    request("INVITE", 1, { uri: `${AT};session=${token}`, caller: CALLER, to: `To: <${AT}>` }) +
    sdpOffer([0, 101], {
      port: phone.port,
      address: "127.0.0.1",
      fmtp: true,
      direction: "sendrecv",
    })
  }]]></send>
  <recv response="100" optional="true"/>
  <recv response="180" optional="true"/>
  <recv response="200" rrs="true">
    <action><ereg regexp="tag=([^;> ]+)" search_in="hdr" header="To:" assign_to="t,wtag"/></action>
  </recv>
  <Reference variables="t"/>
  <send><![CDATA[${request("ACK", 1, { uri: AT, caller: CALLER, to, contact: false })}
      Content-Length: 0
]]></send>
  <pause milliseconds="${holdMs}"/>
  <send retrans="500"><![CDATA[${request("BYE", 2, { uri: AT, caller: CALLER, to })}
      Content-Length: 0
]]></send>
  <recv response="200"/>
</scenario>`;
  const done = runSipp(xml, sipPort, DIALLED, "udp", ["-timeout", String(holdMs / 1000 + 60)]);
  await phone.start();
  return { sessionId, done };
}
