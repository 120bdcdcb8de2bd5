// `deno task call --scenario FILE` against a started call service, in process: its exit code and
// the lines it printed.
import type { CallService } from "./call_harness.ts";
import { runCall } from "../../cli/call.ts";

export async function callScenario(
  service: Pick<CallService, "api" | "tenant">,
  file: string,
): Promise<{ code: number; out: string[]; text: string }> {
  const out: string[] = [];
  const code = await runCall(
    [
      ...["--scenario", file, "--api", service.api.url],
      ...["--key", service.tenant.sk, "--agent", service.tenant.agent_id],
    ],
    {},
    { out: (l) => out.push(l), err: (l) => out.push(l) },
  );
  return { code, out, text: out.join("\n") };
}

/**
 * A spoken scenario, called a second time when the first fails, with the first's whole transcript
 * printed. Its steps hang on pocketsphinx hearing festival's sayings through the call; on a loaded
 * CI machine one was misheard ("goodbye" heard as "a bike", so the brain never said goodbye). A
 * brain that cannot pass fails both calls; the broken-brain scenario test shows the failure path.
 */
export async function callSpokenScenario(
  service: Pick<CallService, "api" | "tenant">,
  file: string,
): Promise<{ code: number; out: string[]; text: string }> {
  const first = await callScenario(service, file);
  if (first.code === 0) return first;
  console.log(
    `first call failed (exit ${first.code}); calling again. Its transcript:\n${first.text}`,
  );
  return await callScenario(service, file);
}
