// The Kubernetes manifests in deploy/k8s/: every object is valid against the Kubernetes OpenAPI
// schema (kubernetes-models, plus a type check that refuses fields the schema does not define),
// kubectl accepts them in a client-side dry run (against a fake discovery server, see
// fake_discovery.ts), they set exactly the environment variables the processes read, and they
// keep the invariants the processes rely on (ports, probes, drain time, secrets, one worker per
// node, resources per call).
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { ConfigMap, type IConfigMap } from "kubernetes-models/v1/ConfigMap";
import { type ISecret, Secret } from "kubernetes-models/v1/Secret";
import { type IService, Service } from "kubernetes-models/v1/Service";
import { Deployment, type IDeployment } from "kubernetes-models/apps/v1/Deployment";
import { type IStatefulSet, StatefulSet } from "kubernetes-models/apps/v1/StatefulSet";
import {
  HorizontalPodAutoscaler,
  type IHorizontalPodAutoscaler,
} from "kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler";
import {
  type IPodDisruptionBudget,
  PodDisruptionBudget,
} from "kubernetes-models/policy/v1/PodDisruptionBudget";
import {
  type INetworkPolicy,
  NetworkPolicy,
} from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import type { IContainer } from "kubernetes-models/v1/Container";
import type { IPodTemplateSpec } from "kubernetes-models/v1/PodTemplateSpec";
import { loadSettings, type Settings } from "../../common/settings.ts";
import { loadSpeechConfig } from "../../media/engines/speech_config.ts";
import { RESOURCES, startFakeDiscovery } from "./fake_discovery.ts";

const DIR = fileURLToPath(new URL("./", import.meta.url));
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const NAMESPACE = "voice";

// ---------------------------------------------------------------------------------------------
// Loading

type Json = Record<string, unknown>;
interface K8sObject extends Json {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
}
interface Doc {
  /** Path relative to the repository root. */
  file: string;
  obj: K8sObject;
}
const label = (d: Doc) => `${d.file}: ${d.obj.kind}/${d.obj.metadata?.name}`;

/** The model class of every kind the manifests may use; its validate() is the OpenAPI schema. */
const MODELS: Record<string, { new (data: never): { validate(): void } }> = {
  "v1/Namespace": Namespace,
  "v1/ConfigMap": ConfigMap,
  "v1/Secret": Secret,
  "v1/Service": Service,
  "apps/v1/Deployment": Deployment,
  "apps/v1/StatefulSet": StatefulSet,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
};

function manifestFiles(): string[] {
  return [...Deno.readDirSync(DIR)]
    .filter((e) => e.isFile && /\.ya?ml$/.test(e.name) && e.name !== "kustomization.yaml")
    .map((e) => e.name)
    .sort();
}

/**
 * Every object of every manifest, and what did not parse. YAML 1.1, as kubectl reads it (`yes`,
 * `on` are booleans there), so a value kubectl would take for a boolean is one here too.
 */
function loadDocs(): { docs: Doc[]; parseErrors: string[] } {
  const docs: Doc[] = [];
  const parseErrors: string[] = [];
  for (const name of manifestFiles()) {
    const file = `deploy/k8s/${name}`;
    const text = Deno.readTextFileSync(`${DIR}${name}`);
    for (const doc of parseAllDocuments(text, { version: "1.1" })) {
      const problems = [...doc.errors, ...doc.warnings].map((e) => `${file}: ${e.message}`);
      parseErrors.push(...problems);
      const obj = problems.length ? null : doc.toJS();
      if (obj !== null) docs.push({ file, obj: obj as K8sObject }); // null: an empty document
    }
  }
  return { docs, parseErrors };
}

const { docs: DOCS, parseErrors: PARSE_ERRORS } = loadDocs();

function all<T>(kind: string): T[] {
  return DOCS.filter((d) => d.obj.kind === kind).map((d) => d.obj as unknown as T);
}
function one<T>(kind: string, name: string): T {
  const found = DOCS.filter((d) => d.obj.kind === kind && d.obj.metadata.name === name);
  assert.equal(
    found.length,
    1,
    `expected one ${kind}/${name} in deploy/k8s, found ${found.length}`,
  );
  return found[0].obj as unknown as T;
}

// ---------------------------------------------------------------------------------------------
// Schema

