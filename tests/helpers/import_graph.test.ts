// The import reader behind tests/architecture_layers_hold.test.ts finds every form of import
// deno fmt writes, and nothing in comments; circles are found with their files in order.
import { assertEquals } from "./assert.ts";
import {
  circles,
  importsOf,
  isProduct,
  resolve,
  type SourceFile,
  withoutComments,
} from "./import_graph.ts";

Deno.test("every form of import is read, and commented-out ones are not", () => {
  const text = `// A header that mentions import { x } from "./not_this.ts";
import { a } from "./a.ts";
import {
  b,
  type B,
} from "../b.ts";
import type { C } from "./c.ts";
import * as d from "./d.ts";
import e, { f } from "./e.ts";
import "./side_effect.ts";
export { g } from "./g.ts";
export type { H } from "./h.ts";
export * from "./star.ts";
export const url = "https://example.com/x.ts";
/* import { gone } from "./gone.ts"; */
import { Hono } from "hono";
const later = await import("./later.ts");
const s = "a string that says import('./no.ts') is kept";
`;
  assertEquals(importsOf(text), [
    { specifier: "./a.ts", typeOnly: false, dynamic: false },
    { specifier: "../b.ts", typeOnly: false, dynamic: false },
    { specifier: "./c.ts", typeOnly: true, dynamic: false },
    { specifier: "./d.ts", typeOnly: false, dynamic: false },
    { specifier: "./e.ts", typeOnly: false, dynamic: false },
    { specifier: "./side_effect.ts", typeOnly: false, dynamic: false },
    { specifier: "./g.ts", typeOnly: false, dynamic: false },
    { specifier: "./h.ts", typeOnly: true, dynamic: false },
    { specifier: "./star.ts", typeOnly: false, dynamic: false },
    { specifier: "hono", typeOnly: false, dynamic: false },
    { specifier: "./later.ts", typeOnly: false, dynamic: true },
  ]);
});

Deno.test("specifiers resolve against the importing file; packages are no edge", () => {
  assertEquals(resolve("api/auth/rate_limit.ts", "../context.ts"), "api/context.ts");
  assertEquals(resolve("api/auth/rate_limit.ts", "../../common/ipaddr.ts"), "common/ipaddr.ts");
  assertEquals(resolve("web/call/call.ts", "./view.ts"), "web/call/view.ts");
  assertEquals(resolve("api/app.ts", "hono"), undefined);
  assertEquals(resolve("api/app.ts", "npm:hono@4"), undefined);
});

Deno.test("tests, benchmarks and test files are not product code", () => {
  assertEquals(
    ["api/app.ts", "tests/helpers/x.ts", "bench/main.ts", "db/sessions.test.ts", "web/x.test.tsx"]
      .map(isProduct),
    [true, false, false, false, false],
  );
});

Deno.test("circles are found once each, in import order", () => {
  const file = (path: string, ...to: string[]): SourceFile => ({
    path,
    lines: 1,
    code: "",
    imports: to.map((t) => ({ to: t, typeOnly: t.endsWith("type.ts"), dynamic: false })),
  });
  const graph = [
    file("a.ts", "b.ts"),
    file("b.ts", "c.ts"),
    file("c.ts", "a.ts", "d.ts"),
    file("d.ts"),
    file("e.ts", "e.ts"),
    file("f.ts", "g_type.ts"),
    file("g_type.ts", "f.ts"),
  ];
  assertEquals(circles(graph, () => true), [
    ["a.ts", "b.ts", "c.ts", "a.ts"],
    ["e.ts", "e.ts"],
    ["f.ts", "g_type.ts", "f.ts"],
  ]);
  assertEquals(circles(graph, (i) => !i.typeOnly), [["a.ts", "b.ts", "c.ts", "a.ts"], [
    "e.ts",
    "e.ts",
  ]]);
});

Deno.test("a file's code is its text without comments, strings kept whole", () => {
  const text = `// header naming("this")
/** A doc comment, "quoted". */
const a = "// not a comment"; /* inline */ const b = 'x';
const t = \`/* kept */ \${a}\`; // trailing
`;
  assertEquals(
    withoutComments(text),
    `

const a = "// not a comment";  const b = 'x';
const t = \`/* kept */ \${a}\`; 
`,
  );
});
