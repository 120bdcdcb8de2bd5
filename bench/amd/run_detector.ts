// One clip through the detector as a phone call's worker would run it: 8 kHz line audio in 20 ms
// frames, each resampled to 16 kHz (media/phone/edge_audio.ts's FrameResampler, the caller edge's
// own) and scored by Silero (media/vad/voice_activity.ts, its per-frame probabilities); the 8 kHz
// frame goes to the detector first, then the VAD frames it completed. The VAD's scores are kept
// apart (scoreClip) so one scoring serves several detector settings.
import { CALLER_FRAME, FrameResampler, LINE_FRAME } from "../../media/phone/edge_audio.ts";
import {
  type AmdOutcome,
  MachineDetection,
  type MachineDetectionOptions,
} from "../../media/phone/machine_detection.ts";
import { type VadFrame, VoiceActivity } from "../../media/vad/voice_activity.ts";

/** A clip's 8 kHz frames, each with the VAD frames it completed. */
export interface ScoredClip {
  frames: { pcm: Int16Array; vad: VadFrame[] }[];
}

export async function scoreClip(pcm8k: Int16Array): Promise<ScoredClip> {
  const pending: VadFrame[] = [];
  const vad = await VoiceActivity.create({}, { onFrame: (f) => pending.push(f) });
  const up = new FrameResampler(8000, 16000, LINE_FRAME, CALLER_FRAME);
  const frames: ScoredClip["frames"] = [];
  try {
    for (let o = 0; o + LINE_FRAME <= pcm8k.length; o += LINE_FRAME) {
      const pcm = pcm8k.subarray(o, o + LINE_FRAME);
      await vad.push(up.push(pcm));
      frames.push({ pcm, vad: pending.splice(0) });
    }
  } finally {
    vad.close();
    up.close();
  }
  return { frames };
}

export interface DetectorRun {
  outcomes: AmdOutcome[];
  /** CPU time of the detector alone (not the VAD), ms. */
  detectorMs: number;
}

/** Runs a scored clip (from the answer on) through a fresh detector; stops when it is done. */
export function decide(clip: ScoredClip, options: MachineDetectionOptions = {}): DetectorRun {
  const amd = new MachineDetection(options);
  const outcomes: AmdOutcome[] = [];
  const started = performance.now();
  for (const { pcm, vad } of clip.frames) {
    outcomes.push(...amd.handle({ type: "audio", pcm }));
    for (const f of vad) outcomes.push(...amd.handle({ type: "vad", ...f }));
    if (amd.state === "human" || amd.state === "done") break;
  }
  return { outcomes, detectorMs: performance.now() - started };
}

/** scoreClip then decide. */
export async function runDetector(
  pcm8k: Int16Array,
  options: MachineDetectionOptions = {},
): Promise<DetectorRun> {
  return decide(await scoreClip(pcm8k), options);
}
