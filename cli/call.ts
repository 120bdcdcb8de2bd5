// `deno task call`: the caller simulator. Dials a session through the service as a page does,
// says a script of caller turns as audio and checks the brain behind the agent (caller/simulator.ts
// has the steps and the exit-code rules).
import { parseArgs } from "node:util";
import { DEFAULT_API_URL } from "./api_client.ts";
import { parseScript, prepareTurns, type ScriptTurn, type SpokenTurn } from "../caller/script.ts";
import { formatEvent, simulateCall, type SimulationOptions } from "../caller/simulator.ts";

export const USAGE = `deno task call [SCRIPT...] [flags]

Dials a session through the service exactly as a page does, says the caller's turns as audio,
prints the conversation with per-turn latencies, and exits non-zero when the brain misbehaves.

Turns, in the order given:
  SCRIPT               a text file: one caller turn per line; blank lines and # lines are skipped
  --say TEXT           one caller turn, spoken by the local synthesis engine (repeatable)
  --wav FILE           one caller turn from a 16-bit PCM WAV, any rate up to 48 kHz (repeatable)

Connection:
  --api URL            API base URL (env VOICE_API_URL; default ${DEFAULT_API_URL})
  --key KEY            sk_ or pk_ key (env VOICE_KEY)
  --agent ID           agent id (env VOICE_AGENT)
  --origin ORIGIN      Origin header, for a pk_ key (must be on its allowlist)
  --config JSON        the connect body's config, e.g. '{"idle":{"timeout_ms":5000}}'
  --init JSON          the connect body's init, delivered to the brain at session start
  --display-name NAME  the session's label in the console

Caller voice (text turns):
  --voice NAME         VOICE_ARJUN (default) or VOICE_ANANYA
  --language NAME      default: --config's stt.language, else LANGUAGE_EN

Checks and output:
  --timeout SECONDS    limit of each step: bot-ready, greeting, transcript, reply (default 20)
  --json               print one JSON report at the end instead of the conversation
  -h, --help           this text

Each turn waits for the final transcript (printed as "heard as:") and the bot's whole reply
(bot-output units, bot-started-speaking ... bot-stopped-speaking, audio heard). Latencies are
measured at the caller from the end of the caller's speech (the last voiced sample it sent);
"first bot audio" is the first received audio louder than RMS 300, not a message. The last
lines give its p50 and p99 over the turns and the first turn against the later ones; each
turn's figure is also sent to the service (an RTVI client-message "client-latency", never
forwarded to the brain), whose console shows it as "Heard at caller". The bot hanging up
during its reply to the last turn is a normal end.

Exit status:
  0    the greeting and every turn passed
  1    the brain misbehaved: no greeting, a step timed out, an RTVI error, or the bot hung up
       while script turns remained
  2    usage error, or the call could not be set up (API unreachable, connect or offer refused,
       no bot-ready)
  130  interrupted (Ctrl-C); the call is hung up
`;

export interface CallCommand {
  options: Omit<SimulationOptions, "turns" | "onEvent" | "signal">;
  turns: ScriptTurn[];
  voice: string;
  language: string;
  json: boolean;
}

export type Parsed = { kind: "help" } | { kind: "error"; message: string } | {
  kind: "run";
  command: CallCommand;
};

