// The webhook events and their `data` (docs/webhooks.md is the customer's description). Each body
// is `{type, timestamp, data}` as the Standard Webhooks spec suggests; db/migrations/0011 wraps
// `data` so. What is built here in TypeScript is the part the writer knows; the SQL that writes
// the fact adds the columns it returns (ids, times), in the same statement.

export const WEBHOOK_EVENT_TYPES = [
  "session.started",
  "session.ended",
  "recording.stored",
  "phone.transfer",
  "phone.keypad",
  "campaign.attempt_done",
] as const;
export type WebhookEventType = typeof WEBHOOK_EVENT_TYPES[number];

/** One turn of the transcript a customer receives: what was said and what the caller heard. */
export interface TranscriptTurn {
  turn_id: string;
  trigger: string;
  /** What the caller said (recognised) or typed; null for the greeting and the brain's Say. */
  caller: string | null;
  /** The bot's reply, unit by unit: the text, what the caller heard of it, whether it was cut. */
  bot: { text: string; heard: string; cut_off: boolean }[];
  /** The caller barged in on this turn's reply. */
  interrupted: boolean;
  started_at: string | null;
  /** The turn's latencies in ms (docs/session-record.md, latency_ms). */
  latency_ms: Record<string, number>;
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === "object" ? v as Obj : {});

/** A turn record (media/call/turn_record.ts) as the transcript shows it. */
export function transcriptTurn(turn: unknown): TranscriptTurn {
  const t = obj(turn);
  const units = Array.isArray(t.units) ? t.units.map(obj) : [];
  const latency: Record<string, number> = {};
  for (const [k, v] of Object.entries(obj(t.latency_ms))) {
    if (typeof v === "number") latency[k] = v;
  }
  return {
    turn_id: String(t.turn_id ?? ""),
    trigger: String(t.trigger ?? ""),
    caller: typeof t.user_text === "string" ? t.user_text : null,
    bot: units.map((u) => ({
      text: String(u.text ?? ""),
      heard: String(u.heard ?? ""),
      cut_off: u.cut_off === true,
    })),
    interrupted: t.interrupted === true,
    started_at: typeof t.started_at === "string" ? t.started_at : null,
    latency_ms: latency,
  };
}

/** What the writer of a session's end knows (db/sessions.ts CallOutcome, as JSON). */
export interface SessionEndFacts {
  status: "ended" | "failed";
  end_reason: string;
  brain_end_reason: string | null;
  turns: unknown[];
  recognised_seconds: number;
  synthesized_characters: number;
  by_engine: Record<string, unknown>;
  recording_url: string | null;
}

/**
 * session.ended's `data`, but for what the statement adds (session_id, agent_id, workspace_id,
 * direction, metadata, created_at, started_at, ended_at, usage.call_seconds).
 */
export function sessionEndedData(f: SessionEndFacts): Obj {
  return {
    status: f.status,
    end_reason: f.end_reason,
    brain_end_reason: f.brain_end_reason,
    transcript: f.turns.map(transcriptTurn),
    usage: {
      recognised_seconds: f.recognised_seconds,
      synthesized_characters: f.synthesized_characters,
      by_engine: f.by_engine,
    },
    recording: f.recording_url ? { url: f.recording_url } : null,
  };
}

/** recording.stored's `data`: where a session's recording now is (the storage writer sends it). */
export interface RecordingStored {
  session_id: string;
  agent_id: string;
  /** Where it is: `s3://bucket/key` for a customer's bucket, else the service's own URL. */
  url: string;
  /** The transcript beside it, when one was written. */
  transcript_url?: string | null;
  content_type: string;
  bytes: number;
  duration_seconds: number;
}

/** A logged session event, as db/events.ts appends it. */
interface LoggedInput {
  session_id: string;
  source: string;
  kind: string;
  data?: unknown;
}

/** A phone event a batch of the session log reports: its type, session and `data`. */
export interface PhoneHook {
  session_id: string;
  type: "phone.transfer" | "phone.keypad";
  data: Obj;
}

const TRANSFER_OUTCOMES: Record<string, string> = {
  transferred: "transferred",
  transfer_failed: "failed",
  transfer_refused: "refused",
};

/**
 * The webhook events in a batch of the session log: each transfer's outcome, and per session the
 * number of keys pressed in the batch, never which (the log masks sensitive digits; webhooks carry
 * none at all, sensitive or not).
 */
export function phoneHooks(events: readonly LoggedInput[]): PhoneHook[] {
  const out: PhoneHook[] = [];
  const keys = new Map<string, number>();
  for (const e of events) {
    if (e.source === "phone" && e.kind === "dtmf") {
      keys.set(e.session_id, (keys.get(e.session_id) ?? 0) + 1);
    } else if (e.source === "worker" && TRANSFER_OUTCOMES[e.kind]) {
      const d = obj(e.data);
      out.push({
        session_id: e.session_id,
        type: "phone.transfer",
        data: {
          outcome: TRANSFER_OUTCOMES[e.kind],
          target: typeof d.target === "string" ? d.target : null,
          reason: typeof d.reason === "string" ? d.reason : null,
          detail: typeof d.detail === "string" ? d.detail : null,
        },
      });
    }
  }
  for (const [session_id, n] of keys) {
    out.push({ session_id, type: "phone.keypad", data: { keys_pressed: n } });
  }
  return out;
}