Deno.test("every manifest parses and every object is valid against the Kubernetes schema", () => {
  assert.deepEqual(PARSE_ERRORS, []);
  assert.ok(DOCS.length > 0, "no manifests found in deploy/k8s");
  const problems: string[] = [];
  const ids = new Set<string>();
  for (const d of DOCS) {
    // The schema lets a name out (generateName), but `kubectl apply` needs one.
    if (typeof d.obj.metadata?.name !== "string" || !d.obj.metadata.name) {
      problems.push(`${label(d)}: no metadata.name`);
    }
    const id = `${d.obj.kind}/${d.obj.metadata?.namespace ?? ""}/${d.obj.metadata?.name}`;
    if (ids.has(id)) problems.push(`${label(d)}: defined twice`);
    ids.add(id);
    const model = MODELS[`${d.obj.apiVersion}/${d.obj.kind}`];
    if (!model) {
      problems.push(`${label(d)}: no schema for ${d.obj.apiVersion} ${d.obj.kind} (see MODELS)`);
      continue;
    }
    try {
      new model(d.obj as never).validate();
    } catch (err) {
      problems.push(`${label(d)}: ${(err as Error).message}`);
    }
  }
  assert.deepEqual(problems, []);
});

Deno.test("every field in the manifests is one the Kubernetes schema defines", async () => {
  // The schema's validate() lets unknown fields through (a typo such as `livenesProbe` would
  // pass, and kubectl's validation or the API server would refuse it at deploy time). The
  // models' TypeScript interfaces come from the same schema, and TypeScript refuses unknown
  // properties in an object literal: so every object is type-checked as a literal of its type.
  const lines: string[] = [];
  const imports = new Set<string>();
  DOCS.forEach((d, i) => {
    const key = `${d.obj.apiVersion}/${d.obj.kind}`;
    assert.ok(MODELS[key], `${label(d)}: no schema for ${key}`);
    imports.add(`import type { I${d.obj.kind} } from "kubernetes-models/${key}";`);
    lines.push(`// @object ${label(d)}`);
    lines.push(`export const o${i}: I${d.obj.kind} = ${JSON.stringify(d.obj, null, 2)};`);
  });
  const source = [...imports, ...lines].join("\n") + "\n";
  const headerCount = imports.size;
  const dir = await Deno.makeTempDir({ prefix: "k8s-manifest-types-" });
  try {
    const file = `${dir}/manifests_as_types.ts`;
    await Deno.writeTextFile(file, source);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["check", "--quiet", "--frozen", "--config", `${ROOT}deno.json`, file],
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (out.success) return;
    const text = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
    // Name the manifest object each error is in: the nearest `// @object` line above it.
    const sourceLines = source.split("\n");
    const errors = [...text.matchAll(/ERROR\]: ([^\n]*)[\s\S]*?manifests_as_types\.ts:(\d+):\d+/g)]
      .map(([, message, line]) => {
        let n = Number(line) - 1;
        while (n >= headerCount && !sourceLines[n].startsWith("// @object ")) n--;
        return `${sourceLines[n]?.slice("// @object ".length) ?? "?"}: ${message}`;
      });
    assert.fail(`unknown or mistyped fields:\n${errors.join("\n") || text}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// ---------------------------------------------------------------------------------------------
// kubectl

function onPath(command: string): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      if (Deno.statSync(`${dir}/${command}`).isFile) return `${dir}/${command}`;
    } catch {
      // not in this directory
    }
  }
}

/** What `kubectl -o name` prints for an object: lowercase kind, `.group` unless core, `/name`. */
function kubectlName(obj: K8sObject): string {
  const group = obj.apiVersion.includes("/") ? obj.apiVersion.split("/")[0] : "";
  return `${obj.kind.toLowerCase()}${group ? `.${group}` : ""}/${obj.metadata.name}`;
}

function kustomizationResources(): string[] {
  const k = parseAllDocuments(Deno.readTextFileSync(`${DIR}kustomization.yaml`))[0]?.toJS();
  assert.ok(Array.isArray(k?.resources), "kustomization.yaml lists no resources");
  return k.resources as string[];
}

Deno.test("kubectl accepts every manifest and the kustomization in a client-side dry run", async () => {
  const kubectl = onPath("kubectl");
  assert.ok(
    kubectl,
    "kubectl is not on PATH, and this test needs it (CI installs it; on Debian or Ubuntu: " +
      "apt-get install kubernetes-client; elsewhere see kubernetes.io/docs/tasks/tools/).",
  );
  // Client-side dry run still asks a server for discovery; the fake answers only that. HOME is a
  // temporary folder so kubectl neither reads the user's ~/.kube nor writes its cache there.
  const fake = startFakeDiscovery();
  const home = await Deno.makeTempDir({ prefix: "k8s-kubectl-" });
  try {
    await Deno.writeTextFile(`${home}/kubeconfig`, fake.kubeconfig());
    const run = async (source: string[]) => {
      // Flags kubectl 1.20 (Debian's kubernetes-client) and current releases both take.
      const args = [`--kubeconfig=${home}/kubeconfig`, "create", "--dry-run=client"];
      args.push("--validate=false", "-o", "name", ...source);
      const out = await new Deno.Command(kubectl, {
        args,
        clearEnv: true,
        env: { PATH: Deno.env.get("PATH") ?? "", HOME: home },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(out.stderr);
      assert.ok(out.success, `kubectl ${args.join(" ")} failed:\n${stderr}`);
      return new TextDecoder().decode(out.stdout).split("\n").filter(Boolean).sort();
    };
    // Every file, the Secret template included: one line per object.
    const printed = await run(manifestFiles().flatMap((f) => ["-f", `${DIR}${f}`]));
    assert.deepEqual(printed, DOCS.map((d) => kubectlName(d.obj)).sort());
    // What `kubectl apply -k deploy/k8s` would apply: the objects of the files it lists.
    const listed = new Set(kustomizationResources().map((f) => `deploy/k8s/${f}`));
    const built = await run(["-k", DIR]);
    assert.deepEqual(
      built,
      DOCS.filter((d) => listed.has(d.file)).map((d) => kubectlName(d.obj)).sort(),
    );
    const writes = fake.requests.filter((r) => !r.startsWith("GET "));
    assert.deepEqual(writes, [], "a dry run must not write to the server");
  } finally {
    await fake.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("the kustomization lists every manifest but the Secret template", () => {
  const secretFiles = new Set(DOCS.filter((d) => d.obj.kind === "Secret").map((d) => d.file));
  const expected = manifestFiles().filter((f) => !secretFiles.has(`deploy/k8s/${f}`));
  assert.deepEqual([...kustomizationResources()].sort(), expected);
});

Deno.test("the fake discovery server serves exactly the kinds the schema check knows", () => {
  const served = RESOURCES.map((r) => `${r.group ? `${r.group}/` : ""}${r.version}/${r.kind}`);
  assert.deepEqual(served.sort(), Object.keys(MODELS).sort());
});

// ---------------------------------------------------------------------------------------------
// Environment

/** Environment names the code reads that a Kubernetes deployment does not set, and why. */
const NOT_IN_KUBERNETES: Record<string, string> = {
  DATA_DIR: "only the embedded PGlite (no DATABASE_URL) and RECORDINGS_DIR's default use it; " +
    "the manifests always set DATABASE_URL and RECORDINGS_DIR",
  WORKER_RUNNER_INDEX: "set by a multi-runner worker (WORKER_PROCESSES) for its runner processes",
};

const SOURCE_DIRS = ["api", "media", "common", "db"];
const NAME = "[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*";
const Q = "[\"'`]";
/** The ways the code reads a variable by name. */
const READS = [
  new RegExp(`\\benv\\.(${NAME})\\b`, "g"), // env.DATABASE_URL (settings.ts: env is the object)
  new RegExp(`\\benv\\[\\s*${Q}(${NAME})${Q}\\s*\\]`, "g"), // env["X"]
  new RegExp(`(?:\\bDeno\\.env\\.get|\\benv)\\(\\s*${Q}(${NAME})${Q}`, "g"), // env("X"), get("X")
  new RegExp(`\\(\\s*env\\s*,\\s*${Q}(${NAME})${Q}`, "g"), // int(env, "API_PORT", 8787)
];
/** A file that reads the environment at all (then its NAME_LIKE_THIS literals are read too). */
const READS_ENV = /\bDeno\.env\b|\benv\s*[.([:]/;
const ENV_LITERAL = new RegExp(`${Q}([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)${Q}`, "g");

/** Enum value names of the wire protocol (LANGUAGE_EN, VOICE_ARJUN): never environment names. */
function protoEnumValues(): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(dir)) {
      if (e.isDirectory) walk(`${dir}/${e.name}`);
      else if (e.name.endsWith(".proto")) {
        for (
          const m of Deno.readTextFileSync(`${dir}/${e.name}`).matchAll(/^\s*([A-Z_0-9]+)\s*=/gm)
        ) {
          names.add(m[1]);
        }
      }
    }
  };
  walk(`${ROOT}proto`);
  return names;
}

/**
 * Every environment variable name the processes' source reads, with where. Names handed to a
 * reader indirectly (`env: [{ name: "SARVAM_API_KEY", ... }]` in a provider's engines.ts)
 * are caught as NAME_LIKE_THIS string literals of a file that reads the environment.
 */
function envNamesReadByCode(): Map<string, string> {
  const found = new Map<string, string>();
  const enums = protoEnumValues();
  const scan = (rel: string) => {
    const text = Deno.readTextFileSync(`${ROOT}${rel}`);
    const note = (name: string, index: number) => {
      if (!found.has(name)) found.set(name, `${rel}:${text.slice(0, index).split("\n").length}`);
    };
    for (const re of READS) for (const m of text.matchAll(re)) note(m[1], m.index);
    if (READS_ENV.test(text)) {
      for (const m of text.matchAll(ENV_LITERAL)) if (!enums.has(m[1])) note(m[1], m.index);
    }
  };
  const walk = (rel: string) => {
    for (const e of Deno.readDirSync(`${ROOT}${rel}`)) {
      const path = `${rel}/${e.name}`;
      if (e.isDirectory) walk(path);
      else if (/\.tsx?$/.test(e.name) && !/[._]test\.tsx?$/.test(e.name)) scan(path);
    }
  };
  SOURCE_DIRS.forEach(walk);
  return found;
}

interface Workload {
  /** kind/name */
  id: string;
  kind: string;
  name: string;
  template: IPodTemplateSpec;
}

function workloads(): Workload[] {
  return DOCS.filter((d) => ["Deployment", "StatefulSet", "DaemonSet"].includes(d.obj.kind))
    .map((d) => {
      const spec = (d.obj as unknown as IDeployment).spec!;
      return {
        id: `${d.obj.kind}/${d.obj.metadata.name}`,
        kind: d.obj.kind,
        name: d.obj.metadata.name,
        template: spec.template,
      };
    });
}

/** Sample values for the pod fields containers read through the downward API. */
function fieldValue(w: Workload, fieldPath: string): string {
  const values: Record<string, string> = {
    "metadata.name": w.kind === "StatefulSet" ? `${w.name}-0` : `${w.name}-5d8f7c9b4-x2x7q`,
    "metadata.namespace": NAMESPACE,
    "spec.nodeName": "node-a",
    "status.hostIP": "203.0.113.7",
    "status.podIP": w.template.spec?.hostNetwork ? "203.0.113.7" : "10.244.1.9",
  };
  const value = values[fieldPath];
  assert.ok(value !== undefined, `${w.id}: no sample value for fieldRef ${fieldPath}`);
  return value;
}

/** Kubernetes' `$(NAME)` expansion of an env value: unknown references stay as they are. */
function expand(value: string, env: Record<string, string>, refs: Set<string>): string {
  return value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name?: string) => {
    if (!name) return "$";
    refs.add(name);
    return name in env ? env[name] : whole;
  });
}

