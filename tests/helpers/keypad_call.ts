// A whole SIP phone call for the keypad tests: a worker process with local engines and a real
// brain (the TypeScript SDK), SIPp 3.6 dialling it with the session token in the Request-URI, and
// a PhoneCaller as the phone's RTP (μ-law audio, RFC 4733 events as a carrier shapes them). The
// brain keeps the keys it is told and ends the call at "#", which the worker does by BYE.
import { connectPhoneSession, startCallService } from "./call_harness.ts";
import { freeUdpPort, runSipp } from "./sipp.ts";
import { tokenCallScenario } from "./sipp_scenario.ts";
import { PhoneCaller } from "./phone_caller.ts";
import { createBrain } from "../../sdk/brain/mod.ts";
import type { ConfigJson } from "../../sdk/brain/config.ts";
import { g711Encode } from "../../media/phone/g711.ts";

const DIALLED = "+15550100";
const CALLER = "+15550111";

/**
 * SIPp's side: INVITE with the token, ACK, then wait for the worker's BYE and answer it. The RTP
 * is a PhoneCaller's at `rtpPort`, or SIPp's own playing `pcap` (play_pcap_audio) after the ACK.
 */
const scenario = (token: string, media: { rtpPort: number } | { pcap: string }) =>
  tokenCallScenario({
    name: "keypad",
    token,
    dialled: DIALLED,
    caller: CALLER,
    media: "rtpPort" in media ? { port: media.rtpPort, address: "127.0.0.1" } : undefined,
    afterAck: "pcap" in media
      ? `\n  <nop><action><exec play_pcap_audio="${media.pcap}"/></action></nop>`
      : "",
  });

export interface KeypadSeen {
  digits: string[];
  turns: string[];
  greetingHeard: boolean;
  speechEvents: number;
}

/** 8 kHz PCM as the μ-law bytes a phone sends. */
export const ulaw = (pcm8k: Int16Array) => g711Encode("PCMU", pcm8k);

export async function keypadCall(
  options: { greeting: string; config?: ConfigJson; record?: boolean; pcap?: Uint8Array },
) {
  const seen: KeypadSeen = { digits: [], turns: [], greetingHeard: false, speechEvents: 0 };
  const brain = createBrain({
    onSessionStart(session) {
      if (options.config) session.configure(options.config);
      return options.greeting;
    },
    onTurn: (turn) => {
      seen.turns.push(turn.text);
      return "Sorry, please use the keypad.";
    },
    onDtmf(dtmf, session) {
      seen.digits.push(dtmf.digit);
      if (dtmf.digit === "#") session.end("caller_pressed_hash");
    },
    onHeard: (heard) => void (heard.turnId === "greeting" && (seen.greetingHeard = true)),
  });
  const sipPort = await freeUdpPort();
  const service = await startCallService(brain, {
    workerEnv: { SIP_PORT: String(sipPort) },
    record_by_default: options.record,
  });
  const caller = await PhoneCaller.open();
  const { sessionId, token } = await connectPhoneSession(service);
  let pcapDir: string | undefined;
  let media: { rtpPort: number } | { pcap: string } = { rtpPort: caller.port };
  if (options.pcap) {
    pcapDir = await Deno.makeTempDir({ prefix: "keypad-pcap-" });
    await Deno.writeFile(`${pcapDir}/caller.pcap`, options.pcap);
    media = { pcap: `${pcapDir}/caller.pcap` };
  }
  const sipp = runSipp(scenario(token, media), sipPort, DIALLED, "udp", ["-timeout", "60"]);
  if (!options.pcap) await caller.start();
  return {
    seen,
    service,
    caller,
    sipp,
    sessionId,
    async close() {
      await caller.close();
      await service.close();
      if (pcapDir) await Deno.remove(pcapDir, { recursive: true });
    },
  };
}

export async function until<T>(what: string, get: () => T | undefined | false, ms = 20_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