/** Flags and environment to a call command; reads script files named on the command line. */
export async function parseCallArgs(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<Parsed> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      tokens: true,
      options: {
        say: { type: "string", multiple: true },
        wav: { type: "string", multiple: true },
        api: { type: "string" },
        key: { type: "string" },
        agent: { type: "string" },
        origin: { type: "string" },
        config: { type: "string" },
        init: { type: "string" },
        "display-name": { type: "string" },
        voice: { type: "string" },
        language: { type: "string" },
        timeout: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (err) {
    return { kind: "error", message: (err as Error).message };
  }
  const v = parsed.values;
  if (v.help) return { kind: "help" };

  const key = v.key ?? env.VOICE_KEY;
  const agent = v.agent ?? env.VOICE_AGENT;
  if (!key) return { kind: "error", message: "no key: give --key or set VOICE_KEY" };
  if (!agent) return { kind: "error", message: "no agent: give --agent or set VOICE_AGENT" };
  const api = v.api ?? env.VOICE_API_URL ?? DEFAULT_API_URL;
  try {
    const u = new URL(api);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
  } catch {
    return { kind: "error", message: `--api must be an http(s) URL, not "${api}"` };
  }
  let timeoutMs = 20_000;
  if (v.timeout !== undefined) {
    const s = Number(v.timeout);
    if (!Number.isFinite(s) || s <= 0) {
      return { kind: "error", message: `--timeout must be a positive number of seconds` };
    }
    timeoutMs = s * 1000;
  }
  const objects: Record<string, Record<string, unknown> | undefined> = {};
  for (const name of ["config", "init"] as const) {
    const raw = v[name];
    if (raw === undefined) continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      return { kind: "error", message: `--${name} is not JSON: ${(err as Error).message}` };
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return { kind: "error", message: `--${name} must be a JSON object` };
    }
    objects[name] = value as Record<string, unknown>;
  }

  // Turns in command-line order, script files expanded in place.
  const turns: ScriptTurn[] = [];
  for (const t of parsed.tokens ?? []) {
    if (t.kind === "positional") {
      let source: string;
      try {
        source = await Deno.readTextFile(t.value);
      } catch (err) {
        return {
          kind: "error",
          message: `cannot read script ${t.value}: ${(err as Error).message}`,
        };
      }
      turns.push(...parseScript(source));
    } else if (t.kind === "option" && t.name === "say" && t.value !== undefined) {
      if (t.value.trim() === "") return { kind: "error", message: "--say needs some text" };
      turns.push({ kind: "text", text: t.value.trim() });
    } else if (t.kind === "option" && t.name === "wav" && t.value !== undefined) {
      turns.push({ kind: "wav", path: t.value });
    }
  }

  const stt = (objects.config?.stt as { language?: unknown } | undefined)?.language;
  return {
    kind: "run",
    command: {
      options: {
        api,
        key,
        agent,
        origin: v.origin,
        config: objects.config,
        init: objects.init,
        displayName: v["display-name"],
        timeoutMs,
      },
      turns,
      voice: v.voice ?? "VOICE_ARJUN",
      language: v.language ?? (typeof stt === "string" ? stt : "LANGUAGE_EN"),
      json: v.json ?? false,
    },
  };
}

export interface Output {
  out(line: string): void;
  err(line: string): void;
}

const console_: Output = {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
};

/** The whole command; resolves with the exit status. */
export async function runCall(
  args: string[],
  env: Record<string, string | undefined>,
  io: Output = console_,
  signal?: AbortSignal,
): Promise<number> {
  const parsed = await parseCallArgs(args, env);
  if (parsed.kind === "help") {
    io.out(USAGE);
    return 0;
  }
  if (parsed.kind === "error") {
    io.err(`call: ${parsed.message}\n\n${USAGE}`);
    return 2;
  }
  const c = parsed.command;
  let turns: SpokenTurn[];
  try {
    turns = await prepareTurns(c.turns, { voice: c.voice, language: c.language });
  } catch (err) {
    io.err(`call: ${(err as Error).message}`);
    return 2;
  }
  const result = await simulateCall({
    ...c.options,
    turns,
    signal,
    onEvent: c.json ? undefined : (e) => io.out(formatEvent(e)),
  });
  if (c.json) io.out(JSON.stringify(result));
  if (
    result.failure?.code === "origin_not_allowed" && !c.options.origin &&
    c.options.key.startsWith("pk_")
  ) {
    io.err("call: a pk_ key needs --origin set to an origin on its allowlist");
  }
  return result.exit_code;
}

if (import.meta.main) {
  const ac = new AbortController();
  const onInt = () => ac.abort();
  Deno.addSignalListener("SIGINT", onInt);
  const code = await runCall(Deno.args, Deno.env.toObject(), console_, ac.signal);
  Deno.removeSignalListener("SIGINT", onInt);
  Deno.exit(code);
}