function secretData(s: ISecret): Record<string, string> {
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(s.data ?? {})) data[k] = atob(v);
  return { ...data, ...(s.stringData ?? {}) };
}

interface ContainerEnv {
  workload: Workload;
  container: IContainer;
  /** The environment the process starts with (Secrets at their template values). */
  env: Record<string, string>;
  /** Names the manifests give this container (env entries and envFrom keys, set or optional). */
  names: Set<string>;
  /** Names its env values refer to with $(NAME). */
  refs: Set<string>;
  /** What could not be resolved: missing ConfigMaps, Secrets, keys, $(...) references. */
  problems: string[];
}

/** A container's environment as the kubelet would build it: envFrom first, then env in order. */
function containerEnv(w: Workload, container: IContainer): ContainerEnv {
  const env: Record<string, string> = {};
  const names = new Set<string>();
  const refs = new Set<string>();
  const problems: string[] = [];
  const where = `${w.id} container ${container.name}`;
  const configMap = (name: string) =>
    all<IConfigMap>("ConfigMap").find((c) => c.metadata?.name === name);
  const secret = (name: string) => all<ISecret>("Secret").find((s) => s.metadata?.name === name);
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    const data = from.configMapRef
      ? configMap(ref!.name!)?.data
      : secret(ref!.name!) && secretData(secret(ref!.name!)!);
    if (!data) {
      if (!ref?.optional) problems.push(`${where}: envFrom ${ref?.name} is not in the manifests`);
      continue;
    }
    for (const [k, v] of Object.entries(data)) {
      // YAML 1.1 reads `yes`, `on` or 10 unquoted as a boolean or number: the API refuses those.
      if (typeof v !== "string") problems.push(`${where}: ${ref?.name} ${k} is not a string`);
      names.add(`${from.prefix ?? ""}${k}`);
      env[`${from.prefix ?? ""}${k}`] = String(v);
    }
  }
  const seen = new Set<string>();
  for (const e of container.env ?? []) {
    if (seen.has(e.name)) problems.push(`${where}: ${e.name} is given twice`);
    seen.add(e.name);
    names.add(e.name);
    const from = e.valueFrom;
    if (!from) {
      env[e.name] = expand(e.value ?? "", env, refs);
    } else if (from.fieldRef) {
      env[e.name] = fieldValue(w, from.fieldRef.fieldPath);
    } else if (from.secretKeyRef || from.configMapKeyRef) {
      const ref = (from.secretKeyRef ?? from.configMapKeyRef)!;
      const s = from.secretKeyRef ? secret(ref.name!) : undefined;
      const data = from.secretKeyRef ? (s && secretData(s)) : configMap(ref.name!)?.data;
      const kind = from.secretKeyRef ? "Secret" : "ConfigMap";
      if (data && ref.key in data) env[e.name] = data[ref.key];
      else if (!data) {
        problems.push(`${where}: ${e.name} reads ${kind} ${ref.name}, not in the manifests`);
      } else if (!ref.optional) {
        problems.push(
          `${where}: ${e.name} reads ${kind} ${ref.name} key ${ref.key}, which it lacks`,
        );
      } else delete env[e.name]; // optional and absent: unset
    } else {
      problems.push(`${where}: ${e.name} has a valueFrom this test does not resolve`);
    }
  }
  for (const [k, v] of Object.entries(env)) {
    const left = v.match(/\$\([A-Za-z_][A-Za-z0-9_]*\)/);
    if (left && container.env?.some((e) => e.name === k && e.value !== undefined)) {
      problems.push(`${where}: ${k} refers to ${left[0]}, which is not defined before it`);
    }
  }
  return { workload: w, container, env, names, refs, problems };
}

