// A phone caller answers a Python brain's keypad collections over SIP: SIPp 3.6 dials the worker
// (a real worker process, local engines) and a UDP socket beside it is the phone's media, pressing
// keys as RFC 4733 events. The brain is the Python SDK's keypad example (sdk/python/example/
// keypad.py, its own process): after the greeting it prompts for an account number ending in "#",
// then for a four-digit PIN as a sensitive collection. The caller types each ahead, while the
// prompt still plays; the brain reads back the account's last four digits, accepts the PIN and
// hangs up (a BYE), and the session record holds the sensitive flag set for the PIN and cleared.
import { assert, assertEquals } from "./helpers/assert.ts";
import { connectPhoneSession, type LogEntry, startCallService } from "./helpers/call_harness.ts";
import { assertSippPassed, freeUdpPort, runSipp } from "./helpers/sipp.ts";
import { tokenCallScenario } from "./helpers/sipp_scenario.ts";
import { PhoneCaller } from "./helpers/phone_caller.ts";
import { startPythonBrain } from "./helpers/python_brain.ts";

const KEYPAD_BRAIN = new URL("../sdk/python/example/keypad.py", import.meta.url).pathname;
const DIALLED = "+15550100";
const CALLER = "+15550111";

/** INVITE with the session token, ACK, then the worker's BYE answered. */
const scenario = (token: string, rtpPort: number) =>
  tokenCallScenario({
    name: "keypad",
    token,
    dialled: DIALLED,
    caller: CALLER,
    media: { port: rtpPort, address: "127.0.0.1" },
  });

async function until<T>(what: string, get: () => T | undefined | false, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

Deno.test({
  name:
    "a phone caller keys an account number ending in # and a PIN into a Python brain's collections, typing ahead of the prompts",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const brain = await startPythonBrain(KEYPAD_BRAIN);
    const sipPort = await freeUdpPort();
    const service = await startCallService(brain, { workerEnv: { SIP_PORT: String(sipPort) } });
    const caller = await PhoneCaller.open();
    try {
      const { sessionId, token } = await connectPhoneSession(service);
      const sipp = runSipp(scenario(token, caller.port), sipPort, DIALLED, "udp", [
        "-timeout",
        "60",
      ]);
      await caller.start();

      // Each collection has begun (its prompt is being said) when the brain prints so: the keys
      // go in at once, over the prompt.
      await until(
        "the account number's collection",
        () => brain.output().includes("collecting the account number"),
      );
      for (const key of "12345678#") await caller.press(key);
      await until("the PIN's collection", () => brain.output().includes("collecting the PIN"));
      for (const key of "4321") await caller.press(key);

      assertSippPassed(await sipp); // the brain hung up after its last words
      const output = brain.output();
      assert(output.includes("PIN accepted"), output);
      assert(!/1234|4321|5678/.test(output), `the brain printed digits:\n${output}`);

      const record = await service.record(sessionId, "ended", 20_000);
      assertEquals(record.end_reason, "brain_ended");
      const log: LogEntry[] = record.log;
      const toBrain = log.filter((e) => e.source === "to_brain" && e.kind === "dtmf");
      assertEquals(toBrain.length, 13, JSON.stringify(toBrain));
      const fromBrain = log.filter((e) => e.source === "from_brain");
      const says = fromBrain.filter((e) => e.kind === "say").map((e) => e.data.text);
      assertEquals(says, [
        "Please key in your account number, then press hash.",
        "Now key in your four digit PIN.",
        "Thank you. Account ending 5 6 7 8 is verified. Goodbye.",
      ]);
      // Each prompt was spoken (a Say refused for a busy floor would leave the caller unprompted).
      const toBrainKinds = log.filter((e) => e.source === "to_brain").map((e) => e.kind);
      assertEquals(toBrainKinds.filter((k) => k === "say_started").length, 3, `${toBrainKinds}`);
      assert(!toBrainKinds.includes("say_refused"), `${toBrainKinds}`);
      // Typed ahead: each collection's first key came while its prompt still played.
      const heardOf = (unitId: string) =>
        log.find((e) =>
          e.source === "to_brain" && e.kind === "heard" && e.data.unit_id === unitId
        )!;
      assert(
        log.indexOf(toBrain[0]) < log.indexOf(heardOf("say.1")),
        "no key over the first prompt",
      );
      assert(log.indexOf(toBrain[9]) < log.indexOf(heardOf("say.2")), "no key over the PIN prompt");
      // Config frames carrying a keypad section: set for the PIN, then cleared (present, false).
      const configs = fromBrain.filter((e) => e.kind === "config");
      assertEquals(configs.length, 2, JSON.stringify(configs));
      assertEquals(configs.map((e) => e.data.keypad?.sensitive ?? (e.data.keypad && false)), [
        true,
        false,
      ]);
      // The PIN's keys came after the flag was set and before it was cleared.
      const at = (e: LogEntry) => log.indexOf(e);
      const pinKeys = toBrain.slice(9);
      assert(pinKeys.every((e) => at(e) > at(configs[0]) && at(e) < at(configs[1])));
    } finally {
      await caller.close();
      await service.close();
      await brain.stop();
    }
  },
});
