// A warm transfer on a SIP call (issue 35): the caller is put on hold (hold_audio.ts), the worker
// calls the person itself (warm_leg.ts, its own UAC), speaks the brain's whisper to them only,
// then bridges the two calls' audio both ways until either hangs up, and ends both. A person who
// does not answer, is busy, declines or hangs up during the whisper, or a call that cannot be
// placed, gives the caller back to the conversation and the brain a TransferFailed with why.
// The join is first asked of the caller's trunk as a REFER with Replaces (RFC 3891, RFC 5589
// section 7: the trunk calls the person in our place and the worker leaves both calls); a trunk
// that refuses it, fails it or does not say in REPLACES_OUTCOME_MS gets the worker's bridge.
import type { FrameSource } from "../audio/frame_source.ts";
import type { TransferResult } from "../phone/line.ts";
import { HoldAudio } from "../phone/hold_audio.ts";
import { RelaySource } from "../phone/relay_source.ts";
import type { TransferFailReason, WarmRequest } from "../call/transfer.ts";
import type { Emitter } from "../rtc/emitter.ts";
import type { SessionEventNote } from "../../common/session_events.ts";
import type { LineEndReason } from "../phone/line.ts";
import type { TransferOutcome } from "./dialog.ts";

/** What a warm transfer needs of each call's line (SipLine has it; named here to avoid a cycle). */
export interface WarmLine {
  readonly callId: string;
  readonly onEnded: Emitter<[LineEndReason]>;
  readonly onReleased: Emitter<[]>;
  /** The far end's audio (16 kHz frames), held or not. */
  readonly heard: Emitter<[Int16Array]>;
  readonly isOver: boolean;
  readonly note: SessionEventNote<"sip">;
  bridged: boolean;
  warmLegs?: LegPlacer;
  hold(source: FrameSource | undefined): void;
  relay(source: FrameSource): void;
  release(): Promise<void>;
  referReplacing(
    person: { callId: string },
    outcomeMs: number,
  ): Promise<TransferOutcome | undefined>;
}

/** How placing the person's call ended. */
export type LegOutcome =
  | { ok: true; line: WarmLine; callId: string }
  | { ok: false; reason: TransferFailReason; detail: string };

/** Places a warm transfer's call to the person (warm_leg.ts). */
export interface LegPlacer {
  /** Why `target` cannot be called from here, or undefined (then `place` may be called). */
  refusal(target: string): Promise<string | undefined>;
  /** Rings `target` for at most `ringTimeoutMs`; `abandon` gives it up while it rings. */
  place(target: string, ringTimeoutMs: number): { outcome: Promise<LegOutcome>; abandon(): void };
}

const FRAME = 960;
/** How long the trunk may take to report a REFER with Replaces before the worker bridges. */
export const REPLACES_OUTCOME_MS = 8_000;