function containers(): ContainerEnv[] {
  return workloads().flatMap((w) =>
    (w.template.spec?.containers ?? []).map((c) => containerEnv(w, c))
  );
}

/** Which process a container runs, by image: the API or a media worker. */
function role(c: IContainer): "api" | "worker" {
  const image = c.image ?? "";
  if (/(^|\/)voice-api(:|@|$)/.test(image)) return "api";
  if (/(^|\/)voice-worker(:|@|$)/.test(image)) return "worker";
  assert.fail(`container ${c.name}: image ${image} is neither voice-api nor voice-worker`);
}

function only(r: "api" | "worker"): ContainerEnv {
  const found = containers().filter((c) => role(c.container) === r);
  assert.equal(found.length, 1, `expected one ${r} container in the manifests`);
  return found[0];
}

function settingsOf(c: ContainerEnv): Settings {
  return loadSettings(c.env);
}

Deno.test("every Secret, ConfigMap and $(VAR) a container's environment refers to exists", () => {
  assert.deepEqual(containers().flatMap((c) => c.problems), []);
});

Deno.test("the manifests set every environment variable the code reads", () => {
  const read = envNamesReadByCode();
  // The scanner itself: one name found through each way of reading.
  for (const name of ["DATABASE_URL", "API_PORT", "SPEECH_ENGINES", "SARVAM_STT_URL"]) {
    assert.ok(read.has(name), `the scanner no longer finds ${name}; see READS`);
  }
  const set = new Set(containers().flatMap((c) => [...c.names]));
  const missing = [...read].filter(([n]) => !set.has(n) && !(n in NOT_IN_KUBERNETES))
    .map(([n, at]) => `${n} (read at ${at})`);
  assert.deepEqual(missing, [], "add these to the ConfigMap, the Secret or a container's env");
  for (const name of Object.keys(NOT_IN_KUBERNETES)) {
    assert.ok(read.has(name), `NOT_IN_KUBERNETES lists ${name}, which the code no longer reads`);
    assert.ok(!set.has(name), `NOT_IN_KUBERNETES lists ${name}, but the manifests set it`);
  }
});

