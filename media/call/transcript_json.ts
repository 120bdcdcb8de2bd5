// The transcript stored beside a recording in the customer's bucket (docs/storage.md): one entry
// per turn, placed on the recording's timeline (`at_seconds` from the start of the WAV, which
// starts when the session does), with what the caller said and what the bot said, heard and cut.
import type { TurnRecord } from "./turn_record.ts";

export interface StoredTranscript {
  version: 1;
  session_id: string;
  agent_id: string;
  started_at: string | null;
  ended_at: string | null;
  recording: { key: string; format: "wav"; sample_rate: 16000; channels: ["caller", "bot"] };
  turns: {
    turn_id: string;
    trigger: string;
    at_seconds: number | null;
    caller: string | null;
    bot: { text: string; heard: string; cut_off: boolean }[];
    interrupted: boolean;
    latency_ms: Record<string, number>;
  }[];
}

export function storedTranscript(s: {
  session_id: string;
  agent_id: string;
  started_at: Date | null;
  ended_at: Date | null;
  wav_key: string;
  turns: TurnRecord[];
}): StoredTranscript {
  const zero = s.started_at?.getTime();
  return {
    version: 1,
    session_id: s.session_id,
    agent_id: s.agent_id,
    started_at: s.started_at?.toISOString() ?? null,
    ended_at: s.ended_at?.toISOString() ?? null,
    recording: { key: s.wav_key, format: "wav", sample_rate: 16000, channels: ["caller", "bot"] },
    turns: s.turns.map((t) => ({
      turn_id: t.turn_id,
      trigger: t.trigger,
      at_seconds: zero === undefined
        ? null
        : Math.max(0, Math.round((Date.parse(t.started_at) - zero) / 10) / 100),
      caller: t.user_text,
      bot: t.units.map((u) => ({ text: u.text, heard: u.heard, cut_off: u.cut_off })),
      interrupted: t.interrupted,
      latency_ms: t.latency_ms as Record<string, number>,
    })),
  };
}
