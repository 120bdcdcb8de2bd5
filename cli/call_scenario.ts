// `deno task call --scenario FILE [--junit FILE]`: reads the scenario, makes the audio of its
// spoken steps, runs it as one call and writes the JUnit report.
import { readScenario, type Scenario, ScenarioError } from "../caller/scenario.ts";
import { runScenario, speechKey, spokenUtterances } from "../caller/scenario_run.ts";
import {
  type CallerVoice,
  callerVoiceFor,
  prepareTurns,
  type ScriptTurn,
  voiceLine,
} from "../caller/script.ts";
import type { NoiseSpec } from "../caller/noise.ts";
import type { DialOptions } from "../caller/dial.ts";
import { junitXml } from "../caller/junit.ts";

/** What cli/call.ts parsed that a scenario run uses. */
export interface ScenarioCommand {
  options: Omit<DialOptions, "signal"> & { timeoutMs: number };
  scenario?: string;
  junit?: string;
  voice: string;
  language: string;
  callerVoice?: CallerVoice;
  noise?: NoiseSpec;
  json: boolean;
}

export async function runScenarioCommand(
  c: ScenarioCommand,
  io: { out(line: string): void; err(line: string): void },
  signal?: AbortSignal,
): Promise<number> {
  let scenario: Scenario;
  try {
    scenario = await readScenario(c.scenario!);
  } catch (err) {
    if (!(err instanceof ScenarioError)) throw err;
    io.err(`call: ${err.message}`);
    return 2;
  }
  const utterances = spokenUtterances(scenario);
  const stt = (scenario.config?.stt as { language?: unknown } | undefined)?.language;
  const language = typeof stt === "string" ? stt : c.language;
  const speaker = c.callerVoice ?? await callerVoiceFor(language);
  const speech = new Map();
  try {
    const script: ScriptTurn[] = utterances.map((u) =>
      "say" in u ? { kind: "text", text: u.say } : { kind: "wav", path: (u as { wav: string }).wav }
    );
    if (script.some((t) => t.kind === "text")) io.out(voiceLine(speaker));
    const turns = await prepareTurns(script, { voice: c.voice, language }, {
      speaker,
      noise: c.noise,
    });
    utterances.forEach((u, i) => speech.set(speechKey(u), turns[i]));
  } catch (err) {
    io.err(`call: ${(err as Error).message}`);
    return 2;
  }
  io.out(`scenario: ${scenario.name} (${scenario.steps.length} steps)`);
  const result = await runScenario({
    ...c.options,
    scenario,
    speech,
    signal,
    onLine: c.json ? undefined : io.out,
  });
  if (c.json) io.out(JSON.stringify(result));
  if (c.junit) {
    try {
      await Deno.writeTextFile(c.junit, junitXml(result));
    } catch (err) {
      io.err(`call: cannot write ${c.junit}: ${(err as Error).message}`);
      return result.exit_code === 0 ? 2 : result.exit_code;
    }
  }
  return result.exit_code;
}
