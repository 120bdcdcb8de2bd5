import { assertEquals, assertThrows } from "../tests/helpers/assert.ts";
import {
  decodeBrainFrame,
  decodeServiceFrame,
  encodeBrainFrame,
  encodeServiceFrame,
} from "./frames.ts";

Deno.test("a service frame round-trips with its seq, timestamp and body", () => {
  const before = Date.now();
  const f = decodeServiceFrame(
    encodeServiceFrame(3, "user_turn", { turn_id: "t1", text: "hi", typed: true }),
  );
  assertEquals(f.seq, 3);
  assertEquals(f.kind, "user_turn");
  assertEquals(f.body, { turn_id: "t1", text: "hi", typed: true, speculative: false });
  // A spoken turn (or an older worker) leaves typed and speculative out: they read false.
  const spoken = decodeServiceFrame(encodeServiceFrame(4, "user_turn", { turn_id: "t2" }));
  assertEquals(spoken.body, { turn_id: "t2", text: "", typed: false, speculative: false });
  const held = decodeServiceFrame(
    encodeServiceFrame(5, "user_turn", { turn_id: "t3", text: "book it", speculative: true }),
  );
  assertEquals(held.body.speculative, true);
  const confirmed = decodeServiceFrame(encodeServiceFrame(6, "turn_confirmed", { turn_id: "t3" }));
  assertEquals([confirmed.kind, confirmed.body], ["turn_confirmed", { turn_id: "t3" }]);
  assertEquals(f.timestamp_ms >= before && f.timestamp_ms <= Date.now(), true);
});

Deno.test("a brain config frame keeps enum names and tells an absent section from a zero", () => {
  const f = decodeBrainFrame(
    encodeBrainFrame(1, "config", { tts: { voice: "VOICE_ARJUN" }, idle: { timeout_ms: 0 } }),
  );
  assertEquals(f.kind, "config");
  assertEquals(f.body.tts, { voice: "VOICE_ARJUN", language: "LANGUAGE_UNSPECIFIED" });
  assertEquals(f.body.idle, { timeout_ms: 0 });
  assertEquals(f.body.stt, null);
});

Deno.test("bytes that are not a frame are refused", () => {
  assertThrows(() => decodeBrainFrame(new Uint8Array([0xff, 0xff, 0xff])), Error);
  assertThrows(() => decodeBrainFrame(encodeBrainFrame(1, "greeting", {}).slice(0, 2)), Error);
});

Deno.test("a phone call's SessionStart, a DTMF key, a transfer and its failure round-trip", () => {
  const phone = {
    from: "+14155550100",
    to: "+918041234567",
    carrier: "sip",
    call_id: "abc@x",
    direction: "outbound",
    machine_detection: "",
  };
  const start = decodeServiceFrame(
    encodeServiceFrame(1, "session_start", { session_id: "s", phone }),
  );
  assertEquals(start.body.phone, phone);
  // A web call's SessionStart has no phone section: the brain can tell the two apart.
  const web = decodeServiceFrame(encodeServiceFrame(1, "session_start", { session_id: "s" }));
  assertEquals(web.body.phone, null);
  const dtmf = decodeServiceFrame(encodeServiceFrame(2, "dtmf", { digit: "#", duration_ms: 160 }));
  assertEquals([dtmf.kind, dtmf.body], ["dtmf", { digit: "#", duration_ms: 160 }]);
  const failed = decodeServiceFrame(
    encodeServiceFrame(3, "transfer_failed", { target: "tel:+1", detail: "REFER answered 403" }),
  );
  assertEquals(failed.body, { target: "tel:+1", detail: "REFER answered 403", reason: "" });
  const transfer = decodeBrainFrame(
    encodeBrainFrame(4, "transfer", { target: "sip:desk@pbx", whisper: "Asha, card blocked" }),
  );
  assertEquals([transfer.kind, transfer.body], ["transfer", {
    target: "sip:desk@pbx",
    whisper: "Asha, card blocked",
    ring_timeout_ms: 0,
  }]);
});
