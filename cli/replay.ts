// `deno task replay SESSION_ID --brain URL`: takes a recorded session's caller turns from its
// log (sessions.get on the API's admin routes) and replays them against a brain, then prints
// what the brain answered differently and exits 1 on a difference.
import { parseArgs } from "node:util";
import { ApiUnreachable, DEFAULT_API_URL, httpAdminCall } from "./api_client.ts";
import { type LogEntry, readRecording } from "../replay/recording.ts";
import { replay } from "../replay/replay.ts";
import { diffExchanges, formatDiff } from "../replay/diff.ts";

export const USAGE = `deno task replay SESSION_ID --brain URL [flags]

Replays a recorded session's caller events (its turns, typed or recognised, page messages, idle
nudges and barge-ins) against a brain, speaking the worker's side of the brain protocol straight
to it (no audio), and prints where the brain answered differently from the recording: the units
it spoke, the actions it sent, config changes, the end. The brain sees a session of its own,
SESSION_ID-replay-<8 hex digits>, marked as a replay of SESSION_ID (SessionStart.replay; the SDKs'
session.replay), so it can keep a replay's side effects out of real systems. It gets Finalize and
End as on a live call.

  --brain URL          the brain's ws:// or wss:// URL (required)
  --api-url URL        or API_URL (default ${DEFAULT_API_URL}): the API holding the recording
  --admin-token TOKEN  or ADMIN_TOKEN (prefer the environment: flags show in ps); an sk_ key of
                       the session's agent works too
  --settle MS          quiet that ends the brain's answer to one event (default 1500)
  --timeout SECONDS    longest wait for an answer the recording had (default 20)
  -h, --help           this text

Exit status: 0 the same answers, 1 a difference (or the brain failed the protocol), 2 usage
error, the session or the API not found, the brain unreachable.
`;

export async function runReplay(
  args: string[],
  env: Record<string, string | undefined>,
  io: { out(line: string): void; err(line: string): void } = {
    out: (l) => console.log(l),
    err: (l) => console.error(l),
  },
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        brain: { type: "string" },
        "api-url": { type: "string" },
        "admin-token": { type: "string" },
        settle: { type: "string" },
        timeout: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (err) {
    io.err(`replay: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const v = parsed.values;
  if (v.help) return (io.out(USAGE), 0);
  const usage = (m: string) => (io.err(`replay: ${m}\n\n${USAGE}`), 2);
  if (parsed.positionals.length !== 1) return usage("give one SESSION_ID");
  const sessionId = parsed.positionals[0];
  if (!v.brain || !/^wss?:\/\//.test(v.brain)) {
    return usage("--brain must be a ws:// or wss:// URL");
  }
  const token = v["admin-token"] || env.ADMIN_TOKEN;
  if (!token) return usage("set ADMIN_TOKEN (or pass --admin-token)");
  const settleMs = v.settle === undefined ? 1500 : Number(v.settle);
  const timeoutMs = v.timeout === undefined ? 20_000 : Number(v.timeout) * 1000;
  if (!(settleMs >= 0) || !(timeoutMs > 0)) return usage("--settle and --timeout are numbers");

  const api = httpAdminCall(v["api-url"] || env.API_URL || DEFAULT_API_URL, token);
  let log: LogEntry[];
  try {
    const r = await api("/api/v1/sessions.get", { session_id: sessionId });
    if (r.status !== 200) {
      io.err(`replay: sessions.get answered HTTP ${r.status}: ${JSON.stringify(r.body)}`);
      return 2;
    }
    log = (r.body as { log: LogEntry[] }).log;
  } catch (err) {
    if (!(err instanceof ApiUnreachable)) throw err;
    io.err(`replay: ${err.message}`);
    return 2;
  }
  let rec;
  try {
    rec = readRecording(sessionId, log);
  } catch (err) {
    io.err(`replay: ${(err as Error).message}`);
    return 2;
  }
  let result;
  try {
    result = await replay(rec, {
      brainUrl: v.brain,
      settleMs,
      timeoutMs,
      onStart: (id) =>
        io.out(
          `replaying ${sessionId} as ${id}: ${rec.events.length} caller events against ${v.brain}`,
        ),
    });
  } catch (err) {
    io.err(`replay: ${(err as Error).message}`);
    return 2;
  }
  const diffs = diffExchanges(rec.events, rec.answers, result.answers, result.sent);
  for (const line of formatDiff(diffs, rec.answers.length)) io.out(line);
  if (result.problem) io.out(`the brain failed the replay: ${result.problem}`);
  return diffs.length > 0 || result.problem ? 1 : 0;
}

if (import.meta.main) Deno.exit(await runReplay(Deno.args, Deno.env.toObject()));
