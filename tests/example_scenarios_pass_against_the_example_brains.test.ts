// The example scenarios beside the example brains pass through the real service: the spoken one
// against the TypeScript example brain (the Python one is run in
// scenario_passes_on_the_example_brain_and_fails_a_broken_one_with_a_junit_failure.test.ts), and
// the typed ones against both SDKs' example brains once the worker delivers typed text as a
// UserTurn (the proto's UserTurn.typed, issue 26's typed turns): until then a typed text reaches a
// brain as a page message the example brains do not answer, so those two wait for it.
import { assert, assertEquals } from "./helpers/assert.ts";
import { type ServableBrain, startCallService } from "./helpers/call_harness.ts";
import { startPythonBrain } from "./helpers/python_brain.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";
import { callScenario, callSpokenScenario } from "./helpers/scenario_call.ts";

const example = (path: string) => new URL(`../sdk/${path}`, import.meta.url).pathname;

async function scenario(brain: ServableBrain, file: string, spoken = false) {
  const service = await startCallService(brain);
  try {
    return await (spoken ? callSpokenScenario : callScenario)(service, file);
  } finally {
    await service.close();
  }
}

Deno.test("the spoken example scenario passes against the TypeScript example brain", async () => {
  const r = await scenario(createExampleBrain(), example("brain/example/scenario.yaml"), true);
  assertEquals(r.code, 0, r.text);
  assert(/passed: 11 steps/.test(r.text), r.text);
});

Deno.test({
  name: "the typed example scenario passes against the TypeScript example brain",
  async fn() {
    const r = await scenario(createExampleBrain(), example("brain/example/typed_scenario.yaml"));
    assertEquals(r.code, 0, r.text);
  },
});

Deno.test({
  name: "the typed example scenario passes against the Python example brain",
  async fn() {
    const brain = await startPythonBrain();
    try {
      const r = await scenario(brain, example("python/example/typed_scenario.yaml"));
      assertEquals(r.code, 0, r.text);
    } finally {
      await brain.stop();
    }
  },
});
