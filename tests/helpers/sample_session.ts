// A realistic finished session written straight into the database, the way the worker leaves
// it (turn records, wire-frame log, usage, recording): for the console's tests.
import type { Sql } from "../../db/client.ts";
import { newId } from "../../common/ids.ts";
import type { LoggedEvent } from "../../common/session_events.ts";

export interface SampleSession {
  session_id: string;
  /** Texts the page must show: heard, cut off, caller's words. */
  heard: string;
  cut: string;
  said: string;
}

/** Offsets (ms) of the seeded call; the test reads the latencies it must show from here. */
export const SAMPLE_LATENCIES = {
  t1: {
    end_of_turn: 452,
    to_brain: 2,
    brain: 388,
    synthesis: 96,
    end_to_first_audio: 938,
    recognition: 71,
    heard_at_caller: 1_012,
  },
};

export async function seedSession(
  sql: Sql,
  input: {
    agent_id: string;
    workspace_id: string;
    display_name?: string | null;
    recording_url?: string | null;
    created_at?: Date;
    status?: "ended" | "failed" | "active";
  },
): Promise<SampleSession> {
  const id = newId("ses");
  const created = input.created_at ?? new Date(Date.now() - 60_000);
  const at = (ms: number) => new Date(created.getTime() + ms);
  const started = at(900);
  const ended = at(24_900);
  const heard = "We open at nine in the morning,";
  const cut = " and on Sundays we open at ten, except on public holidays.";
  const said = "What time do you open tomorrow?";
  const l = SAMPLE_LATENCIES.t1;
  const turns = [
    {
      turn_id: "greeting",
      trigger: "greeting",
      user_text: null,
      started_at: started.toISOString(),
      marks: { user_turn_sent: 3, first_unit: 141, first_audio: 233, done: 2600 },
      latency_ms: { brain: 138, synthesis: 92 },
      units: [{
        unit_id: "u1",
        text: "Hello, this is Acme support.",
        heard: "Hello, this is Acme support.",
        cut_off: false,
      }],
      interrupted: false,
    },
    {
      turn_id: "t1",
      trigger: "speech",
      user_text: said,
      started_at: at(4_100).toISOString(),
      marks: {
        speech_ended: 1_800,
        final_requested: 1_800 + 160,
        final_text: 1_800 + 160 + l.recognition,
        end_of_turn: 1_800 + l.end_of_turn,
        user_turn_sent: 1_800 + l.end_of_turn + l.to_brain,
        first_unit: 1_800 + l.end_of_turn + l.to_brain + l.brain,
        first_audio: 1_800 + l.end_to_first_audio,
      },
      latency_ms: l,
      units: [{ unit_id: "u2", text: heard + cut, heard, cut_off: true }],
      interrupted: true,
    },
    {
      turn_id: "t2",
      trigger: "idle",
      user_text: null,
      started_at: at(15_000).toISOString(),
      marks: { user_turn_sent: 1, first_unit: 301, first_audio: 395 },
      latency_ms: { brain: 300, synthesis: 94 },
      units: [{ unit_id: "u3", text: "Are you still there?", heard: "Are you", cut_off: false }],
      interrupted: false,
    },
  ];
  const status = input.status ?? "ended";
  await sql`insert into sessions (id, agent_id, workspace_id, status, end_reason, agent_input,
      display_name, metadata, record_requested, record_effective, recording_url, turns,
      created_at, connected_at, started_at, ended_at)
    values (${id}, ${input.agent_id}, ${input.workspace_id}, ${status},
      ${status === "active" ? null : "caller_hung_up"},
      ${sql.json({ customer_tier: "gold" })}, ${input.display_name ?? null},
      ${sql.json({ ticket: "T-1042", channel: "web" })}, ${true}, ${input.recording_url != null},
      ${input.recording_url ?? null}, ${sql.json(turns)}, ${created}, ${at(400)}, ${started},
      ${status === "active" ? null : ended})`;
  await sql`insert into usage (session_id, workspace_id, agent_id, call_seconds,
      recognised_seconds, synthesized_characters)
    values (${id}, ${input.workspace_id}, ${input.agent_id}, 24, 3.2, 117)`;
  // As the worker writes them (common/session_events.ts), `at` in ms after creation.
  const page = (type: string, data: unknown) => JSON.stringify({ label: "rtvi-ai", type, data });
  const events: LoggedEvent<number>[] = [
    { at: 400, source: "worker", kind: "offer_accepted", data: { pc_id: "pc_1" } },
    { at: 880, source: "worker", kind: "dtls_connected", data: { by: "connected" } },
    { at: 900, source: "worker", kind: "call_started", data: { about: null } },
    { at: 902, source: "to_brain", kind: "session_start", data: { seq: 1, session_id: id } },
    {
      at: 1_041,
      source: "from_brain",
      kind: "speech_unit",
      data: { seq: 1, timestamp_ms: 1_040, unit_id: "u1", text: turns[0].units[0].text },
    },
    {
      at: 5_900,
      source: "to_page",
      kind: "chat",
      data: page("user-transcription", { text: said, final: true }),
    },
    {
      at: 6_147,
      source: "to_brain",
      kind: "user_turn",
      data: { seq: 2, turn_id: "t1", text: said },
    },
    {
      at: 6_535,
      source: "from_brain",
      kind: "speech_unit",
      data: { seq: 2, timestamp_ms: 6_530, unit_id: "u2", text: heard + cut },
    },
    {
      at: 7_400,
      source: "to_brain",
      kind: "heard",
      data: { seq: 3, unit_id: "u2", turn_id: "t1", text: heard, cut_off: true },
    },
    {
      at: 20_000,
      source: "page",
      kind: "client-message",
      data: { t: "note", d: { hello: "<b>world</b>" } },
    },
    {
      at: 24_900,
      source: "worker",
      kind: "call_ended",
      data: { status: "ended", reason: "caller_hung_up" },
    },
  ];
  for (const e of events) {
    await sql`insert into session_events (session_id, at, source, kind, data)
      values (${id}, ${at(e.at)}, ${e.source}, ${e.kind}, ${sql.json(e.data as never)})`;
  }
  return { session_id: id, heard, cut, said };
}
