// Answering machine detection (media/phone/machine_detection.ts) over the labelled set
// (bench/amd/labelled_set.ts): accuracy per class with the confusion counts, decision time from
// the answer (p50/p99, nearest rank), beep detection rate and timing against each beep's true
// start and end, and false beeps. Figures in docs/machine-detection.md.
// Run: deno task bench machine_detection   (or deno run -A bench/machine_detection.ts)
// AMD_JSON=path also writes every clip's outcomes there.
import { labelledSet, readClip } from "./amd/labelled_set.ts";
import { decide, scoreClip, type ScoredClip } from "./amd/run_detector.ts";
import { percentile } from "./harness/stats.ts";
import { markdownTable } from "./harness/table.ts";
import {
  type AmdOutcome,
  DEFAULT_MACHINE_DETECTION,
  type MachineDetectionOptions,
} from "../media/phone/machine_detection.ts";

const started = performance.now();
const set = await labelledSet();
const setSeconds = (performance.now() - started) / 1000;

interface Row {
  id: string;
  label: "human" | "machine";
  text: string;
  voice: string;
  snrDb: number;
  heldOut: boolean;
  decision?: AmdOutcome & { type: "decision" };
  beep?: AmdOutcome & { type: "beep" };
  noBeep?: AmdOutcome & { type: "no_beep" };
  beepStartMs?: number;
  beepEndMs?: number;
  detectorMs: number;
  audioMs: number;
}

// Silero scores each clip once; the detector (pure) then runs on the scores with each setting.
const scored: ScoredClip[] = [];
for (const clip of set) scored.push(await scoreClip(await readClip(clip)));

const rowsWith = (options: MachineDetectionOptions): Row[] =>
  set.map((clip, i) => {
    const { outcomes, detectorMs } = decide(scored[i], options);
    const r = clip.recipe;
    return {
      id: clip.id,
      label: r.label,
      text: r.text,
      voice: `${r.voice.engine}:${r.voice.name}@${r.voice.rate}`,
      snrDb: r.snrDb,
      heldOut: r.heldOut === true,
      decision: outcomes.find((o) => o.type === "decision"),
      beep: outcomes.find((o) => o.type === "beep"),
      noBeep: outcomes.find((o) => o.type === "no_beep"),
      beepStartMs: clip.beepStartMs,
      beepEndMs: clip.beepEndMs,
      detectorMs,
      audioMs: clip.durationMs,
    };
  });
const rows = rowsWith({});

const fmt = (x: number) => (Number.isFinite(x) ? Math.round(x).toString() : "–");
const classes = ["human", "machine"] as const;
const confusionOf = (rows: Row[]) =>
  classes.map((label) => {
    const of = rows.filter((r) => r.label === label);
    const said = (d: string) => of.filter((r) => r.decision?.decision === d).length;
    // A clip shorter than the ceiling could end undecided; the set's clips all outlast it.
    const times = of.map((r) => r.decision?.atMs ?? Infinity);
    return {
      label,
      n: of.length,
      human: said("human"),
      machine: said("machine"),
      accuracy: said(label) / of.length,
      p50: percentile(times, 50),
      p99: percentile(times, 99),
    };
  });
const all = confusionOf(rows);

console.log(
  `labelled set: ${rows.length} clips (${all[0].n} human, ${all[1].n} machine; ` +
    `${rows.filter((r) => r.beepStartMs !== undefined).length} with a beep; ` +
    `${rows.filter((r) => r.heldOut).length} held out), ` +
    `${fmt(rows.reduce((s, r) => s + r.audioMs, 0) / 1000)} s of audio, ready in ` +
    `${setSeconds.toFixed(1)} s`,
);
const parts: [string, Row[]][] = [
  ["tuning", rows.filter((r) => !r.heldOut)],
  ["held out", rows.filter((r) => r.heldOut)],
  ["all", rows],
];
console.log(markdownTable([
  ["part", "truth", "clips", "→ human", "→ machine", "accuracy", "decision p50 ms", "p99 ms"],
  ...parts.flatMap(([name, part]) =>
    confusionOf(part).map((c) => [
      name,
      c.label,
      String(c.n),
      String(c.human),
      String(c.machine),
      `${(100 * c.accuracy).toFixed(1)} %`,
      fmt(c.p50),
      fmt(c.p99),
    ])
  ),
]));
for (const [name, part] of parts) {
  const correct = part.filter((r) => r.decision?.decision === r.label).length;
  console.log(
    `${name}: accuracy ${(100 * correct / part.length).toFixed(1)} % (${correct}/${part.length})`,
  );
}