/** `pcm` (48 kHz) once, frame by frame; `done` resolves when the last frame has been taken. */
class OncePlayer implements FrameSource {
  #at = 0;
  #finish!: () => void;
  readonly done = new Promise<void>((r) => (this.#finish = r));
  readonly #frame = new Int16Array(FRAME);

  constructor(private readonly pcm: Int16Array) {}

  next(): Int16Array | undefined {
    if (this.#at >= this.pcm.length) {
      this.#finish();
      return undefined;
    }
    this.#frame.fill(0);
    this.#frame.set(this.pcm.subarray(this.#at, this.#at + FRAME));
    this.#at += FRAME;
    return this.#frame;
  }
}

const failed = (reason: TransferFailReason, detail: string): TransferResult => ({
  ok: false,
  reason,
  detail,
});

/** The warm transfer of `caller` to `target`: resolves once joined (ok) or given back. */
export async function warmTransfer(
  caller: WarmLine,
  target: string,
  warm: WarmRequest,
): Promise<TransferResult> {
  const legs = caller.warmLegs;
  if (!legs) {
    return failed("refused", "This SIP line cannot place a warm transfer's call.");
  }
  const refusal = await legs.refusal(target);
  if (refusal) return failed("refused", refusal);
  caller.hold(new HoldAudio());
  // Synthesised while the person's phone rings, so they hear it as soon as they answer.
  const whisper = warm.speak(warm.whisper).then(
    (pcm) => ({ pcm }),
    (err) => ({ error: (err as Error).message }),
  );
  const leg = legs.place(target, warm.ringTimeoutMs);
  // The caller hanging up, or the call ending here (the brain's EndSession), gives the person's
  // call up while it rings.
  const offs = [caller.onEnded.on(() => leg.abandon()), caller.onReleased.on(() => leg.abandon())];
  const outcome = await leg.outcome;
  for (const off of offs) off();
  if (!outcome.ok) {
    caller.hold(undefined);
    return failed(outcome.reason, outcome.detail);
  }
  const person = outcome.line;
  const giveBack = (reason: TransferFailReason, detail: string) => {
    void person.release();
    caller.hold(undefined);
    return failed(reason, detail);
  };
  if (caller.isOver) return giveBack("failed", "The caller hung up before the person answered.");
  const spoken = await whisper;
  if ("error" in spoken) {
    return giveBack("failed", `The whisper could not be synthesised: ${spoken.error}`);
  }
  const player = new OncePlayer(spoken.pcm);
  person.relay(player);
  const ended = await Promise.race([
    player.done.then(() => "played" as const),
    person.onEnded.once().then(() => "person" as const),
    caller.onEnded.once().then(() => "caller" as const),
  ]);
  if (ended === "person" || person.isOver) {
    return giveBack("declined", `${target} hung up during the whisper.`);
  }
  if (ended === "caller" || caller.isOver) {
    return giveBack("failed", "The caller hung up during the whisper.");
  }
  caller.note("whisper_played", { ms: Math.round(spoken.pcm.length / 48) });
  // The person may hang up on us meanwhile: that is what a Replaces that worked does.
  const referred = await caller.referReplacing(person, REPLACES_OUTCOME_MS);
  if (referred?.ok) {
    void caller.release();
    void person.release();
    return { ok: true, detail: `joined to ${target} by REFER with Replaces (${referred.detail})` };
  }
  if (caller.isOver) return giveBack("failed", "The caller hung up before being joined.");
  if (person.isOver) return giveBack("declined", `${target} hung up before being joined.`);
  bridge(caller, person, outcome.callId);
  const why = referred ? ` (${referred.detail})` : "";
  return { ok: true, detail: `bridged to ${target} by the worker${why}` };
}

/**
 * Each leg hears the other from now on; the first to hang up (or to fall silent past the RTP
 * timeout) ends both. The caller's session ends at the join ("transferred"); how long the two
 * talked is added to its log afterwards (bridge_ended).
 */
function bridge(caller: WarmLine, person: WarmLine, personCallId: string): void {
  caller.bridged = true;
  const toPerson = new RelaySource();
  const toCaller = new RelaySource();
  const offs = [
    caller.heard.on((pcm) => toPerson.push(pcm)),
    person.heard.on((pcm) => toCaller.push(pcm)),
  ];
  person.relay(toPerson);
  caller.relay(toCaller);
  caller.note("bridged", { call_id: personCallId });
  const started = performance.now();
  let over = false;
  const end = (by: "caller" | "person") => {
    if (over) return;
    over = true;
    for (const off of offs.splice(0)) off();
    caller.note("bridge_ended", { by, bridged_ms: Math.round(performance.now() - started) });
    void caller.release();
    void person.release();
  };
  offs.push(caller.onEnded.on(() => end("caller")), person.onEnded.on(() => end("person")));
  // Either may already have gone between the whisper's end and now.
  if (caller.isOver) end("caller");
  else if (person.isOver) end("person");
}
