// The layers of the product code hold (docs/decisions.md, "Layers"): read from the import graph
// of every product file (everything but tests/, bench/ and *.test.ts), type-only and dynamic
// imports included, since each still ties one layer to another. A layer rule follows imports
// through to what a file pulls in, so a page module that reaches media code through a helper is
// caught too; a violation is named by the import that crosses the line.
import { assert, assertEquals } from "./helpers/assert.ts";
import {
  circles,
  isProduct,
  readSources,
  type SourceFile,
  withoutComments,
} from "./helpers/import_graph.ts";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const MAX_LINES = 500;

/**
 * Known violations, each with why it is still there: the one place exceptions are listed (none
 * since issue 24 landed). An entry that no longer happens fails the test too, so the list only
 * shrinks.
 */
const KNOWN: Record<string, string> = {};

const under = (...dirs: string[]) => (path: string) => dirs.some((d) => path.startsWith(`${d}/`));

interface Layer {
  rule: string;
  /** The files the rule is about. */
  from: (path: string) => boolean;
  /** What they, and everything they pull in, may import. */
  may: (path: string) => boolean;
}

const LAYERS: Layer[] = [
  {
    rule: "shared helpers know no storage, routes, media or page",
    from: under("common"),
    may: under("common", "proto"),
  },
  {
    rule: "wire definitions stand alone",
    from: under("proto"),
    may: under("proto"),
  },
  {
    rule: "shared protocol code stands alone",
    from: under("sip"),
    may: under("sip", "common", "proto"),
  },
  {
    rule: "the control plane imports no media code",
    from: under("api"),
    may: (p) => !under("media")(p),
  },
  {
    rule: "storage knows no routes, media or page",
    from: under("db"),
    may: under("db", "common", "proto"),
  },
  {
    rule: "the page imports no media, API or storage code",
    from: under("web"),
    may: (p) => !under("media", "api", "db")(p),
  },
  {
    rule: "engine routing knows nothing of calls",
    from: under("media/engines"),
    may: (p) => !under("media/call")(p),
  },
  {
    rule: "speech stages know nothing of the routing or the calls above them",
    from: under("media/stt", "media/tts", "media/providers"),
    may: (p) => !under("media/engines", "media/call")(p),
  },
];

/** The carriers whose names only their own folders and the registries may write. */
const CARRIER_NAMES = ["twilio", "plivo", "exotel"];
/**
 * The files that list every carrier: the name type, the settings each is read with, and the two
 * registries (the worker's and the control plane's) that map a name to its carrier.
 */
const CARRIER_LISTS = new Set([
  "common/carrier.ts",
  "common/telephony_settings.ts",
  "media/phone/carriers/registry.ts",
  "api/telephony/carriers.ts",
]);
const carrierFolders = (name: string) =>
  under(`common/carriers/${name}`, `media/phone/carriers/${name}`, `api/telephony/${name}`);

/**
 * Carrier names (a string or an identifier; comments may name carriers) written outside the
 * carrier's own folders and the lists: shared code asks a carrier's descriptor instead.
 */
const carrierNamesOutside = (graph: Map<string, SourceFile>) =>
  [...graph.values()].flatMap((f) => {
    if (CARRIER_LISTS.has(f.path)) return [];
    const named = new Set(
      [...f.code.matchAll(new RegExp(CARRIER_NAMES.join("|"), "gi"))].map((m) =>
        m[0].toLowerCase()
      ),
    );
    const foreign = [...named].filter((name) => !carrierFolders(name)(f.path));
    return foreign.length > 0 ? [`carrier name outside its folder: ${f.path} (${foreign})`] : [];
  });

const files = await readSources(ROOT);
const product = files.filter((f) => isProduct(f.path));
const byPath = new Map(product.map((f) => [f.path, f]));

/** The imports that cross a layer's line, from its files or anything they pull in. */
function crossings(layer: Layer, graph: Map<string, SourceFile>): string[] {
  const out = new Set<string>();
  const seen = new Set<string>();
  const queue = [...graph.keys()].filter(layer.from);
  for (const path of queue) seen.add(path);
  while (queue.length > 0) {
    const file = graph.get(queue.shift()!)!;
    for (const { to } of file.imports) {
      if (!graph.has(to)) continue;
      if (!layer.may(to)) out.add(`${file.path} → ${to}`);
      else if (!seen.has(to)) {
        seen.add(to);
        queue.push(to);
      }
    }
  }
  return [...out];
}

/** Violations not in KNOWN, as one readable block. */
function unexpected(violations: string[]): string {
  return violations.filter((v) => !(v in KNOWN)).join("\n");
}

const circleViolations = (graph: Map<string, SourceFile>) =>
  circles([...graph.values()], () => true).map((c) => `circle: ${c.join(" → ")}`);

const testImports = (graph: Map<string, SourceFile>) =>
  [...graph.values()].flatMap((f) =>
    f.imports.filter((i) => !isProduct(i.to)).map((i) => `${f.path} → ${i.to}`)
  );

const oversized = (graph: Map<string, SourceFile>) =>
  [...graph.values()].filter((f) => f.lines > MAX_LINES).map((f) =>
    `over ${MAX_LINES} lines: ${f.path}`
  );

