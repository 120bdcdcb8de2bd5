// `deno task call`: the caller simulator. Dials a session through the service as a page does,
// says a script of caller turns as audio and checks the brain behind the agent (caller/simulator.ts
// has the steps and the exit-code rules).
import { parseArgs } from "node:util";
import { DEFAULT_API_URL } from "./api_client.ts";
import {
  type CallerVoice,
  callerVoiceFor,
  parseScript,
  prepareTurns,
  type ScriptTurn,
  type SpokenTurn,
  voiceLine,
} from "../caller/script.ts";
import {
  type Failure,
  formatEvent,
  simulateCall,
  type SimulationOptions,
} from "../caller/simulator.ts";
import { type NoiseSpec, parseNoise } from "../caller/noise.ts";
import { type Impairment, parseLoss } from "../caller/lossy_link.ts";
import { runScenarioCommand } from "./call_scenario.ts";

export const USAGE = `deno task call [SCRIPT...] [flags]
       deno task call --scenario FILE [--junit FILE] [flags]

Dials a session through the service exactly as a page does, says the caller's turns as audio,
prints the conversation with per-turn latencies, and exits non-zero when the brain misbehaves.

Turns, in the order given:
  SCRIPT               a text file: one caller turn per line; blank lines and # lines are skipped
  --say TEXT           one caller turn, spoken by the caller voice (below) (repeatable)
  --wav FILE           one caller turn from a 16-bit PCM WAV, any rate up to 48 kHz (repeatable)
  --type TEXT          one caller turn typed, as the page's text box sends it (repeatable): no
                       recogniser, fast and deterministic; the replies are still spoken

Scenario (instead of turns):
  --scenario FILE      YAML or JSON steps: say, wav, type, wait, interrupt, expect_reply,
                       expect_action, expect_config, expect_end (docs/brain-guide.md); exits 1
                       at the first unmet expectation. The caller lets the bot finish speaking
                       before it talks (only interrupt talks over it); each act prints its
                       latency to the bot's first audio, with a p50/p99 summary
  --junit FILE         also write the scenario's result as JUnit XML, one testcase per step

Connection:
  --api-url URL        API base URL (env API_URL; default ${DEFAULT_API_URL}), as admin and
                       replay take it; --api and VOICE_API_URL are older spellings, still read
  --key KEY            sk_ or pk_ key (env VOICE_KEY)
  --agent ID           agent id (env VOICE_AGENT)
  --origin ORIGIN      Origin header, for a pk_ key (must be on its allowlist)
  --config JSON        the connect body's config, e.g. '{"idle":{"timeout_ms":5000}}'
  --init JSON          the connect body's init, delivered to the brain at session start
  --display-name NAME  the session's label in the console

Caller voice (text turns):
  --caller-voice NAME  festival (default for English where text2wave is installed: the local
                       recogniser hears it) or espeak (espeak-ng, every language)
  --voice NAME         espeak-ng's voice: VOICE_ARJUN (default) or VOICE_ANANYA
  --language NAME      default: --config's stt.language, else LANGUAGE_EN
  --noise KIND[:DB[:S]]  white, pink or brown noise DB below the speech (default -20) under
                       every turn and S seconds after it (default 1); the end of the caller's
                       speech stays where the clean speech ends

Checks and output:
  --loss P[,BURST]     lose P % of packets each way on the caller's own sockets, from its first
                       packet (ICE, DTLS, SCTP, RTP), in bursts of BURST packets on average
                       (default 1: independent losses); seeded, so a run repeats
  --jitter MS          hold each packet up to MS ms each way (uniform), so some arrive reordered
  --reorder P          hold P % of packets 50 ms more each way, so they arrive behind later ones
  --seed N             seed of --loss and --jitter (default 1): another seed, other packets lost
  --timeout SECONDS    limit of each step: bot-ready, greeting, transcript, reply (default 20)
  --expect-heard[=WER] fail when a text turn is heard with a word error rate over WER (default
                       0.25); without it the WER is printed, never judged
  --json               print one JSON report at the end instead of the conversation
  -h, --help           this text

Each text turn prints what was said against what was heard, with its word error rate.
Each turn waits for the final transcript (printed as "heard as:") and the bot's whole reply
(bot-output units, bot-started-speaking ... bot-stopped-speaking, audio heard). Latencies are
measured at the caller from the end of the caller's speech (where the turn's clean speech
ends, at the time the frame carrying it was sent: noise after it does not move it);
"first bot audio" is the first received audio louder than RMS 300, not a message. The last
lines give its p50 and p99 over the turns and the first turn against the later ones; each
turn's figure is also sent to the service (an RTVI client-message "client-latency", never
forwarded to the brain), whose console shows it as "Heard at caller". The bot hanging up
during its reply to the last turn is a normal end.

Exit status:
  0    the greeting and every turn passed
  1    the brain misbehaved: no greeting, a step timed out, an RTVI error, the bot hung up
       while script turns remained, a turn misheard (--expect-heard), or a scenario
       expectation unmet
  2    usage error, or the call could not be set up (API unreachable, connect or offer refused,
       no bot-ready)
  130  interrupted (Ctrl-C); the call is hung up
`;