// Beeps: only where the detector said machine (a beep is reported after a machine only).
const beeped = rows.filter((r) => r.beepStartMs !== undefined);
const asMachine = beeped.filter((r) => r.decision?.decision === "machine");
const found = asMachine.filter((r) => r.beep && Math.abs(r.beep.startMs - r.beepStartMs!) <= 100);
const startErr = found.map((r) => Math.abs(r.beep!.startMs - r.beepStartMs!));
const afterStart = found.map((r) => r.beep!.atMs - r.beepStartMs!);
const afterEnd = found.map((r) => r.beep!.atMs - r.beepEndMs!);
const falseBeeps = rows.filter((r) =>
  r.beep && (r.beepStartMs === undefined || Math.abs(r.beep.startMs - r.beepStartMs) > 100)
);
console.log(
  `beeps: ${found.length}/${beeped.length} found within 100 ms of their start ` +
    `(${asMachine.length} of those clips decided machine); false beeps: ${falseBeeps.length}`,
);
console.log(markdownTable([
  ["beep timing, ms", "p50", "p99", "max"],
  ...[
    ["|reported start − true start|", startErr, 50],
    ["event − true start", afterStart, 50],
    ["event − true end", afterEnd, 50],
  ].map(([name, xs]) => {
    const v = xs as number[];
    return [name as string, fmt(percentile(v, 50)), fmt(percentile(v, 99)), fmt(Math.max(...v))];
  }),
]));
const silent = rows.filter((r) =>
  r.label === "machine" && r.beepStartMs === undefined && r.decision?.decision === "machine"
);
console.log(
  `machines without a beep: ${silent.filter((r) => r.noBeep?.why === "silence").length}/` +
    `${silent.length} given no_beep (silence), at ${
      silent.filter((r) => r.noBeep).map((r) => fmt(r.noBeep!.atMs)).join(", ")
    } ms`,
);
const cpu = rows.reduce((s, r) => s + r.detectorMs, 0);
const heard = rows.reduce((s, r) => s + (r.beep?.atMs ?? r.noBeep?.atMs ?? r.decision!.atMs), 0);
console.log(
  `detector CPU (without the VAD): ${(1000 * cpu / heard).toFixed(2)} ms per audio second`,
);

const wrong = rows.filter((r) => r.decision?.decision !== r.label);
for (const r of wrong) {
  console.log(
    `  wrong${
      r.heldOut ? " (held out)" : ""
    }: ${r.label} → ${r.decision?.decision} (${r.decision?.why} at ${
      fmt(r.decision!.atMs)
    } ms) ${r.voice} snr ${r.snrDb} "${r.text}"`,
  );
}
for (const r of beeped.filter((r) => r.decision?.decision === "machine" && !found.includes(r))) {
  console.log(
    `  beep missed: ${r.voice} true ${fmt(r.beepStartMs!)} got ${
      r.beep ? fmt(r.beep.startMs) : r.noBeep ? `no_beep ${r.noBeep.why}` : "nothing"
    } "${r.text.slice(0, 40)}"`,
  );
}
// The one trade-off that moves most: the silence that ends a greeting. Longer saves machines whose
// greeting pauses after a short first sentence; it is also how long a person waits after "hello?".
const sweep = [800, 1000, 1200, 1500].map((ms) => {
  const rs = rowsWith({ afterGreetingSilenceMs: ms });
  const acc = (label: string) => {
    const of = rs.filter((r) => r.label === label);
    return `${of.filter((r) => r.decision?.decision === label).length}/${of.length}`;
  };
  const humanTimes = rs.filter((r) => r.label === "human" && r.decision?.decision === "human")
    .map((r) => r.decision!.atMs);
  return [
    `${ms}${ms === DEFAULT_MACHINE_DETECTION.afterGreetingSilenceMs ? " (default)" : ""}`,
    acc("human"),
    acc("machine"),
    fmt(percentile(humanTimes, 50)),
    fmt(percentile(humanTimes, 99)),
  ];
});
console.log(markdownTable([
  ["afterGreetingSilenceMs", "humans right", "machines right", "human p50 ms", "human p99 ms"],
  ...sweep,
]));
const json = Deno.env.get("AMD_JSON");
if (json) await Deno.writeTextFile(json, JSON.stringify(rows, null, 1));
