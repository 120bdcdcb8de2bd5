// network.ts's figures: per call what a caller measured, per row the pooled figures, and the
// table with each row's ratios to the clean row of the same caller in the same run.
import { werCount } from "../../media/stt/wer.ts";
import { percentile } from "../harness/stats.ts";

export interface TurnFigures {
  said: string;
  heard: string;
  /** End of the caller's speech → first bot audio at the caller. */
  latencyMs?: number;
}

export interface CallFigures {
  completed: boolean;
  failure?: string;
  /** The caller saw the call's last messages (the call-ended notice, and peerLeft for werift). */
  lastDelivered: boolean;
  /** The worker's drain of the chat channel was acknowledged (`last_messages.delivered`). */
  workerDelivered?: boolean;
  /** The session record's status/end_reason. */
  endReason?: string;
  /** How long the worker waited for that acknowledgement. */
  drainMs?: number;
  /** Why the last messages do not count as delivered, when they do not. */
  undelivered?: string;
  turns: TurnFigures[];
  bargeMs?: number;
  recordingSeconds?: number;
  callSeconds?: number;
  callerAudio?: Record<string, number>;
}

export interface Row {
  caller: string;
  label: string;
  calls: CallFigures[];
  /** The worker's CPU over the row's calls per second of call. */
  cpuMsPerCallSecond: number;
  receiverMsPerCallSecond: number;
  failures: string[];
}

export function summariseRow(
  caller: string,
  label: string,
  calls: CallFigures[],
  cpuMs: number,
  receiverMsPerCallSecond: number,
): Row {
  const seconds = calls.reduce((s, c) => s + (c.callSeconds ?? 0), 0);
  return {
    caller,
    label,
    calls,
    cpuMsPerCallSecond: seconds > 0 ? cpuMs / seconds : NaN,
    receiverMsPerCallSecond,
    failures: calls.filter((c) => c.failure).map((c) => `${c.failure} (ended ${c.endReason})`),
  };
}

/** Word errors pooled over pairs (errors over all reference words), not a mean of rates. */
export function werTally(pairs: { reference: string; hypothesis: string }[]): number {
  let errors = 0, words = 0;
  for (const p of pairs) {
    const c = werCount(p.reference, p.hypothesis);
    errors += c.errors;
    words += c.words;
  }
  return words === 0 ? NaN : errors / words;
}

/** |recording − call| / call for each call that has both. */
export function recordingErrors(calls: CallFigures[]): number[] {
  return calls.filter((c) => c.recordingSeconds !== undefined && c.callSeconds)
    .map((c) => Math.abs(c.recordingSeconds! - c.callSeconds!) / c.callSeconds!);
}

export interface RowFigures {
  completed: string;
  lastDelivered: string;
  workerAcked: string;
  wer: number;
  werRatio: number;
  werVsClean: number;
  p50: number;
  p99: number;
  p50Ratio: number;
  barge: number[];
  recording: number[];
  receiverShare: number;
  callerLoss?: { lost: number; received: number; recovered: number; concealed: number };
}

/** A row's figures; `clean` is the clean row of the same caller (ratios and what it heard). */
export function rowFigures(row: Row, clean: Row | undefined): RowFigures {
  const turns = row.calls.flatMap((c) => c.turns);
  const wer = werTally(turns.map((t) => ({ reference: t.said, hypothesis: t.heard })));
  const cleanHeard = new Map<string, string>();
  for (const t of clean?.calls.flatMap((c) => c.turns) ?? []) {
    if (!cleanHeard.has(t.said)) cleanHeard.set(t.said, t.heard);
  }
  const werVsClean = werTally(
    turns.filter((t) => cleanHeard.has(t.said))
      .map((t) => ({ reference: cleanHeard.get(t.said)!, hypothesis: t.heard })),
  );
  const latencies = turns.flatMap((t) => t.latencyMs === undefined ? [] : [t.latencyMs]);
  const cleanTurns = clean?.calls.flatMap((c) => c.turns) ?? [];
  const cleanWer = werTally(cleanTurns.map((t) => ({ reference: t.said, hypothesis: t.heard })));
  const cleanP50 = percentile(
    cleanTurns.flatMap((t) => t.latencyMs === undefined ? [] : [t.latencyMs]),
    50,
  );
  const n = row.calls.length;
  const audio = row.calls.flatMap((c) => c.callerAudio ? [c.callerAudio] : []);
  const sum = (k: string) => audio.reduce((s, a) => s + (a[k] ?? 0), 0);
  return {
    completed: `${row.calls.filter((c) => c.completed).length}/${n}`,
    lastDelivered: `${row.calls.filter((c) => c.lastDelivered).length}/${n}`,
    workerAcked: `${row.calls.filter((c) => c.workerDelivered).length}/${n}`,
    wer,
    werRatio: wer / cleanWer,
    werVsClean,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    p50Ratio: percentile(latencies, 50) / cleanP50,
    barge: row.calls.flatMap((c) => c.bargeMs === undefined ? [] : [c.bargeMs]),
    recording: recordingErrors(row.calls),
    receiverShare: row.receiverMsPerCallSecond / row.cpuMsPerCallSecond,
    callerLoss: audio.length
      ? {
        lost: sum("lost"),
        received: sum("received"),
        recovered: sum("recovered"),
        concealed: sum("concealed"),
      }
      : undefined,
  };
}

const pct = (x: number, digits = 1) => Number.isFinite(x) ? `${(x * 100).toFixed(digits)} %` : "–";
const times = (x: number) => Number.isFinite(x) ? `${x.toFixed(2)}×` : "–";
const ms = (x: number) => Number.isFinite(x) ? String(Math.round(x)) : "–";

/** The label of the row every other row of the same caller is compared with. */
export const CLEAN = "clean";

/** The markdown table of every row, ratios against the clean row of the same caller. */
export function formatTable(rows: Row[]): string {
  const head = [
    "caller",
    "condition",
    "completed",
    "last msgs at caller",
    "worker's drain acked",
    "WER",
    "WER × clean",
    "WER vs clean heard",
    "EoS→audio p50/p99 ms",
    "p50 × clean",
    "barge-in stop p50/max ms",
    "rec. length error mean/max",
    "worker: caller pkts lost / recovered",
    "receiver % of call CPU",
  ];
  const lines = [`| ${head.join(" | ")} |`, `| ${head.map(() => "---").join(" | ")} |`];
  for (const row of rows) {
    const clean = rows.find((r) => r.caller === row.caller && r.label === CLEAN);
    const f = rowFigures(row, clean);
    const rec = f.recording;
    const loss = f.callerLoss;
    lines.push(`| ${
      [
        row.caller,
        row.label,
        f.completed,
        f.lastDelivered,
        f.workerAcked,
        pct(f.wer),
        times(f.werRatio),
        pct(f.werVsClean),
        `${ms(f.p50)}/${ms(f.p99)}`,
        times(f.p50Ratio),
        f.barge.length ? `${ms(percentile(f.barge, 50))}/${ms(Math.max(...f.barge))}` : "–",
        rec.length
          ? `${pct(rec.reduce((a, b) => a + b, 0) / rec.length, 2)}/${pct(Math.max(...rec), 2)}`
          : "–",
        loss
          ? `${pct(loss.lost / (loss.received + loss.lost))} / ${loss.recovered}+${loss.concealed}c`
          : "–",
        pct(f.receiverShare, 2),
      ].join(" | ")
    } |`);
  }
  return lines.join("\n");
}
