// A scenario's `type` step sends what @pipecat-ai/client-js's sendText(content) sends: an RTVI
// `send-text` with `{content, options: {}}` (node_modules/@pipecat-ai/client-js, sendText). The
// brain here answers either form a typed text reaches it in: a page message carrying the RTVI
// message verbatim (the worker before typed turns) or a UserTurn (after), with an action echoing
// the text, so the step is checked end to end through the real worker on either.
import { assert, assertEquals } from "./helpers/assert.ts";
import { startCallService, waitForLog } from "./helpers/call_harness.ts";
import { createBrain } from "../sdk/brain/mod.ts";
import { runCall } from "../cli/call.ts";

const TEXT = "book a table for two at eight";

Deno.test("a typed step reaches the brain as the client library's sendText sends it", async () => {
  const brain = createBrain({
    onSessionStart: () => "Hello, type to me.",
    async *onTurn(turn, session) {
      session.dispatch("echo", { text: turn.text, via: "turn" });
      yield `You typed: ${turn.text}`;
    },
    onRtvi(message, session) {
      if (message.type === "send-text") {
        session.dispatch("echo", { text: message.data?.content, via: "page message" });
      }
    },
  });
  const service = await startCallService(brain);
  const dir = await Deno.makeTempDir({ prefix: "scenario-typed-" });
  try {
    const file = `${dir}/typed.json`;
    await Deno.writeTextFile(
      file,
      JSON.stringify({
        name: "typed",
        steps: [
          { expect_reply: "type to me" },
          { type: TEXT },
          { expect_action: { type: "echo", data: { text: TEXT } } },
        ],
      }),
    );
    const out: string[] = [];
    const code = await runCall(
      [
        ...["--scenario", file, "--timeout", "10", "--api", service.api.url],
        ...["--key", service.tenant.sk, "--agent", service.tenant.agent_id],
      ],
      {},
      { out: (l) => out.push(l), err: (l) => out.push(l) },
    );
    const text = out.join("\n");
    assertEquals(code, 0, text);
    assert(text.includes(`caller (typed): ${TEXT}`), text);

    // On the wire to the brain: the RTVI message verbatim, or a turn of that text.
    const sessionId = text.match(/session: (\S+)/)![1];
    // The worker writes the log in batches: wait for the entry.
    const sent = await waitForLog(service, sessionId, (e) =>
      e.source === "to_brain" &&
      (e.kind === "user_turn" ||
        (e.kind === "client_message" && e.data.json.includes("send-text"))));
    if (sent!.kind === "client_message") {
      const m = JSON.parse(sent!.data.json);
      assertEquals([m.label, m.type, m.data], ["rtvi-ai", "send-text", {
        content: TEXT,
        options: {},
      }]);
    } else {
      assertEquals(sent!.data.text, TEXT);
    }
  } finally {
    await service.close();
    await Deno.remove(dir, { recursive: true });
  }
});