function allViolations(graph: Map<string, SourceFile>): string[] {
  return [
    ...new Set([
      ...circleViolations(graph),
      ...LAYERS.flatMap((layer) => crossings(layer, graph)),
      ...testImports(graph),
      ...oversized(graph),
      ...carrierNamesOutside(graph),
    ]),
  ];
}

Deno.test("the import graph is read whole", () => {
  // A reader that silently found nothing would pass every rule below.
  assert(product.length > 150, `only ${product.length} product files found`);
  const app = byPath.get("api/app.ts");
  assert(app, "api/app.ts not found");
  assert(app.imports.some((i) => i.to === "api/context.ts" && i.typeOnly), "type import missed");
  assert(
    byPath.get("media/main.ts")!.imports.some((i) => i.dynamic && i.to.startsWith("media/node/")),
    "dynamic import missed",
  );
});

Deno.test("no product module imports itself through a circle", () => {
  assertEquals(unexpected(circleViolations(byPath)), "");
});

for (const layer of LAYERS) {
  Deno.test(`layers hold: ${layer.rule}`, () => {
    assertEquals(unexpected(crossings(layer, byPath)), "");
  });
}

Deno.test("product code imports no tests, benchmarks or test helpers", () => {
  assertEquals(unexpected(testImports(byPath)), "");
});

Deno.test(`no product file is over ${MAX_LINES} lines`, () => {
  assertEquals(unexpected(oversized(byPath)), "");
});

Deno.test("no carrier is named outside its own folders and the carrier lists", () => {
  assertEquals(unexpected(carrierNamesOutside(byPath)), "");
});

Deno.test("every known exception still happens, so the list only shrinks", () => {
  const now = new Set(allViolations(byPath));
  const gone = Object.keys(KNOWN).filter((k) => !now.has(k));
  assertEquals(gone.join("\n"), "", "fixed: take these out of KNOWN");
});

Deno.test("each kind of violation added to the real graph is found", () => {
  const before = new Set(allViolations(byPath));
  const added = (change: (graph: Map<string, SourceFile>) => void) => {
    const graph = new Map(byPath);
    change(graph);
    return allViolations(graph).filter((v) => !before.has(v));
  };
  const importing = (from: string, to: string) => (graph: Map<string, SourceFile>) => {
    const f = graph.get(from);
    assert(f, `${from} is not a product file: pick another`);
    assert(files.some((g) => g.path === to), `${to} does not exist: pick another`);
    graph.set(from, { ...f, imports: [...f.imports, { to, typeOnly: true, dynamic: false }] });
  };
  const finds = (found: string[], expected: (v: string) => boolean) =>
    assert(found.some(expected), `not found among: ${found.join("; ") || "nothing"}`);
  for (
    const [from, to] of [
      ["common/ids.ts", "db/client.ts"],
      ["proto/rtvi.ts", "common/log.ts"],
      ["db/agents.ts", "api/context.ts"],
      ["web/call/view.ts", "media/rtvi/protocol.ts"],
      ["media/engines/routing.ts", "media/call/call.ts"],
      ["media/stt/wer.ts", "media/engines/routing.ts"],
      ["sip/message.ts", "media/sip/sdp.ts"],
      ["api/sip/redirect.ts", "media/sip/uas.ts"],
      ["cli/run.ts", "tests/helpers/assert.ts"],
    ]
  ) {
    finds(added(importing(from, to)), (v) => v === `${from} → ${to}`);
  }
  // Through a helper: the page pulls in the caller, which pulls in media code.
  finds(
    added(importing("web/call/view.ts", "caller/caller.ts")),
    (v) => v.startsWith("caller/caller.ts → media/"),
  );
  // Through a helper: the control plane pulls in the caller, which pulls in media code.
  finds(
    added(importing("api/context.ts", "caller/caller.ts")),
    (v) => v.startsWith("caller/caller.ts → media/"),
  );
  finds(
    added(importing("api/context.ts", "api/app.ts")),
    (v) => v.startsWith("circle: ") && v.includes("api/context.ts → api/app.ts"),
  );
  finds(
    added((graph) => graph.set("common/ids.ts", { ...graph.get("common/ids.ts")!, lines: 501 })),
    (v) => v === "over 500 lines: common/ids.ts",
  );
  // A carrier's name in shared code, or in another carrier's folder, as a string or identifier;
  // in a comment it is no code.
  const naming = (path: string, code: string) => (graph: Map<string, SourceFile>) => {
    assert(graph.has(path), `${path} is not a product file: pick another`);
    graph.set(path, { ...graph.get(path)!, code: graph.get(path)!.code + code });
  };
  for (
    const [path, code, found] of [
      ["media/signaling/offer.ts", `if (carrier === "Twilio") {}`, "twilio"],
      ["api/telephony/admit.ts", "const plivoNonce = 1;", "plivo"],
      ["media/phone/carriers/twilio/dialect.ts", `const other = "exotel";`, "exotel"],
    ]
  ) {
    finds(
      added(naming(path, code)),
      (v) => v === `carrier name outside its folder: ${path} (${found})`,
    );
  }
  const commented = new Map(byPath);
  const offer = commented.get("media/signaling/offer.ts")!;
  commented.set(offer.path, {
    ...offer,
    code: offer.code + withoutComments("// Twilio\n/** Plivo, Exotel */\n"),
  });
  assertEquals(carrierNamesOutside(commented), carrierNamesOutside(byPath));
});