export interface CallCommand {
  options: Omit<SimulationOptions, "turns" | "onEvent" | "signal">;
  turns: ScriptTurn[];
  voice: string;
  language: string;
  /** Undefined: festival for English where installed, else espeak. */
  callerVoice?: CallerVoice;
  noise?: NoiseSpec;
  scenario?: string;
  junit?: string;
  json: boolean;
}

/** The word error rate `--expect-heard` allows when given no figure. */
export const DEFAULT_EXPECT_HEARD = 0.25;

export type Parsed = { kind: "help" } | { kind: "error"; message: string } | {
  kind: "run";
  command: CallCommand;
};

/** Flags and environment to a call command; reads script files named on the command line. */
export async function parseCallArgs(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<Parsed> {
  // `--expect-heard` alone takes the default figure (parseArgs has no optional values).
  args = args.map((a) => a === "--expect-heard" ? `--expect-heard=${DEFAULT_EXPECT_HEARD}` : a);
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      tokens: true,
      options: {
        say: { type: "string", multiple: true },
        wav: { type: "string", multiple: true },
        type: { type: "string", multiple: true },
        "api-url": { type: "string" },
        api: { type: "string" }, // the older spelling of --api-url, kept working
        key: { type: "string" },
        agent: { type: "string" },
        origin: { type: "string" },
        config: { type: "string" },
        init: { type: "string" },
        "display-name": { type: "string" },
        voice: { type: "string" },
        language: { type: "string" },
        timeout: { type: "string" },
        "expect-heard": { type: "string" },
        "caller-voice": { type: "string" },
        noise: { type: "string" },
        loss: { type: "string" },
        jitter: { type: "string" },
        reorder: { type: "string" },
        seed: { type: "string" },
        scenario: { type: "string" },
        junit: { type: "string" },
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
  // One spelling with admin and replay (--api-url, API_URL); the older ones still work.
  const api = v["api-url"] ?? v.api ?? (env.API_URL || env.VOICE_API_URL || DEFAULT_API_URL);
  try {
    const u = new URL(api);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
  } catch {
    return { kind: "error", message: `--api-url must be an http(s) URL, not "${api}"` };
  }
  let timeoutMs = 20_000;
  if (v.timeout !== undefined) {
    const s = Number(v.timeout);
    if (!Number.isFinite(s) || s <= 0) {
      return { kind: "error", message: `--timeout must be a positive number of seconds` };
    }
    timeoutMs = s * 1000;
  }
  let expectHeard: number | undefined;
  if (v["expect-heard"] !== undefined) {
    expectHeard = Number(v["expect-heard"]);
    if (!Number.isFinite(expectHeard) || expectHeard < 0 || expectHeard > 1) {
      return { kind: "error", message: "--expect-heard takes a word error rate from 0 to 1" };
    }
  }
  const callerVoice = v["caller-voice"];
  if (callerVoice !== undefined && callerVoice !== "festival" && callerVoice !== "espeak") {
    return { kind: "error", message: "--caller-voice is festival or espeak" };
  }
  let noise: NoiseSpec | undefined;
  try {
    noise = v.noise === undefined ? undefined : parseNoise(v.noise);
  } catch (err) {
    return { kind: "error", message: `--noise: ${(err as Error).message}` };
  }
  let impairment: Impairment | undefined;
  try {
    const loss = v.loss === undefined ? { loss: 0, burst: 1 } : parseLoss(v.loss);
    const jitterMs = v.jitter === undefined ? 0 : Number(v.jitter);
    if (!Number.isFinite(jitterMs) || jitterMs < 0 || jitterMs > 2000) {
      throw new Error(`--jitter must be 0 to 2000 ms, not "${v.jitter}"`);
    }
    const reorder = v.reorder === undefined ? 0 : Number(v.reorder);
    if (!Number.isFinite(reorder) || reorder < 0 || reorder > 100) {
      throw new Error(`--reorder must be a percentage from 0 to 100, not "${v.reorder}"`);
    }
    const seed = v.seed === undefined ? 1 : Number(v.seed);
    if (!Number.isInteger(seed) || seed < 1 || seed > 2 ** 32 - 1) {
      throw new Error(`--seed must be a whole number from 1, not "${v.seed}"`);
    }
    if (v.loss !== undefined || v.jitter !== undefined || v.reorder !== undefined) {
      impairment = { ...loss, jitterMs, reorder: reorder / 100, seed };
    }
  } catch (err) {
    const message = (err as Error).message;
    return { kind: "error", message: message.startsWith("--") ? message : `--loss: ${message}` };
  }
  if (impairment && v.scenario !== undefined) {
    return { kind: "error", message: "--loss and --jitter apply to a call, not yet a --scenario" };
  }
  if (v.junit !== undefined && v.scenario === undefined) {
    return { kind: "error", message: "--junit reports a --scenario" };
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
    } else if (t.kind === "option" && t.name === "type" && t.value !== undefined) {
      if (t.value.trim() === "") return { kind: "error", message: "--type needs some text" };
      turns.push({ kind: "typed", text: t.value.trim() });
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
        expectHeard,
        impairment,
      },
      turns,
      voice: v.voice ?? "VOICE_ARJUN",
      language: v.language ?? (typeof stt === "string" ? stt : "LANGUAGE_EN"),
      callerVoice,
      noise,
      scenario: v.scenario,
      junit: v.junit,
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

/**
 * What to do about a refused connect or a failed call, in this command's terms; the admin
 * commands it names are filled in with this call's API and agent, to run as printed.
 */
export function failureHint(
  failure: Failure | null,
  call: { api: string; agent: string; origin?: string },
): string | undefined {
  const admin = (what: string) =>
    `ADMIN_TOKEN=... deno task admin ${what} --agent-id ${call.agent} --api-url ${call.api}`;
  switch (failure?.code) {
    case "origin_not_allowed":
      return (call.origin
        ? `the key does not allow the origin ${call.origin}: pass --origin with an origin on its ` +
          "allowlist"
        : "a pk_ key needs --origin set to an origin on its allowlist") +
        ` (\`${admin("keys list")}\` shows each key's allowed_origins), or use the agent's sk_ ` +
        "key, which needs none.";
    case "invalid_api_key":
      return "check --key (or VOICE_KEY): the key is mistyped, revoked, or of another service.";
    case "agent_not_found":
      return "--agent must be the agent the key was made for.";
    case "brain_unreachable":
    case "brain_connect_timeout":
      return "the worker could not use the agent's brain: check that it is running at the " +
        `agent's brain URL (\`${admin("agents get")}\`) and that the worker can reach it.`;
  }
  return undefined;
}

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
  if (c.scenario !== undefined) {
    if (c.turns.length > 0) {
      io.err("call: give caller turns in the scenario, not beside it");
      return 2;
    }
    return await runScenarioCommand(c, io, signal);
  }
  let turns: SpokenTurn[];
  const speaker = c.callerVoice ?? await callerVoiceFor(c.language);
  if (!c.json && c.turns.some((t) => t.kind === "text")) io.out(voiceLine(speaker));
  try {
    turns = await prepareTurns(c.turns, { voice: c.voice, language: c.language }, {
      speaker,
      noise: c.noise,
    });
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
  const hint = failureHint(result.failure, c.options);
  if (hint) io.err(`call: ${hint}`);
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
