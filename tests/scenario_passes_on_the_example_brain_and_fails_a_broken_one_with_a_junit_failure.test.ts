// `deno task call --scenario` through the real service (the API, a worker process, the local
// speech engines): the Python example brain, as its own process, gets through its example
// scenario (sdk/python/example/scenario.yaml: spoken turns, an action, a barge-in, the end it
// asks for); a broken brain that never dispatches the transcript fails the same scenario at that
// step, with exit code 1 and a JUnit report naming the step, the steps after it skipped.
import { assert, assertEquals } from "./helpers/assert.ts";
import { startCallService } from "./helpers/call_harness.ts";
import { startPythonBrain } from "./helpers/python_brain.ts";
import { createBrain } from "../sdk/brain/mod.ts";
import { runCall } from "../cli/call.ts";

const SCENARIO = new URL("../sdk/python/example/scenario.yaml", import.meta.url).pathname;

async function call(args: string[]) {
  const out: string[] = [], err: string[] = [];
  const code = await runCall(args, {}, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, text: [...out, ...err].join("\n") };
}

Deno.test("the Python example brain passes its example scenario through the worker", async () => {
  const brain = await startPythonBrain();
  const service = await startCallService(brain);
  const dir = await Deno.makeTempDir({ prefix: "scenario-" });
  try {
    const junit = `${dir}/report.xml`;
    const run = () =>
      call([
        ...["--scenario", SCENARIO, "--junit", junit, "--api", service.api.url],
        ...["--key", service.tenant.sk, "--agent", service.tenant.agent_id],
      ]);
    // Eleven spoken steps hang on pocketsphinx hearing four sayings through WebRTC; on a loaded
    // CI machine one of them was once misheard (a 15 s expectation ran out). A second call is
    // allowed and the first one's whole transcript printed; a brain that cannot pass fails both.
    let r = await run();
    if (r.code !== 0) {
      console.log(`first call failed (exit ${r.code}); calling again. Its transcript:\n${r.text}`);
      r = await run();
    }
    assertEquals(r.code, 0, r.text);
    assert(/caller voice: festival/.test(r.text), r.text);
    assert(/said vs heard: "what is the weather like today"/.test(r.text), r.text);
    assert(/bot: Once upon a time/.test(r.text), r.text);
    assert(/passed: 11 steps/.test(r.text), r.text);
    const xml = await Deno.readTextFile(junit);
    assert(/<testsuite name="Python example brain, spoken" tests="11" failures="0"/.test(xml), xml);
  } finally {
    await service.close();
    await brain.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a broken brain fails the scenario at the unmet step: exit 1, a JUnit failure", async () => {
  // Greets and answers, but never shows the transcript on the page.
  const broken = createBrain({
    onSessionStart: () => "Hello! I am the example brain, more or less.",
    async *onTurn() {
      yield "Sorry, I lost my notes.";
    },
  });
  const service = await startCallService(broken);
  const dir = await Deno.makeTempDir({ prefix: "scenario-" });
  try {
    const junit = `${dir}/report.xml`;
    const r = await call([
      ...["--scenario", SCENARIO, "--junit", junit, "--timeout", "4", "--api", service.api.url],
      ...["--key", service.tenant.sk, "--agent", service.tenant.agent_id],
    ]);
    assertEquals(r.code, 1, r.text);
    assert(
      /FAILED \(timeout\) at step 3: expect action transcript: none came/.test(r.text),
      r.text,
    );
    const xml = await Deno.readTextFile(junit);
    assert(/tests="11" failures="1" skipped="8"/.test(xml), xml);
    assert(
      /<testcase classname="scenario\.Python example brain, spoken" name="3\. expect action transcript" time="[\d.]+">\s*<failure type="timeout" message="expect action transcript: none came">/
        .test(xml),
      xml,
    );
    assertEquals(xml.match(/<skipped\/>/g)?.length, 8, xml);
    console.log(r.text);
    console.log(xml);
  } finally {
    await service.close();
    await Deno.remove(dir, { recursive: true });
  }
});
