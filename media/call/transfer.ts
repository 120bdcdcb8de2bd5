// Whether a brain's Transfer can be carried out at all, before any carrier is asked: the reasons
// come back to the brain as TransferFailed's detail, so they say what to do instead. Also the
// one-word reason (TransferFailed.reason) a failure is given, and what a warm transfer asks.

/** A tel: or sip:/sips: URI, or an E.164 number (ITU-T E.164: "+", up to 15 digits). */
const TARGET = /^(?:(?:tel|sips?):[^\s<>"]+|\+[1-9][0-9]{1,14})$/i;

/** TransferFailed.reason (proto/voice/v1/brain.proto). */
export type TransferFailReason = "no_answer" | "busy" | "declined" | "refused" | "failed";

/** Transfer.ring_timeout_ms: 0 is the default; otherwise within these bounds. */
export const WARM_RING_DEFAULT_MS = 30_000;
export const WARM_RING_MIN_MS = 5_000;
export const WARM_RING_MAX_MS = 120_000;
/** A whisper longer than this is refused: it is a summary for a person, not a script. */
export const WHISPER_MAX_CHARS = 1_000;

/** A warm transfer as the line carries it out (media/sip/warm_transfer.ts). */
export interface WarmRequest {
  whisper: string;
  ringTimeoutMs: number;
  /** The whisper synthesised in the call's voice and language: 48 kHz mono PCM. */
  speak(text: string): Promise<Int16Array>;
}

/** Why the Transfer is refused, or undefined when it may go to the phone line. */
export function transferRefusal(
  target: string,
  isPhoneCall: boolean,
  alreadyUnderWay: boolean,
  warm?: { whisper: string; ringTimeoutMs: number },
): string | undefined {
  if (!isPhoneCall) {
    return "This session is a web call: only a phone call can be transferred.";
  }
  if (!TARGET.test(target)) {
    return `The transfer target must be a tel: or sip: URI or an E.164 number ("+" and digits); got "${
      target.slice(0, 80)
    }".`;
  }
  if (alreadyUnderWay) return "A transfer of this call is already under way.";
  if (warm?.whisper) {
    const ms = warm.ringTimeoutMs;
    if (ms !== 0 && (ms < WARM_RING_MIN_MS || ms > WARM_RING_MAX_MS)) {
      return `ring_timeout_ms must be 0 (${WARM_RING_DEFAULT_MS}) or ${WARM_RING_MIN_MS} to ${WARM_RING_MAX_MS}; got ${ms}.`;
    }
    if (warm.whisper.length > WHISPER_MAX_CHARS) {
      return `The whisper is ${warm.whisper.length} characters; at most ${WHISPER_MAX_CHARS}.`;
    }
  }
  return undefined;
}

/**
 * A SIP final status as TransferFailed.reason: from a REFER's NOTIFY (the target's answer) or a
 * warm transfer's own INVITE. 486/600 busy; 408/480 nobody answered; 603 and other 4xx/6xx the
 * person or their side declined; 5xx and anything else failed.
 */
export function reasonOfStatus(status: number): TransferFailReason {
  if (status === 486 || status === 600) return "busy";
  if (status === 408 || status === 480 || status === 487) return "no_answer";
  if (status >= 400 && status < 500 || status >= 600) return "declined";
  return "failed";
}

/**
 * The reason of a cold transfer's failure from its detail: a REFER the trunk refused is
 * "refused"; the target's status in the NOTIFY is read as reasonOfStatus reads it.
 */
export function reasonOfDetail(detail: string): TransferFailReason {
  if (/^REFER answered \d{3}/.test(detail)) return "refused";
  const m = /answered (\d{3})/.exec(detail);
  return m ? reasonOfStatus(Number(m[1])) : "failed";
}

/**
 * Why a warm transfer is refused on a carrier's media stream: the worker would have to place the
 * person's call through the carrier's call API and bridge two streams, which this version does
 * not do (docs/decisions.md "Warm transfer"). The cold transfer still works there.
 */
export function warmRefusal(carrier: string): string {
  return `A warm transfer (with a whisper) is not offered on ${carrier} calls: send the Transfer ` +
    "without a whisper for the provider's own transfer, or carry the call over a SIP trunk.";
}

/** What wholeSpeech needs of the call's speech (CallSpeech has it). */
interface Synthesizer {
  synthesize(
    text: string,
    tts: { voice: string; language: string },
    signal: AbortSignal,
  ): AsyncIterable<{ pcm: Int16Array }>;
}

/** Bounds a whisper's synthesis: a stuck engine fails the transfer, not the call. */
const WHISPER_SYNTHESIS_MS = 15_000;

/**
 * A whisper synthesised whole, in the call's voice and language (48 kHz): it is played to the
 * person only, so it is not a unit of any turn and never reaches Heard or the transcript.
 */
export async function wholeSpeech(
  speech: Synthesizer,
  text: string,
  tts: { voice: string; language: string },
): Promise<Int16Array> {
  const signal = AbortSignal.timeout(WHISPER_SYNTHESIS_MS);
  const parts: Int16Array[] = [];
  for await (const chunk of speech.synthesize(text, tts, signal)) parts.push(chunk.pcm);
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
