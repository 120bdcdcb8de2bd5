// Log rows as the console summarises them: chat frames parsed, empty text never an empty row.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { readLogData, summary } from "./log_view.ts";

Deno.test("a chat frame stored as JSON text is read as the message it is", () => {
  const frame = '{"label":"rtvi-ai","type":"send-text","id":"a1","data":{"content":"hi"}}';
  const d = readLogData(frame);
  assertEquals(d, {
    value: { label: "rtvi-ai", type: "send-text", id: "a1", data: { content: "hi" } },
    parsedJson: true,
  });
  assertEquals(summary(d.value), "send-text: content=hi");
  assertEquals(readLogData("{not json"), { value: "{not json", parsedJson: false });
  assertEquals(readLogData("plain words"), { value: "plain words", parsedJson: false });
  assertEquals(readLogData({ text: "hi" }), { value: { text: "hi" }, parsedJson: false });
  // A brain frame's JSON text fields too.
  assertEquals(readLogData({ seq: 2, type: "transcript", json: '{"text":"hi","typed":true}' }), {
    value: { seq: 2, type: "transcript", json: { text: "hi", typed: true } },
    parsedJson: true,
  });
  assertEquals(readLogData({ init_json: "{}", json: "not json" }), {
    value: { init_json: {}, json: "not json" },
    parsedJson: true,
  });
});

Deno.test("every summary says something: empty text shows the other fields", () => {
  const last = { seq: 9, timestamp_ms: 1, turn_id: "t1", unit_id: "t1.end", text: "", last: true };
  assertEquals(summary(last), "(no text) turn_id=t1 unit_id=t1.end last=true");
  assertEquals(summary({ seq: 2, unit_id: "u1", text: "Hello there" }), "Hello there");
  assertEquals(summary({ detail: "refused" }), "detail=refused");
  assertEquals(summary({}), "{}");
  assertEquals(summary(""), "(empty)");
  const bot = { label: "rtvi-ai", type: "bot-output", data: { text: "Hi.", spoken_status: "new" } };
  assertEquals(summary(bot), "bot-output: Hi.");
  assertEquals(summary("x".repeat(200)).length, 96);
});