Deno.test("every environment variable the manifests set is read by the code or feeds one", () => {
  const read = envNamesReadByCode();
  const list = containers();
  // Helpers such as HOST_IP or the ConfigMap's WORKER_URL_* exist to build another value.
  const feeds = new Set(list.flatMap((c) => [...c.refs]));
  const unused = [...new Set(list.flatMap((c) => [...c.names]))]
    .filter((n) => !read.has(n) && !feeds.has(n));
  assert.deepEqual(unused, [], "no process reads these and no $(...) uses them: typos?");
});

Deno.test("the worker's speech config loads from the manifests' environment", async () => {
  const worker = only("worker");
  await loadSpeechConfig((name) => worker.env[name]);
});

// ---------------------------------------------------------------------------------------------
// Invariants

Deno.test("every namespaced object is in the voice namespace, which the manifests create", () => {
  one<K8sObject>("Namespace", NAMESPACE);
  const scoped = new Map(RESOURCES.map((r) => [r.kind, r.namespaced]));
  for (const d of DOCS) {
    const expected = scoped.get(d.obj.kind) ? NAMESPACE : undefined;
    assert.equal(d.obj.metadata.namespace, expected, `${label(d)}: namespace`);
  }
});

function selects(selector: Record<string, string> | undefined, t: IPodTemplateSpec): boolean {
  const labels = t.metadata?.labels ?? {};
  return Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);
}

