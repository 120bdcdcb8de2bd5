// A scenario's result as JUnit XML, the report CI systems read (GitHub, GitLab, Jenkins): one
// testsuite, one testcase per step; the step that failed carries a <failure>, the steps after it
// are <skipped/>. A call that could not be set up fails its first step.
import type { ScenarioResult } from "./scenario_run.ts";

const escape = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")
    // XML 1.0 has no place for most control characters, even escaped.
    // deno-lint-ignore no-control-regex
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "");

export function junitXml(r: Omit<ScenarioResult, "latency">): string {
  const steps = r.steps.map((s) => ({ ...s }));
  if (r.failure && !steps.some((s) => s.status === "failed") && steps[0]) {
    steps[0] = { ...steps[0], status: "failed", failure: r.failure.message };
  }
  const failures = steps.filter((s) => s.status === "failed").length;
  const skipped = steps.filter((s) => s.status === "skipped").length;
  const seconds = (ms: number) => (ms / 1000).toFixed(3);
  const total = steps.reduce((n, s) => n + s.ms, 0);
  const cls = escape(`scenario.${r.name}`);
  const cases = steps.map((s, i) => {
    const open = `    <testcase classname="${cls}" name="${escape(`${i + 1}. ${s.name}`)}" time="${
      seconds(s.ms)
    }"`;
    if (s.status === "passed") return `${open}/>`;
    if (s.status === "skipped") return `${open}>\n      <skipped/>\n    </testcase>`;
    const kind = escape(r.failure?.kind ?? "failure");
    const msg = escape(s.failure ?? "");
    return `${open}>\n      <failure type="${kind}" message="${msg}">${msg}${
      r.session_id ? `\nsession: ${escape(r.session_id)}` : ""
    }</failure>\n    </testcase>`;
  });
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites tests="${steps.length}" failures="${failures}" skipped="${skipped}">`,
    `  <testsuite name="${escape(r.name)}" tests="${steps.length}" failures="${failures}" ` +
    `skipped="${skipped}" errors="0" time="${seconds(total)}">`,
    ...cases,
    `  </testsuite>`,
    `</testsuites>`,
    ``,
  ].join("\n");
}
