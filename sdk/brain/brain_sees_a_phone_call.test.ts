// A phone call as the TypeScript SDK shows it: session.phone, onDtmf, transfer() and
// onTransferFailed, end() (the service hangs up), over a real WebSocket with a worker-side client.
import assert from "node:assert/strict";
import { createBrain, type Dtmf, type Session, type TransferFailure } from "./mod.ts";
import { deferred, TestWorker } from "./test_worker.ts";

const PHONE = { from: "+14155550100", to: "+918041234567", carrier: "sip", call_id: "a84b4c@pbx" };

Deno.test("session.phone carries the caller, the dialled number and the carrier; a web call's is null", async () => {
  const sessions: Session[] = [];
  const served = createBrain({
    onSessionStart: (s) => void sessions.push(s),
    onTurn: () => {},
  }).serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const phone = await TestWorker.dial(served.url, "ses_phone");
  const web = await TestWorker.dial(served.url, "ses_web");
  try {
    phone.send("session_start", { session_id: "ses_phone", agent_id: "agt", phone: PHONE });
    web.start("ses_web");
    await Promise.all([phone.next(), web.next()]); // the greetings
    const byId = Object.fromEntries(sessions.map((s) => [s.id, s]));
    assert.deepEqual(byId.ses_phone.phone, {
      from: "+14155550100",
      to: "+918041234567",
      carrier: "sip",
      callId: "a84b4c@pbx",
      direction: "inbound",
      machineDetection: null,
    });
    assert.equal(byId.ses_web.phone, null);
  } finally {
    await phone.close();
    await web.close();
    await served.shutdown();
  }
});

Deno.test("an outbound call's session.phone says so, its machine detection unset until decided", async () => {
  const sessions: Session[] = [];
  const served = createBrain({
    onSessionStart: (s) => void sessions.push(s),
    onTurn: () => {},
  }).serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const worker = await TestWorker.dial(served.url, "ses_out");
  try {
    const phone = { ...PHONE, direction: "outbound", machine_detection: "" };
    worker.send("session_start", { session_id: "ses_out", agent_id: "agt", phone });
    await worker.next();
    assert.equal(sessions[0].phone?.direction, "outbound");
    assert.equal(sessions[0].phone?.machineDetection, null);
  } finally {
    await worker.close();
    await served.shutdown();
  }
});

Deno.test("a key press reaches onDtmf; transfer() sends Transfer and a failure reaches onTransferFailed", async () => {
  const digits: Dtmf[] = [];
  const failed = deferred<TransferFailure>();
  const served = createBrain({
    onTurn: () => {},
    onDtmf(dtmf, session) {
      digits.push(dtmf);
      if (dtmf.digit === "0") session.transfer(" tel:+14155550199 ");
      if (dtmf.digit === "#") session.end("caller_pressed_hash");
    },
    onTransferFailed: (f) => failed.resolve(f),
  }).serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const worker = await TestWorker.dial(served.url, "ses_1");
  try {
    worker.send("session_start", { session_id: "ses_1", phone: PHONE });
    assert.equal((await worker.next()).frame, "greeting");
    worker.send("dtmf", { digit: "0", duration_ms: 120 });
    const transfer = await worker.next();
    assert.equal(transfer.frame, "transfer");
    assert.deepEqual(transfer.transfer, {
      target: "tel:+14155550199",
      whisper: "",
      ring_timeout_ms: 0,
    });
    worker.send("transfer_failed", { target: "tel:+14155550199", detail: "REFER answered 403" });
    // From a worker older than TransferFailed.reason: empty.
    assert.deepEqual(await failed.promise, {
      target: "tel:+14155550199",
      detail: "REFER answered 403",
      reason: "",
    });
    worker.send("dtmf", { digit: "#", duration_ms: 80 });
    const end = await worker.next();
    assert.deepEqual(end.end_session, { reason: "caller_pressed_hash" });
    assert.deepEqual(digits, [{ digit: "0", durationMs: 120 }, { digit: "#", durationMs: 80 }]);
  } finally {
    await worker.close();
    await served.shutdown();
  }
});

Deno.test("transfer() with no target throws and sends nothing", async () => {
  const threw = deferred<string>();
  const served = createBrain({
    onTurn: () => {},
    onDtmf(_d, session) {
      try {
        session.transfer("  ");
      } catch (err) {
        threw.resolve((err as Error).message);
      }
      session.dispatch("after", null); // the next frame proves nothing was sent before it
    },
  }).serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const worker = await TestWorker.dial(served.url, "ses_1");
  try {
    worker.send("session_start", { session_id: "ses_1", phone: PHONE });
    await worker.next();
    worker.send("dtmf", { digit: "5", duration_ms: 100 });
    assert.match(await threw.promise, /target must be/);
    assert.equal((await worker.next()).frame, "action");
  } finally {
    await worker.close();
    await served.shutdown();
  }
});

Deno.test("a warm transfer sends its whisper and ring timeout, and its failure's reason reaches onTransferFailed", async () => {
  const failed = deferred<TransferFailure>();
  const threw = deferred<string>();
  const served = createBrain({
    onTurn: () => {},
    onDtmf(_d, session) {
      try {
        session.transfer("sip:desk@pbx", { whisper: "x", ringTimeoutMs: 1000 });
      } catch (err) {
        threw.resolve((err as Error).message);
      }
      session.transfer("sip:desk@pbx", { whisper: " Asha, a refund. ", ringTimeoutMs: 8000 });
    },
    onTransferFailed: (f) => failed.resolve(f),
  }).serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const worker = await TestWorker.dial(served.url, "ses_1");
  try {
    worker.send("session_start", { session_id: "ses_1", phone: PHONE });
    await worker.next();
    worker.send("dtmf", { digit: "0", duration_ms: 100 });
    assert.match(await threw.promise, /ringTimeoutMs must be/);
    const transfer = await worker.next();
    assert.deepEqual(transfer.transfer, {
      target: "sip:desk@pbx",
      whisper: "Asha, a refund.",
      ring_timeout_ms: 8000,
    });
    worker.send("transfer_failed", {
      target: "sip:desk@pbx",
      detail: "486 Busy Here",
      reason: "busy",
    });
    assert.deepEqual(await failed.promise, {
      target: "sip:desk@pbx",
      detail: "486 Busy Here",
      reason: "busy",
    });
  } finally {
    await worker.close();
    await served.shutdown();
  }
});
