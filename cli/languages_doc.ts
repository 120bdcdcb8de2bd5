// docs/languages.md, built from the engine registry: per roster language, which engines recognise
// it and speak it in each persona, local or at a provider, in the order the default routes try
// them. `deno task languages` writes it; a test keeps the file equal to what this builds.
import {
  type EngineRef,
  ROSTER_LANGUAGES,
  ROSTER_VOICES,
  type ServeMatrix,
} from "../common/capabilities.ts";
import { ENGINE_TYPES } from "../media/engines/registry.ts";
import {
  declaredMatrix,
  defaultSpeechConfig,
  type SpeechConfig,
} from "../media/engines/speech_config.ts";
import { RELATED_VOICES } from "../media/tts/related_voice.ts";

/** Every engine the registry knows, in the default order (providers first, local last). */
export function fullConfig(): SpeechConfig {
  const base = defaultSpeechConfig(() => "set");
  const known = Object.keys(ENGINE_TYPES);
  const missing = known.filter((n) => ![...base.recognition, ...base.synthesis].includes(n));
  if (missing.length) throw new Error(`the default config does not place ${missing.join(", ")}`);
  return base;
}

const code = (l: string) => l.replace("LANGUAGE_", "").toLowerCase();
const cell = (refs: EngineRef[] | undefined) =>
  refs?.length
    ? refs.map((r) => `${r.engine} (${r.kind}${r.via ? `, via ${code(r.via)}` : ""})`).join(" → ")
    : "—";

function table(m: ServeMatrix): string {
  const head = `| language | recognition | ${ROSTER_VOICES.join(" | ")} |`;
  const rule = `|---|---|${ROSTER_VOICES.map(() => "---").join("|")}|`;
  const rows = ROSTER_LANGUAGES.map((l) =>
    `| ${code(l)} | ${cell(m[l]?.stt)} | ${
      ROSTER_VOICES.map((v) => cell(m[l]?.tts?.[v])).join(" | ")
    } |`
  );
  return [head, rule, ...rows].join("\n");
}

function counts(m: ServeMatrix): string {
  const n = ROSTER_LANGUAGES.length;
  const stt = ROSTER_LANGUAGES.filter((l) => m[l]?.stt).length;
  const both = ROSTER_LANGUAGES.filter((l) => ROSTER_VOICES.every((v) => m[l]?.tts?.[v]));
  // Native: some engine of the language's route speaks it in a voice of its own, in each persona.
  const native = both.filter((l) => ROSTER_VOICES.every((v) => m[l].tts![v].some((r) => !r.via)));
  return `recognition ${stt} of ${n}, synthesis in both personas ${both.length} of ${n} ` +
    `(${native.length} with a native voice in both, ${both.length - native.length} through a ` +
    `related language's voice in one or both)`;
}

/** The required variables of every engine, each once, in registry order. */
function requiredVariables(): string[] {
  const names = Object.values(ENGINE_TYPES).flatMap((t) => t.env ?? [])
    .filter((v) => v.required).map((v) => `\`${v.name}\``);
  return [...new Set(names)];
}

/** Each engine: its leg, where it runs, and the environment variables it reads. */
function enginesTable(): string {
  const rows = Object.entries(ENGINE_TYPES).map(([name, t]) => {
    const vars = (t.env ?? []).map((v) =>
      `\`${v.name}\` (${v.required ? "required" : "optional"}${v.secret ? ", secret" : ""})`
    ).join(", ") || "—";
    return `| ${name} | ${t.leg} | ${t.kind} | ${vars} |`;
  });
  return ["| engine | leg | kind | environment |", "|---|---|---|---|", ...rows].join("\n");
}

/** The related-language routes of the local engine, from media/tts/related_voice.ts. */
function relatedList(): string {
  return Object.entries(RELATED_VOICES).map(([l, r]) => {
    const from = r.transliterates ? `; ${r.transliterates.says}` : "";
    const refused = r.refuses ? `; text in ${r.refuses.script} is refused` : "";
    return `- ${code(l)}: spoken by the ${
      code(r.via)
    } voice, which reads ${r.script}${from}${refused}.`;
  }).join("\n");
}

export function languagesDoc(): string {
  const local = declaredMatrix(defaultSpeechConfig(() => undefined));
  const full = declaredMatrix(fullConfig());
  return `# Languages and engines

<!-- Built from media/engines/registry.ts by \`deno task languages\`; a test keeps it true. -->

The roster is English and the 22 scheduled languages of India, each in two personas
(VOICE_ANANYA, female; VOICE_ARJUN, male). Which of them a deployment serves depends on the
engines its workers run (\`SPEECH_ENGINES\`, or the provider keys in the environment; see
media/engines/speech_config.ts). Each cell lists the engines in the order the default routes try
them: the first serves, the next takes over when it fails. \`local\` engines run on the worker;
\`provider\` engines are reached over the network. \`GET /api/v1/capabilities\` reports the same
matrix for the workers that are live right now, and sessions.connect accepts exactly that.

espeak-ng has no voice of its own for seven roster languages; it speaks them with the voice of
a related language, marked \`via\` in the cells (and in the capabilities): intelligible, with
that language's accent and its rules for reading the script. A customer who needs a native voice
for one of them routes it to a provider that has one (\`routes\` in \`SPEECH_ENGINES\`). Word timings, and so
the \`Heard\` text after a barge-in, are always on the text the brain sent.

${relatedList()}

## Engines

Each engine with the environment variables it reads (its entry's \`env\` in the registry). A
provider engine runs by default once the environment gives its required ones. Secret ones belong in
a Secret (deploy/k8s/secret.template.yaml), the others in the ConfigMap; deploy/compose.yaml passes
them all to its workers, and a test keeps both deploy files listing every one.

${enginesTable()}

## With nothing configured (the local engines)

${counts(local)}.

${table(local)}

## With every engine configured (${requiredVariables().join(" and ")} set)

${counts(full)}.

${table(full)}
`;
}

/** The doc as the repository keeps it: through `deno fmt`, which aligns the tables. */
export async function formattedLanguagesDoc(): Promise<string> {
  const fmt = new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--ext=md", "-"],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = fmt.stdin.getWriter();
  await writer.write(new TextEncoder().encode(languagesDoc()));
  await writer.close();
  const { code, stdout } = await fmt.output();
  if (code !== 0) throw new Error(`deno fmt failed (${code})`);
  return new TextDecoder().decode(stdout);
}

if (import.meta.main) {
  const path = new URL("../docs/languages.md", import.meta.url);
  await Deno.writeTextFile(path, await formattedLanguagesDoc());
  console.log("wrote docs/languages.md");
}
