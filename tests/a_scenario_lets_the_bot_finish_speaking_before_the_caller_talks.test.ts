// A scenario talks as a person would: after an expect_reply the next typed or spoken step waits
// until the bot has finished speaking, so no reply is cut short except by the interrupt step
// (the example's typed scenario, sdk/brain/example/typed_scenario.yaml, through the real
// service). Before, expect_reply was met when the reply's text arrived and the next `type` cut
// off the greeting and the replies. The printed conversation is what the caller heard: the unit
// the interrupt cut shows what was heard of it, the units dropped unheard never show, and every
// act prints its latency to the bot's first audio, with a p50/p99 summary.
import { assert, assertEquals } from "./helpers/assert.ts";
import { startCallService } from "./helpers/call_harness.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";
import { callScenario } from "./helpers/scenario_call.ts";

const SCENARIO = new URL("../sdk/brain/example/typed_scenario.yaml", import.meta.url).pathname;

interface Unit {
  text: string;
  heard: string;
  cut_off: boolean;
}

Deno.test("a scenario lets the bot finish speaking before the caller talks", async () => {
  const service = await startCallService(createExampleBrain());
  try {
    const { code, out, text } = await callScenario(service, SCENARIO);
    assertEquals(code, 0, text);
    const sessionId = /session: (\S+)/.exec(text)![1];
    const record = await service.record(sessionId, "ended", 20_000);
    const turns = record.timings.turns as {
      turn_id: string;
      user_text: string | null;
      interrupted: boolean;
      units: Unit[];
    }[];
    // Only the story, which the interrupt step talks over, is cut.
    const cut = turns.filter((t) => t.interrupted || t.units.some((u) => u.cut_off));
    assertEquals(cut.map((t) => t.user_text), ["tell me a story"], JSON.stringify(turns, null, 1));
    const greeting = turns.find((t) => t.turn_id === "greeting")!;
    assertEquals(greeting.units.map((u) => u.heard), [greeting.units[0].text]);

    // The printed conversation: what was heard, unit by unit. Every whole unit once, in order;
    // of the story the interrupt cut, only the unit playing then, with what was heard of it.
    const printed = out.filter((l) => l.startsWith("bot: "));
    const units = turns.flatMap((t) => t.units);
    const whole = units.filter((u) => !u.cut_off).map((u) => `bot: ${u.text}`);
    assertEquals(printed.filter((l) => !l.includes("  [cut off; heard: ")), whole, text);
    const cutLines = printed.filter((l) => l.includes("  [cut off; heard: "));
    assert(cutLines.length <= 1, `units never heard were printed:\n${text}`);
    for (const l of cutLines) {
      const u = units.find((u) =>
        u.cut_off && l === `bot: ${u.text}  [cut off; heard: "${u.heard}"]`
      );
      assert(u, `${l} is not what the record says was heard\n${JSON.stringify(units, null, 1)}`);
    }
    // Four acts (three typed, one spoken), each with its latency, and the summary.
    assertEquals(out.filter((l) => /^latency \(step \d+, from /.test(l)).length, 4, text);
    assert(/end of speech → first bot audio at the caller: p50 \d+ ms/.test(text), text);
  } finally {
    await service.close();
  }
});