/** The one workload a selector picks (a selector picking none or both is a mistake). */
function selected(what: string, selector: Record<string, string> | undefined): Workload {
  assert.ok(selector && Object.keys(selector).length > 0, `${what} has an empty selector`);
  const picked = workloads().filter((w) => selects(selector, w.template));
  assert.equal(
    picked.length,
    1,
    `${what} selects ${picked.map((w) => w.id).join(", ") || "nothing"}`,
  );
  return picked[0];
}

/** A container port by number or name, as probes, Services and NetworkPolicies give it. */
function containerPort(c: IContainer, port: number | string | undefined): number | undefined {
  return c.ports?.find((p) => p.containerPort === port || p.name === port)?.containerPort;
}

Deno.test("each workload selects its own pods, and Services, PDBs, HPA and policies select one", () => {
  for (const w of workloads()) {
    const spec = one<IDeployment>(w.kind, w.name).spec!;
    assert.ok(selects(spec.selector.matchLabels, w.template), `${w.id}: selector vs its labels`);
  }
  for (const s of all<IService>("Service")) {
    const w = selected(`Service ${s.metadata?.name}`, s.spec?.selector);
    for (const p of s.spec?.ports ?? []) {
      const target = containerPort(w.template.spec!.containers[0], p.targetPort ?? p.port);
      assert.ok(target, `Service ${s.metadata?.name} port ${p.name}: no such container port`);
    }
  }
  for (const p of all<IPodDisruptionBudget>("PodDisruptionBudget")) {
    selected(`PodDisruptionBudget ${p.metadata?.name}`, p.spec?.selector?.matchLabels);
  }
  for (const n of all<INetworkPolicy>("NetworkPolicy")) {
    const w = selected(`NetworkPolicy ${n.metadata?.name}`, n.spec?.podSelector?.matchLabels);
    for (const rule of n.spec?.ingress ?? []) {
      for (const p of rule.ports ?? []) {
        const port = containerPort(w.template.spec!.containers[0], p.port);
        assert.ok(port, `NetworkPolicy ${n.metadata?.name}: port ${p.port} is no container port`);
      }
    }
  }
  for (const h of all<IHorizontalPodAutoscaler>("HorizontalPodAutoscaler")) {
    const ref = h.spec!.scaleTargetRef;
    const target = one<IDeployment>(ref.kind, ref.name);
    assert.equal(ref.apiVersion, "apps/v1");
    assert.ok(
      (h.spec!.minReplicas ?? 1) >= (target.spec!.replicas ?? 1),
      `HPA ${h.metadata?.name}: minReplicas below the Deployment's replicas`,
    );
  }
});

