// Closing a provider's media stream ends the stream, not the phone call, so the worker hangs up
// and transfers through the provider's REST API (the FAKE Twilio and Plivo APIs in
// tests/fakes/telephony_rest.ts, which then end the stream as the providers do): the brain ends
// the call → Twilio's Call is updated Status=completed, Plivo's is DELETEd; the brain transfers
// → Twilio's Call gets `<Dial><Number>` TwiML and the call ends `transferred`; Plivo and Exotel
// refuse a transfer with a reason the brain is told, and the call goes on.
import { assert, assertEquals } from "./helpers/assert.ts";
import {
  loudFrames,
  PLIVO,
  startStreamCallRig,
  TWILIO,
  until,
} from "./helpers/stream_phone_call.ts";

const OPTIONS = { sanitizeResources: false, sanitizeOps: false };

const sessionOf = (url: string) => new URL(url).pathname.split("/").pop()!;

Deno.test({
  ...OPTIONS,
  name: "the brain ends a Twilio call: Twilio's Call is set completed and the stream ends",
  async fn() {
    const rig = await startStreamCallRig();
    try {
      const { stream, callId } = await rig.dial("twilio");
      await until(() => loudFrames(stream) > 10, "the greeting");
      stream.pressKey("#");
      const closed = await stream.closed;
      assertEquals(closed.code, 1000);
      const update = rig.rest.requests.find((r) => r.path.endsWith(`/Calls/${callId}.json`));
      assertEquals(update?.path, `/2010-04-01/Accounts/${TWILIO.accountSid}/Calls/${callId}.json`);
      assertEquals(update?.form, { Status: "completed" });
      const record = await rig.service.record(sessionOf(stream.socket.url), "ended");
      assertEquals(record.end_reason, "brain_ended");
    } finally {
      await rig.close();
    }
  },
});

Deno.test({
  ...OPTIONS,
  name:
    "the brain transfers a Twilio call: <Dial> TwiML replaces the call's and it ends transferred",
  async fn() {
    const rig = await startStreamCallRig();
    try {
      const { stream, callId } = await rig.dial("twilio");
      await until(() => loudFrames(stream) > 10, "the greeting");
      stream.pressKey("0");
      await stream.closed;
      const update = rig.rest.requests.find((r) => r.path.endsWith(`/Calls/${callId}.json`));
      assertEquals(update?.form, {
        Twiml: "<Response><Dial><Number>+14155550123</Number></Dial></Response>",
      });
      const record = await rig.service.record(sessionOf(stream.socket.url), "ended");
      assertEquals(record.end_reason, "transferred");
    } finally {
      await rig.close();
    }
  },
});

Deno.test({
  ...OPTIONS,
  name:
    "a Plivo call is hung up with DELETE on its Call; its transfer is refused and the call goes on",
  async fn() {
    const rig = await startStreamCallRig();
    try {
      const { stream, callId } = await rig.dial("plivo");
      const sessionId = sessionOf(stream.socket.url);
      await until(() => loudFrames(stream) > 10, "the greeting");
      stream.pressKey("0");
      // deno-lint-ignore no-explicit-any
      let failed: any;
      const deadline = Date.now() + 10_000;
      while (!failed && Date.now() < deadline) {
        const log = await rig.service.log(sessionId);
        failed = log.find((e) => e.source === "worker" && e.kind === "transfer_failed");
        await new Promise((r) => setTimeout(r, 150));
      }
      assert(failed, "the brain was told the transfer failed");
      assert(/Plivo calls are not transferred/.test(JSON.stringify(failed.data)), failed.data);
      assertEquals(rig.rest.requests.length, 0);
      stream.pressKey("#");
      await stream.closed;
      assertEquals(rig.rest.requests.map((r) => [r.method, r.path]), [
        ["DELETE", `/v1/Account/${PLIVO.authId}/Call/${callId}/`],
      ]);
      const record = await rig.service.record(sessionId, "ended");
      assertEquals(record.end_reason, "brain_ended");
    } finally {
      await rig.close();
    }
  },
});
