import { clipsOf, phoneBand } from "./data.ts";
import { scriptsFor } from "./phrases.ts";
import { ProsodyTrack } from "../../media/turn/prosody.ts";
for (const l of ["en", "hi"]) {
  const clips = (await clipsOf(scriptsFor(l))).filter((c) =>
    c.role === "turn" && (c.pauseMs === 600 || c.pauseMs === 0)
  );
  for (const band of ["16k", "8k"]) {
    const out: Record<string, string[]> = {};
    for (const c of clips) {
      const pcm = band === "16k" ? c.pcm : phoneBand(c.pcm);
      const t = new ProsodyTrack();
      let at = 0;
      c.key.segments.forEach((s, i) => {
        const up = Math.round(s.endMs * 16) + 320;
        t.push(pcm.subarray(at, up));
        at = up;
        const q = t.cuesAt(s.endMs);
        const k = `${c.kind} ${i === c.key.segments.length - 1 ? "END" : "mid"}`;
        (out[k] ??= []).push(
          `${q.pitch[0]}${q.finalFall ? "F" : ""}${q.semitones}/${q.endSemitones}`,
        );
      });
    }
    console.log(l, band);
    for (const [k, v] of Object.entries(out).sort()) console.log("  ", k.padEnd(16), v.join(" "));
  }
}
