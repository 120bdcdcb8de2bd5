// An outbound call's machine detection as the TypeScript SDK shows it (issue 34): MachineDetected
// reaches onMachineDetected and sets session.phone.machineDetection; Beep reaches onBeep. Over a
// real WebSocket with a worker-side client encoding the frames from the .proto itself.
import assert from "node:assert/strict";
import { type Beep, createBrain, type MachineDetected, type Session } from "./mod.ts";
import { deferred, TestWorker } from "./test_worker.ts";

const PHONE = {
  from: "+15550100",
  to: "+15550123",
  carrier: "sip",
  call_id: "out-1@worker",
  direction: "outbound",
};

Deno.test("a machine then its beep reach onMachineDetected and onBeep, and session.phone says machine", async () => {
  const detected = deferred<[MachineDetected, Session]>();
  const beep = deferred<Beep>();
  const served = createBrain({
    onSessionStart: () => "Hi, this is the clinic about tomorrow's appointment.",
    onTurn: () => {},
    onMachineDetected: (d, s) => detected.resolve([d, s]),
    onBeep: (b) => beep.resolve(b),
  }).serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const worker = await TestWorker.dial(served.url, "ses_out");
  try {
    worker.send("session_start", { session_id: "ses_out", agent_id: "agt", phone: PHONE });
    await worker.next(); // the greeting
    worker.send("machine_detected", { outcome: "machine", at_ms: 3300, why: "long_greeting" });
    const [d, session] = await detected.promise;
    assert.deepEqual(d, { outcome: "machine", atMs: 3300, why: "long_greeting" });
    assert.equal(session.phone?.machineDetection, "machine");
    worker.send("beep", { at_ms: 9120, heard: true, hz: 1000 });
    assert.deepEqual(await beep.promise, { atMs: 9120, heard: true, hz: 1000, why: "" });
  } finally {
    await worker.close();
    await served.shutdown();
  }
});

Deno.test("a person reaches onMachineDetected as human; no beep is a Beep not heard", async () => {
  const seen: unknown[] = [];
  const done = deferred<void>();
  const served = createBrain({
    onTurn: () => {},
    onMachineDetected: (d, s) => void seen.push(d, s.phone?.machineDetection),
    onBeep: (b) => {
      seen.push(b);
      done.resolve();
    },
  }).serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const worker = await TestWorker.dial(served.url, "ses_out");
  try {
    worker.send("session_start", { session_id: "ses_out", agent_id: "agt", phone: PHONE });
    await worker.next();
    worker.send("machine_detected", { outcome: "human", at_ms: 2100, why: "short_greeting" });
    // Not what a worker sends after a person; here only to read a Beep that was not heard.
    worker.send("beep", { at_ms: 7000, heard: false, why: "silence" });
    await done.promise;
    assert.deepEqual(seen, [
      { outcome: "human", atMs: 2100, why: "short_greeting" },
      "human",
      { atMs: 7000, heard: false, hz: 0, why: "silence" },
    ]);
  } finally {
    await worker.close();
    await served.shutdown();
  }
});
