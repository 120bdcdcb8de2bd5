// An outbound call's answering-machine watch (issue 34): from the answer, the callee's 16 kHz
// frames and their Silero VAD frames go to the detector (media/phone/machine_detection.ts), and
// its outcomes become what the call does, per the dial's machine_detection:
// - human: the held greeting plays (the greeting gate opens, greeting_gate.ts ON_DETECTION);
// - machine, hang_up: the call ends `machine` (the line hangs up; nothing was spoken);
// - machine, leave_message: nothing is spoken until the beep ended (or none is coming), then the
//   held greeting plays into the machine's recording.
// Each outcome is logged (worker/machine_detected, worker/beep) and told to the brain
// (MachineDetected, Beep), held until the brain is connected. The watch stops at its last
// outcome: the detector's work and its VAD stream last the few seconds of the answer only.
//
// Its own VAD stream, on the process-wide model, hears the same frames as the call's: while the
// greeting is held the callee's audio does not reach the call's caller audio (an answering
// machine's greeting, a person's "Hello?" are not turns), so the call's VAD has no frames to give.
import type { AmdOutcome } from "../phone/machine_detection.ts";
import { MachineDetection } from "../phone/machine_detection.ts";
import type { VadFrame, VoiceActivity } from "../vad/voice_activity.ts";
import type { SessionEventWriter } from "../../common/session_events.ts";
import type { DetectionFrame } from "./brain_events.ts";

/** The dial's machine_detection when detection runs (common/dial.ts, not `off`). */
export type WatchMode = "hang_up" | "leave_message";

export interface MachineWatchOptions {
  mode: WatchMode;
  /** A VAD stream of the call's own model whose per-frame scores reach `onFrame`. */
  openVad(onFrame: (frame: VadFrame) => void): Promise<VoiceActivity>;
  log: Pick<SessionEventWriter, "add">;
  /** A machine on a hang_up call: end it `machine`. */
  hangUp(): void;
}

type ToBrain = (kind: DetectionFrame, body: Record<string, unknown>) => void;

export class MachineWatch {
  /** Resolves with why the greeting may play: "human", "beep" or "no_beep". */
  readonly greetingMayPlay: Promise<string>;
  readonly #amd = new MachineDetection({ sampleRate: 16000 });
  #release!: (why: string) => void;
  #vad?: VoiceActivity;
  /** Frames heard before the VAD stream opened (it opens at once; kept so none is skipped). */
  #early: Int16Array[] | undefined = [];
  #stopped = false;
  /** What the brain is to be told, until it is connected. */
  #forBrain: [DetectionFrame, Record<string, unknown>][] = [];
  #toBrain?: ToBrain;

  constructor(private readonly opts: MachineWatchOptions) {
    this.greetingMayPlay = new Promise((r) => (this.#release = r));
    opts.openVad((f) => this.#outcomes(this.#amd.handle({ type: "vad", ...f }))).then((vad) => {
      if (this.#stopped) return vad.close();
      this.#vad = vad;
      for (const pcm of this.#early?.splice(0) ?? []) this.#push(pcm);
    }, () => {
      // No VAD: the decision comes from the audio alone (a beep) or at the ceiling, as a person.
      this.#early = undefined;
    });
  }

  /** Whether the detector still listens. */
  get listening(): boolean {
    return !this.#stopped;
  }

  /** One 20 ms frame of the callee at 16 kHz, from the answer on (copied where it is kept). */
  hear(pcm: Int16Array): void {
    if (this.#stopped) return;
    this.#outcomes(this.#amd.handle({ type: "audio", pcm }));
    if (this.#stopped) return;
    if (this.#vad) this.#push(pcm);
    else this.#early?.push(pcm.slice());
  }

  /** The brain is connected: what it was to be told goes now, and the rest as it comes. */
  brainReady(send: ToBrain): void {
    this.#toBrain = send;
    for (const [kind, body] of this.#forBrain.splice(0)) send(kind, body);
  }

  /** The call ended: the detector and its VAD stream stop. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#vad?.close();
  }

  #push(pcm: Int16Array): void {
    // A failed VAD push leaves the detector to its audio rules and its ceiling.
    this.#vad!.push(pcm).catch(() => {});
  }

  #outcomes(outcomes: AmdOutcome[]): void {
    for (const o of outcomes) {
      if (this.#stopped) return;
      if (o.type === "decision") this.#decided(o.decision, o.atMs, o.why);
      else if (o.type === "beep") this.#recording(o.atMs, true, Math.round(o.hz), "");
      else this.#recording(o.atMs, false, 0, o.why);
    }
  }

  #decided(outcome: "human" | "machine", atMs: number, why: string): void {
    const at_ms = Math.round(atMs);
    this.opts.log.add("worker", "machine_detected", { outcome, at_ms, why });
    this.#tell("machine_detected", { outcome, at_ms, why });
    if (outcome === "human") {
      this.stop();
      this.#release("human");
    } else if (this.opts.mode === "hang_up") {
      this.stop();
      this.opts.hangUp();
    }
  }

  /** A leave_message machine records from here: the held greeting plays. */
  #recording(atMs: number, heard: boolean, hz: number, why: string): void {
    const body = { at_ms: Math.round(atMs), heard, hz, why };
    this.opts.log.add("worker", "beep", body);
    this.#tell("beep", body);
    this.stop();
    this.#release(heard ? "beep" : "no_beep");
  }

  #tell(kind: DetectionFrame, body: Record<string, unknown>): void {
    if (this.#toBrain) this.#toBrain(kind, body);
    else this.#forBrain.push([kind, body]);
  }
}
