// Every environment variable a registered speech engine reads (its registry declaration's `env`,
// media/providers/<provider>/engines.ts) reaches the workers of both deploy files: deploy/
// compose.yaml passes it from the host's environment; in Kubernetes a secret one is a key of the
// Secret template that the worker reads (optional, so a provider without its key is simply off),
// any other a key of the ConfigMap. Registering a provider whose variables the deploy files miss
// fails here; so does dropping the speech settings every worker reads.
import assert from "node:assert/strict";
import { parse } from "yaml";
import { ENGINE_TYPES } from "../media/engines/registry.ts";
import type { EngineVariable } from "../media/providers/base/declaration.ts";

const read = (path: string) => Deno.readTextFileSync(new URL(path, import.meta.url));

/** The speech settings of every worker, whatever engines it runs (common/settings.ts, speech_config.ts). */
const SPEECH_SETTINGS: EngineVariable[] = ["SPEECH_ENGINES", "SPEECH_ENGINE_COOL_DOWN_SECONDS"]
  .map((name) => ({ name, option: "", secret: false, required: false }));

function engineVariables(): Map<string, EngineVariable> {
  const all = new Map<string, EngineVariable>();
  for (const type of Object.values(ENGINE_TYPES)) {
    for (const v of type.env ?? []) all.set(v.name, v);
  }
  assert.ok(all.size > 0, "no registered engine declares a variable: is the registry read?");
  for (const v of SPEECH_SETTINGS) all.set(v.name, v);
  return all;
}

interface Compose {
  services: Record<string, { environment?: Record<string, string> }>;
}

Deno.test("compose passes every registered engine's variable to every worker", () => {
  const compose = parse(read("./compose.yaml"), { merge: true }) as Compose;
  const workers = Object.entries(compose.services).filter(([name]) => name.startsWith("worker"));
  assert.ok(workers.length > 0, "no worker service in deploy/compose.yaml");
  const missing: string[] = [];
  for (const [service, { environment = {} }] of workers) {
    for (const name of engineVariables().keys()) {
      // From the host's environment (`${NAME:-}`), so an unset one stays unset.
      if (!String(environment[name] ?? "").startsWith(`\${${name}`)) {
        missing.push(`${service}: ${name}`);
      }
    }
  }
  assert.deepEqual(missing, [], "add these to x-worker-env in deploy/compose.yaml");
});

interface Container {
  name: string;
  env?: { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
}

Deno.test("Kubernetes gives every registered engine's variable: secrets from the Secret, the rest from the ConfigMap", () => {
  const configMap = parse(read("./k8s/configmap.yaml")) as { data: Record<string, string> };
  const secretTemplate = read("./k8s/secret.template.yaml");
  const worker = parse(read("./k8s/worker-statefulset.yaml")) as {
    spec: { template: { spec: { containers: Container[] } } };
  };
  const containers = worker.spec.template.spec.containers;
  const missing: string[] = [];
  for (const v of engineVariables().values()) {
    if (!v.secret) {
      if (!(v.name in configMap.data)) missing.push(`ConfigMap voice-config: ${v.name}`);
      continue;
    }
    if (!new RegExp(`\\b${v.name}=`).test(secretTemplate)) {
      missing.push(`secret.template.yaml: ${v.name} (in the --from-literal list)`);
    }
    for (const c of containers) {
      const ref = c.env?.find((e) => e.name === v.name)?.valueFrom?.secretKeyRef;
      if (ref?.name !== "voice-secrets" || ref.key !== v.name) {
        missing.push(`worker-statefulset.yaml ${c.name}: ${v.name} from Secret voice-secrets`);
      }
    }
  }
  assert.deepEqual(missing, []);
});
