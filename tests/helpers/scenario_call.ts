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
