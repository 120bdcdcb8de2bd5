// `deno task call --type`: a whole call in text, as the page's text box sends it (send-text), no
// recogniser: the example brain answers each typed turn, the replies are spoken and heard, and
// the end the brain asks for on "bye" is a normal end. Needs the worker to deliver typed text as
// a UserTurn (the proto's UserTurn.typed); before that a typed text reaches the brain as a page
// message the example brain does not answer, so the test waits for it.
import { assert, assertEquals } from "./helpers/assert.ts";
import { startCallService } from "./helpers/call_harness.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";
import { runCall } from "../cli/call.ts";

Deno.test({
  name: "--type drives a whole call in text against the example brain",
  async fn() {
    const service = await startCallService(createExampleBrain());
    try {
      const out: string[] = [];
      const code = await runCall(
        [
          ...[
            "--api",
            service.api.url,
            "--key",
            service.tenant.sk,
            "--agent",
            service.tenant.agent_id,
          ],
          ...["--type", "what is the weather like today", "--type", "bye"],
        ],
        {},
        { out: (l) => out.push(l), err: (l) => out.push(l) },
      );
      const text = out.join("\n");
      assertEquals(code, 0, text);
      assert(text.includes("caller: (typed) what is the weather like today"), text);
      assert(text.includes("bot: You said: what is the weather like today"), text);
      assert(text.includes("bot: Goodbye! Thanks for calling."), text);
      assert(!text.includes("caller voice:"), text); // nothing was spoken
      assert(/passed: greeting and 2 turns/.test(text), text);
    } finally {
      await service.close();
    }
  },
});
