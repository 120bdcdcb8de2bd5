// What the caller's voice says at each pause of the bench's turns, read by the worker's own
// ProsodyTrack (media/turn/prosody.ts) at the key's phrase ends: how often a mid-turn pause looks
// like a turn's end (a final fall) against how often a true end does. The census that says
// whether a prosody rule can help on this data at all.
import { ProsodyTrack } from "../../media/turn/prosody.ts";
import type { Clip } from "./data.ts";

export interface VoiceCensus {
  /** Mid-turn pauses / true ends read: n, final falls, and pitch moves. */
  mid: Record<string, number>;
  end: Record<string, number>;
}

export const emptyCensus = (): VoiceCensus => ({ mid: { n: 0 }, end: { n: 0 } });

/** Adds the cues at each phrase end of a turn clip (audio `pcm`, the clip's band) to `census`. */
export function countVoice(census: VoiceCensus, clip: Clip, pcm: Int16Array): void {
  if (clip.role !== "turn") return;
  const track = new ProsodyTrack();
  let at = 0;
  clip.key.segments.forEach((seg, i) => {
    const upTo = Math.round(seg.endMs * 16) + 320; // a frame past the end, as the VAD sees it
    track.push(pcm.subarray(at, upTo));
    at = upTo;
    const cues = track.cuesAt(seg.endMs);
    const into = i === clip.key.segments.length - 1 ? census.end : census.mid;
    into.n++;
    into[cues.pitch] = (into[cues.pitch] ?? 0) + 1;
    if (cues.finalFall) into.finalFall = (into.finalFall ?? 0) + 1;
    if (cues.lowEnd) into.lowEnd = (into.lowEnd ?? 0) + 1;
    if (cues.held) into.held = (into.held ?? 0) + 1;
  });
}

/** "n: fall a, final b, rise c, level d" for a table cell. */
export function describe(c: Record<string, number>): string {
  const n = (k: string) => c[k] ?? 0;
  return `${c.n}: ended low ${n("lowEnd")}, final fall ${n("finalFall")}, falling ${
    n("falling")
  }, rising ${n("rising")}, level ${n("level")}, unknown ${n("unknown")}`;
}
