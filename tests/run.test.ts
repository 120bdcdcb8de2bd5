import { assert, assertEquals } from "./helpers/assert.ts";
import { errorsSection, formatSummary, parseSummary } from "./run.ts";

Deno.test("a failed file's ERRORS section is what the runner prints again at the end", async () => {
  const dir = await Deno.makeTempDir({ prefix: "run-test-" });
  try {
    await Deno.writeTextFile(
      `${dir}/x.test.ts`,
      `Deno.test("passes", () => {});\n` +
        `Deno.test("fails", () => { throw new Error("the reason it failed"); });\n`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["test", "--no-check", `${dir}/x.test.ts`],
      env: { NO_COLOR: "" }, // colours on, as in a terminal: the section must be found through them
      stdout: "piped",
      stderr: "piped",
    }).output();
    const lines = new TextDecoder().decode(out.stdout).split("\n");
    const section = errorsSection(lines);
    assert(section.some((l) => l.includes("the reason it failed")), section.join("\n"));
    assert(!section.some((l) => l.includes("FAILURES")), section.join("\n"));
    const summary = lines.map(parseSummary).find((t) => t);
    assertEquals(summary?.passed, 1);
    assertEquals(summary?.failed, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a long ERRORS section is cut to its first lines and says how many were left", () => {
  const lines = [" ERRORS ", ...Array.from({ length: 100 }, (_, i) => `line ${i}`), " FAILURES "];
  const section = errorsSection(lines, 10);
  assertEquals(section.length, 11);
  assertEquals(section[0], "line 0");
  assertEquals(section[10], "… 90 more lines in the lane's output above");
});

Deno.test("a job that crashed without an ERRORS section gives its last lines", () => {
  const lines = Array.from({ length: 50 }, (_, i) => `out ${i}`);
  assertEquals(errorsSection(lines, 3), ["out 47", "out 48", "out 49"]);
});

Deno.test("the closing summary keeps deno test's own shape, which .ci/run adds up", () => {
  const t = { passed: 3, passedSteps: 2, failed: 1, failedSteps: 0, ignored: 0, ignoredSteps: 0 };
  const line = formatSummary(t, false, 65);
  assertEquals(line, "FAILED | 3 passed (2 steps) | 1 failed (1m5s)");
  assertEquals(parseSummary(line), t);
});
