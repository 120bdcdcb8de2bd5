// The import graph of the repository's own TypeScript, read from the source text, for the
// architecture test (tests/architecture_layers_hold.test.ts). A small reader rather than
// `deno info --json`: one pass over the files takes milliseconds and needs no module resolution.
// deno fmt puts every top-level statement at column 0, so an import or re-export is a line that
// starts with `import` or `export`; dynamic `import("…")` is read too (it still ties the layers).
// Only relative specifiers are edges: bare ones ("hono", "npm:…", "node:…") are packages.

export interface Import {
  /** The imported file, relative to the root, "/"-separated. */
  to: string;
  /** `import type` / `export type`: no runtime edge, so it cannot make a load-order circle. */
  typeOnly: boolean;
  /** `import("…")`: loaded when the code runs, not when the module loads. */
  dynamic: boolean;
}

export interface SourceFile {
  path: string;
  lines: number;
  imports: Import[];
  /** The file's text with its comments taken out (strings kept): what the code itself names. */
  code: string;
}

const CLAUSE = String.raw`(?:[\w$]+\s*,\s*)?(?:\{[^}]*\}|\*\s*as\s+[\w$]+|\*|[\w$]+)`;
const STATIC = new RegExp(
  String.raw`^(import|export)\s+(type\s+)?(?:${CLAUSE}\s*from\s*)?["']([^"'\n]+)["']`,
  "gm",
);
/**
 * One token at a time: a dynamic import, a string or template literal (kept whole, so what looks
 * like code inside it is not read), or a comment (dropped, so a commented-out import is no edge).
 */
const TOKEN =
  /\bimport\(\s*("[^"\n]*"|'[^'\n]*')\s*\)|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)|\/\*[\s\S]*?\*\/|\/\/[^\n]*/g;

/** `text` with its comments dropped; string and template literals are kept whole. */
export function withoutComments(text: string): string {
  return text.replace(
    TOKEN,
    (token, _loaded: string | undefined, literal: string | undefined) =>
      token.startsWith("/") ? "" : literal ?? token,
  );
}

export interface ImportSpec {
  specifier: string;
  typeOnly: boolean;
  dynamic: boolean;
}

/** The specifiers a module's text imports: static ones in order, then dynamic ones. */
export function importsOf(text: string): ImportSpec[] {
  const dynamic: ImportSpec[] = [];
  const code = text.replace(
    TOKEN,
    (token, loaded: string | undefined, literal: string | undefined) => {
      if (loaded !== undefined) {
        dynamic.push({ specifier: loaded.slice(1, -1), typeOnly: false, dynamic: true });
        return token;
      }
      return literal ?? "";
    },
  );
  const out: ImportSpec[] = [];
  for (const m of code.matchAll(STATIC)) {
    out.push({ specifier: m[3], typeOnly: m[2] !== undefined, dynamic: false });
  }
  return [...out, ...dynamic];
}

function normalise(parts: string[]): string {
  const out: string[] = [];
  for (const p of parts) {
    if (p === "" || p === ".") continue;
    if (p === "..") out.pop();
    else out.push(p);
  }
  return out.join("/");
}

/** `spec` as imported from `from` (both relative to the root); undefined for a package. */
export function resolve(from: string, spec: string): string | undefined {
  if (!spec.startsWith("./") && !spec.startsWith("../")) return undefined;
  const dir = from.split("/").slice(0, -1);
  return normalise([...dir, ...spec.split("/")]);
}

// The folders .gitignore keeps out of the repository (local data, build output, scratch work).
const SKIP_DIRS = new Set(["node_modules", "data", "dist", ".git", "test-artifacts", "scratch"]);

/** Every .ts/.tsx file under `root` (skipping node_modules, data, build output), sorted. */
export async function readSources(root: string): Promise<SourceFile[]> {
  const files: SourceFile[] = [];
  async function walk(dir: string) {
    for await (const entry of Deno.readDir(`${root}/${dir}`)) {
      const path = dir === "" ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory) {
        if (!SKIP_DIRS.has(entry.name) && !entry.name.startsWith(".")) await walk(path);
      } else if (entry.isFile && /\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts")) {
        const text = await Deno.readTextFile(`${root}/${path}`);
        const imports: Import[] = [];
        for (const i of importsOf(text)) {
          const to = resolve(path, i.specifier);
          if (to !== undefined) imports.push({ to, typeOnly: i.typeOnly, dynamic: i.dynamic });
        }
        const lines = text.endsWith("\n") ? text.split("\n").length - 1 : text.split("\n").length;
        files.push({ path, lines, imports, code: withoutComments(text) });
      }
    }
  }
  await walk("");
  return files.sort((a, b) => a.path < b.path ? -1 : 1);
}

/** A test, a benchmark or a test fake: everything else is product code. */
export function isProduct(path: string): boolean {
  return !path.startsWith("tests/") && !path.startsWith("bench/") &&
    !/\.test\.tsx?$/.test(path) && path !== "deploy/stack_check.ts";
}

/**
 * The import circles among `files`, each as the list of its files in import order (the first
 * repeated at the end), found as the strongly connected components of the graph (Tarjan); one
 * circle is reported per component, the shortest through its first file.
 */
export function circles(files: SourceFile[], edge: (i: Import) => boolean): string[][] {
  const known = new Set(files.map((f) => f.path));
  const next = new Map<string, string[]>();
  for (const f of files) {
    next.set(f.path, [
      ...new Set(f.imports.filter((i) => edge(i) && known.has(i.to)).map((i) => i.to)),
    ]);
  }
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || next.get(v)!.includes(v)) components.push(component.sort());
    }
  };
  for (const f of files) if (!index.has(f.path)) visit(f.path);
  return components.map((component) => shortestCircle(component[0], new Set(component), next));
}

function shortestCircle(start: string, within: Set<string>, next: Map<string, string[]>) {
  const from = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of next.get(v)!) {
      if (!within.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u = v; u !== start; u = from.get(u)!) path.splice(1, 0, u);
        return [...path, start];
      }
      if (!from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}
