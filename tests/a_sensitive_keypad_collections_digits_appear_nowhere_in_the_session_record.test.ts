// Config.keypad.sensitive on a real SIP call: the brain marks the keys sensitive as the call
// starts (as the SDKs' sensitive keypad collection does); the caller types a PIN as RFC 4733
// events and one key as a tone. Every key reaches the brain, and nothing the worker wrote holds
// one: the whole session record (its log rows, timings, transcript), the worker's own log
// output, and the recording's caller channel (the tone silenced) are searched for the digits.
import { assert, assertEquals } from "./helpers/assert.ts";
import { assertSippPassed } from "./helpers/sipp.ts";
import { keypadCall, ulaw, until } from "./helpers/keypad_call.ts";
import { dtmfTone } from "./helpers/dtmf_audio.ts";
import type { LogEntry } from "./helpers/call_harness.ts";
import type { ConfigJson } from "../sdk/brain/config.ts";
import { DtmfTones } from "../media/phone/dtmf_tones.ts";

const PIN = "4921";

Deno.test({
  name: "a sensitive keypad collection's digits appear nowhere in the session record",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const call = await keypadCall({
      greeting: "Please enter your four digit PIN, then the hash key.",
      config: { keypad: { sensitive: true } } as ConfigJson,
      record: true,
    });
    try {
      const { caller, seen } = call;
      // The caller types once it hears the prompt: the brain's Config came before its greeting.
      // (Keys pressed before a brain marks them sensitive are written as they are.)
      await until("the prompt", () => caller.audioSince(0).some((x) => Math.abs(x) > 2000));
      for (const key of PIN) await caller.press(key, 101, 100);
      await caller.say(ulaw(dtmfTone("7", 120)));
      await caller.say(new Uint8Array(160 * 10).fill(0xff));
      await caller.press("#", 101, 100);
      assertSippPassed(await call.sipp);
      await until("the #", () => seen.digits.includes("#"));
      // The brain gets every key: only the Dtmf frame carries them.
      assertEquals(seen.digits.join(""), `${PIN}7#`);

      const record = await call.service.record(call.sessionId, "ended", 20_000);
      const written = JSON.stringify(record);
      // Every digit field the worker wrote says "*", one per key, in the phone and to_brain rows.
      const digits = [...written.matchAll(/"digits?":"([^"]*)"/g)].map((m) => m[1]);
      assertEquals(digits, Array(2 * (PIN.length + 2)).fill("*"), written);
      const rows = record.log.filter((e: LogEntry) => e.kind === "dtmf" || e.kind === "info_dtmf");
      assertEquals(rows.length, 2 * (PIN.length + 2));
      // No field of any row holds the PIN, or one of its keys alone (ids and times are longer).
      const leaks: string[] = [];
      const walk = (v: unknown, path: string) => {
        if (typeof v === "string" && (v.includes(PIN) || /^[0-9#*]$/.test(v) && v !== "*")) {
          leaks.push(`${path}=${v}`);
        } else if (v && typeof v === "object") {
          for (const [k, x] of Object.entries(v)) walk(x, `${path}.${k}`);
        }
      };
      walk(record, "record");
      assertEquals(leaks, []);
      const output = call.service.worker.child.output();
      assert(!output.includes(PIN), "the PIN is in the worker's log output");
      assert(!/digit[^\n]*[0-9#]"/.test(output), "a digit is in the worker's log output");
      // The tone key's audio is not on the recording: a receiver finds no key there.
      const wav = await Deno.readFile(new URL(record.recording.url));
      const pcm = new Int16Array(wav.buffer, 44, (wav.length - 44) >> 1);
      const left = pcm.filter((_, i) => i % 2 === 0);
      let recorded = "";
      const receiver = new DtmfTones((d) => (recorded += d.digit));
      for (let at = 0; at + 320 <= left.length; at += 320) receiver.hear(left.slice(at, at + 320));
      receiver.close();
      assertEquals(recorded, "");
    } finally {
      await call.close();
    }
  },
});