Deno.test("probes, ports and scrape annotations point at what the processes listen on", () => {
  for (const c of containers()) {
    const where = `${c.workload.id} container ${c.container.name}`;
    const settings = settingsOf(c);
    const listens = role(c.container) === "api" ? settings.apiPort : settings.workerPort;
    assert.equal(containerPort(c.container, "http"), listens, `${where}: port "http"`);
    const probes = {
      readinessProbe: "/readyz",
      livenessProbe: "/healthz",
      startupProbe: "/healthz",
    } as const;
    for (const [probe, path] of Object.entries(probes)) {
      const get = c.container[probe as keyof typeof probes]?.httpGet;
      if (probe === "startupProbe" && !get) continue;
      assert.ok(get, `${where}: no ${probe} over HTTP`);
      assert.equal(get.path, path, `${where}: ${probe} path`);
      assert.equal(containerPort(c.container, get.port), listens, `${where}: ${probe} port`);
    }
    assert.ok(settings.metricsPort, `${where}: METRICS_PORT is not set`);
    assert.equal(containerPort(c.container, "metrics"), settings.metricsPort, `${where}: metrics`);
    const annotations = c.workload.template.metadata?.annotations ?? {};
    assert.equal(annotations["prometheus.io/scrape"], "true", `${where}: prometheus.io/scrape`);
    assert.equal(annotations["prometheus.io/port"], String(settings.metricsPort), `${where}`);
  }
});

Deno.test("the API pods open SIP_REDIRECT_PORT over UDP and TCP for the SIP redirect server", () => {
  const api = only("api");
  const port = settingsOf(api).sipRedirectPort;
  assert.ok(port, "SIP_REDIRECT_PORT is not set for the API");
  const protocols = (api.container.ports ?? []).filter((p) => p.containerPort === port)
    .map((p) => p.protocol).sort();
  assert.deepEqual(protocols, ["TCP", "UDP"]);
});

Deno.test("the worker's grace period outlasts its drain, which preStop runs", () => {
  const worker = only("worker");
  const pod = worker.workload.template.spec!;
  const drain = settingsOf(worker).drainTimeoutSeconds;
  assert.ok(
    (pod.terminationGracePeriodSeconds ?? 30) > drain,
    `terminationGracePeriodSeconds ${pod.terminationGracePeriodSeconds} must exceed ` +
      `DRAIN_TIMEOUT_SECONDS ${drain}, or the kubelet kills calls mid-drain`,
  );
  const command = worker.container.lifecycle?.preStop?.exec?.command ?? [];
  assert.deepEqual(command, ["/app/deploy/drain.sh"]);
  // The image holds the repository at /app: the script must be in the repository.
  let mode: number | null = null;
  try {
    mode = Deno.statSync(`${ROOT}deploy/drain.sh`).mode;
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    assert.fail("deploy/drain.sh, the worker's preStop hook (/app/deploy/drain.sh), is missing");
  }
  assert.ok((mode ?? 0o755) & 0o111, "deploy/drain.sh is not executable");
});

Deno.test("a worker uses its node's network, one per node, named by its pod", () => {
  const worker = only("worker");
  const pod = worker.workload.template.spec!;
  assert.equal(pod.hostNetwork, true);
  assert.equal(pod.dnsPolicy, "ClusterFirstWithHostNet");
  const anti = pod.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
  assert.ok(
    anti.some((t) =>
      t.topologyKey === "kubernetes.io/hostname" &&
      selects(t.labelSelector?.matchLabels, worker.workload.template)
    ),
    "the workers need a required pod anti-affinity on kubernetes.io/hostname against themselves",
  );
  const settings = settingsOf(worker);
  const hostIp = fieldValue(worker.workload, "status.hostIP");
  assert.equal(settings.nodeId, fieldValue(worker.workload, "metadata.name"));
  assert.deepEqual(settings.iceAddresses, [hostIp]);
  // The node's own address, or a name made from it (the https knobs); plain http goes straight
  // to the worker's port.
  const url = new URL(settings.workerPublicUrl ?? "");
  assert.ok(url.hostname.startsWith(hostIp), `WORKER_PUBLIC_URL ${url} is not the node's`);
  if (url.protocol === "http:") assert.equal(Number(url.port || 80), settings.workerPort);
  if (worker.workload.kind === "StatefulSet") {
    const set = one<IStatefulSet>("StatefulSet", worker.workload.name);
    const headless = one<IService>("Service", set.spec!.serviceName!);
    assert.equal(headless.spec?.clusterIP, "None", "a StatefulSet's service is headless");
  }
});

