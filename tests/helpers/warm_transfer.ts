// What the warm-transfer tests share: the caller's SIPp scenario (INVITE with the session token,
// then the worker's BYE answered), steady tones, and a per-frame reading of 8 kHz audio that
// tells a tone (the hold chime's notes, a test's marker tones) from speech.
import { answerWorker, request, tokenCallScenario } from "./sipp_scenario.ts";

export const DIALLED = "+15550100";
const CALLER = "+15550111";
const AT = `sip:${DIALLED}@[remote_ip]:[remote_port]`;

/**
 * What the caller's trunk does with the worker's REFER with Replaces: refuses it with a status,
 * or accepts it (202) and reports the new call answered (NOTIFY of 200), as a trunk that called
 * the person in the worker's place would. Absent: no REFER is expected.
 */
export type ReferAnswer = { refuse: string } | "accept";

const TO_WORKER = `To: <${AT}>;tag=[$wtag]`;

/** What the trunk does with the REFER; its Refer-To must name Replaces. */
const referStep = (refer: ReferAnswer) => {
  const recv = `
  <recv request="REFER" timeout="60000">
    <action><ereg regexp="Replaces=" search_in="hdr" header="Refer-To:" check_it="true" assign_to="rep"/></action>
  </recv>
  <Reference variables="rep"/>`;
  if (refer !== "accept") return recv + answerWorker(refer.refuse);
  return `${recv}${answerWorker("202 Accepted")}
  <send retrans="500"><![CDATA[${
    request("NOTIFY", 2, {
      uri: AT,
      caller: CALLER,
      to: TO_WORKER,
      extra: "\n      Event: refer\n      Subscription-State: terminated;reason=noresource" +
        "\n      Content-Type: message/sipfrag",
    })
  }
      Content-Length: [len]

SIP/2.0 200 OK
]]></send>
  <recv response="200"/>`;
};

/** The caller's call: INVITE with the token, ACK, the REFER if asked, the worker's BYE answered. */
export const callerScenario = (token: string, rtpPort: number, refer?: ReferAnswer) =>
  tokenCallScenario({
    name: "warm-transfer-caller",
    token,
    dialled: DIALLED,
    caller: CALLER,
    media: { port: rtpPort, address: "127.0.0.1" },
    afterAck: refer ? referStep(refer) : "",
  });

/** A steady tone at 8 kHz. */
export const tone = (hz: number, seconds: number, level = 6000) =>
  new Int16Array(seconds * 8000).map((_, i) =>
    Math.round(level * Math.sin(2 * Math.PI * hz * i / 8000))
  );

/** Goertzel power of `hz` in `frame` (8 kHz), as a share of the frame's energy (~1: a pure tone). */
function share(frame: Int16Array, hz: number): number {
  const k = 2 * Math.cos(2 * Math.PI * hz / 8000);
  let s1 = 0, s2 = 0, energy = 0;
  for (const x of frame) {
    [s1, s2] = [x + k * s1 - s2, s1];
    energy += x * x;
  }
  return energy === 0 ? 0 : (s1 * s1 + s2 * s2 - k * s1 * s2) / (energy * frame.length / 2);
}

/** Each loud 20 ms frame of 8 kHz audio: which of `tones` it is, or "other" (speech). */
export function classify(pcm: Int16Array, tones: number[], level = 300): (number | "other")[] {
  const out: (number | "other")[] = [];
  for (let i = 0; i + 160 <= pcm.length; i += 160) {
    const frame = pcm.subarray(i, i + 160);
    const rms = Math.sqrt(frame.reduce((a, x) => a + x * x, 0) / 160);
    if (rms < level) continue;
    const best = tones.find((hz) => share(frame, hz) > 0.6);
    out.push(best ?? "other");
  }
  return out;
}
export const count = <T>(xs: T[], x: T) => xs.filter((y) => y === x).length;
/** The most frames in a row that are `x`. */
export function longestRun<T>(xs: T[], x: T): number {
  let best = 0, run = 0;
  for (const y of xs) best = Math.max(best, run = y === x ? run + 1 : 0);
  return best;
}