Deno.test("the API and the workers share the database and the token signing key", () => {
  const api = only("api"), worker = only("worker");
  for (const name of ["DATABASE_URL", "TOKEN_SIGNING_KEY"]) {
    const source = (c: ContainerEnv) => c.container.env?.find((e) => e.name === name)?.valueFrom;
    assert.ok(source(api)?.secretKeyRef, `the API reads ${name} from a Secret`);
    assert.deepEqual(source(worker), source(api), `${name} must come from the same place`);
  }
  // The admin token and the key hashing secret are the API's alone.
  for (const name of ["ADMIN_TOKEN", "KEY_HASH_SECRET"]) {
    assert.ok(api.names.has(name), `the API needs ${name}`);
    assert.ok(!worker.names.has(name), `the workers do not need ${name}`);
  }
});

/** A resource quantity in base units (bytes, cores). */
function quantity(q: string | number | undefined): number {
  const m = String(q ?? "").match(/^([0-9.]+)(m|k|Ki|M|Mi|G|Gi)?$/);
  assert.ok(m, `unreadable quantity ${q}`);
  const unit: Record<string, number> = {
    "": 1,
    m: 1e-3,
    k: 1e3,
    Ki: 1024,
    M: 1e6,
    Mi: 1024 ** 2,
    G: 1e9,
    Gi: 1024 ** 3,
  };
  return Number(m[1]) * unit[m[2] ?? ""];
}

Deno.test("the worker's resources fit WORKER_CAPACITY calls", () => {
  const worker = only("worker");
  const { workerCapacity: calls, workerCallCostCores } = settingsOf(worker);
  const r = worker.container.resources ?? {};
  // Measured (bench/media/call_density.ts): ~400 MB idle and up to ~25 MB per call when every
  // caller speaks at once (30 here); the configured cost per call with the capacity rule's
  // headroom (0.75 of a core used).
  const memory = 400 * 1024 ** 2 + calls * 30 * 1024 ** 2;
  const cpu = (calls * workerCallCostCores) / 0.75;
  assert.ok(quantity(r.limits?.memory) >= memory, `memory limit below ${memory} bytes`);
  assert.ok(quantity(r.requests?.memory) >= memory, `memory request below ${memory} bytes`);
  assert.ok(quantity(r.requests?.cpu) >= cpu, `cpu request below ${cpu}`);
  // And not far above: requests are what the scheduler reserves, idle cores are paid for.
  assert.ok(quantity(r.requests?.cpu) <= Math.ceil(cpu) + 1, `cpu request far above ${cpu}`);
  assert.ok(quantity(r.requests?.memory) <= 2 * memory, `memory request far above ${memory}`);
  const api = only("api").container.resources;
  assert.ok(api?.requests?.cpu && api.limits?.memory, "the API needs requests (the HPA uses them)");
});

Deno.test("containers run as uid 10001 with a read-only root and writable /tmp and recordings", () => {
  for (const c of containers()) {
    const where = `${c.workload.id} container ${c.container.name}`;
    const pod = c.workload.template.spec!;
    assert.equal(pod.securityContext?.runAsNonRoot, true, `${where}: runAsNonRoot`);
    assert.equal(pod.securityContext?.runAsUser, 10001, `${where}: runAsUser`);
    assert.equal(c.container.securityContext?.readOnlyRootFilesystem, true, `${where}`);
    assert.equal(c.container.securityContext?.allowPrivilegeEscalation, false, `${where}`);
    const mounts = c.container.volumeMounts ?? [];
    const writable = (path: string) =>
      mounts.some((m) =>
        !m.readOnly && (path === m.mountPath || path.startsWith(`${m.mountPath}/`)) &&
        pod.volumes?.some((v) => v.name === m.name)
      );
    assert.ok(writable("/tmp"), `${where}: /tmp is not a writable volume`);
    // The API with DATABASE_URL writes nothing; a worker writes its recordings.
    assert.ok(c.env.DATABASE_URL, `${where}: without DATABASE_URL the API would write DATA_DIR`);
    if (role(c.container) === "worker") {
      const dir = settingsOf(c).recordingsDir;
      assert.ok(writable(dir), `${where}: RECORDINGS_DIR ${dir} is not a writable volume`);
    }
  }
});
