// Closing a provider's media stream ends the stream, not the phone call, so the worker hangs up
// and transfers through the provider's REST API (the FAKE Twilio and Plivo APIs in
// tests/fakes/telephony_rest.ts, which then end the stream as the providers do): the brain ends
// the call → Twilio's Call is updated Status=completed, Plivo's is DELETEd; the brain transfers
// → Twilio's Call gets `<Dial><Number>` TwiML; Plivo's Call is transferred to a signed link on the
// API that the FAKE Plivo fetches `<Dial>` XML from; either way the call ends `transferred`. A
// forged or expired link is refused, and a refusal by Plivo reaches the brain as TransferFailed
// while the call goes on; Exotel refuses a transfer (its flow, not the stream, moves calls).
import { assert, assertEquals } from "./helpers/assert.ts";
import {
  loudFrames,
  PLIVO,
  startStreamCallRig,
  type StreamCallRig,
  TWILIO,
  until,
} from "./helpers/stream_phone_call.ts";
import { signPlivo } from "./fakes/plivo_audio_stream.ts";
import { signTransferLink } from "../common/carriers/plivo/transfer_link.ts";

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
      // The transferred call is not hung up afterwards.
      assertEquals(rig.rest.requests.length, 1);
      const record = await rig.service.record(sessionOf(stream.socket.url), "ended");
      assertEquals(record.end_reason, "transferred");
    } finally {
      await rig.close();
    }
  },
});

/** Waits for the worker's transfer_failed event in the session's log. */
async function transferFailure(rig: StreamCallRig, sessionId: string) {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const log = await rig.service.log(sessionId);
    const failed = log.find((e) => e.source === "worker" && e.kind === "transfer_failed");
    if (failed) return failed;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error("the brain was not told the transfer failed");
}

/** POSTs `url` as Plivo fetches a transfer's XML (signed X-Plivo-Signature-V3). */
async function fetchAsPlivo(url: string, callUuid: string) {
  const params = { CallUUID: callUuid, CallStatus: "in-progress", Event: "Transfer" };
  const nonce = "12345678901234";
  const r = await fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      "X-Plivo-Signature-V3": signPlivo(PLIVO.authToken, url, params, nonce),
      "X-Plivo-Signature-V3-Nonce": nonce,
    },
    body: new URLSearchParams(params),
  });
  return { status: r.status, body: await r.text() };
}

Deno.test({
  ...OPTIONS,
  name:
    "the brain transfers a Plivo call: Plivo fetches <Dial> XML from the API's signed link and it ends transferred",
  async fn() {
    const rig = await startStreamCallRig();
    try {
      const { stream, callId } = await rig.dial("plivo");
      const sessionId = sessionOf(stream.socket.url);
      await until(() => loudFrames(stream) > 10, "the greeting");
      stream.pressKey("0");
      await stream.closed;
      const transfer = rig.rest.requests.find((r) => r.method === "POST");
      assertEquals(transfer?.path, `/v1/Account/${PLIVO.authId}/Call/${callId}/`);
      assertEquals(transfer?.form.legs, "aleg");
      assertEquals(transfer?.form.aleg_method, "POST");
      const link = new URL(transfer!.form.aleg_url);
      assertEquals(link.origin, rig.service.api.url);
      assertEquals(link.pathname, `/api/v1/telephony/plivo/transfer/${sessionId}`);
      assertEquals(rig.rest.transfers.length, 1);
      assertEquals(rig.rest.transfers[0].status, 200);
      assert(
        rig.rest.transfers[0].xml.includes(
          "<Response><Dial><Number>14155550123</Number></Dial></Response>",
        ),
        rig.rest.transfers[0].xml,
      );
      const record = await rig.service.record(sessionId, "ended");
      assertEquals(record.end_reason, "transferred");
      // The transferred call is not hung up afterwards.
      assertEquals(rig.rest.requests.map((r) => r.method), ["POST"]);
      // The link is this call's only: fetched for another call id, it is refused.
      const other = await fetchAsPlivo(link.href, crypto.randomUUID());
      assertEquals(other.status, 409, other.body);
    } finally {
      await rig.close();
    }
  },
});

Deno.test({
  ...OPTIONS,
  name:
    "a forged, expired or unsigned Plivo transfer link is refused and serves no XML for a live call",
  async fn() {
    const rig = await startStreamCallRig();
    try {
      const { stream, callId } = await rig.dial("plivo");
      const sessionId = sessionOf(stream.socket.url);
      await until(() => loudFrames(stream) > 10, "the greeting");
      const link = (target: string, nowMs?: number) =>
        signTransferLink({
          publicApiUrl: rig.service.api.url,
          authToken: PLIVO.authToken,
          sessionId,
          target,
          nowMs,
        });
      // A good link for this live call is served (what the refusals below are measured against).
      const good = await fetchAsPlivo(await link("+14155550123"), callId);
      assertEquals(good.status, 200, good.body);
      assert(good.body.includes("<Dial><Number>14155550123</Number></Dial>"), good.body);
      const sip = await fetchAsPlivo(await link("sip:desk@pbx.example.com"), callId);
      assert(sip.body.includes("<Dial><User>sip:desk@pbx.example.com</User></Dial>"), sip.body);

      const forged = new URL(await link("+14155550123"));
      forged.searchParams.set("target", "+19005550000");
      const refusedForged = await fetchAsPlivo(forged.href, callId);
      assertEquals(refusedForged.status, 403);
      assertEquals(JSON.parse(refusedForged.body).error.code, "invalid_transfer_link");

      const expired = await fetchAsPlivo(await link("+14155550123", Date.now() - 120_000), callId);
      assertEquals(expired.status, 403);
      assert(/expired/.test(expired.body), expired.body);

      const otherKey = await signTransferLink({
        publicApiUrl: rig.service.api.url,
        authToken: "not-the-token",
        sessionId,
        target: "+14155550123",
      });
      assertEquals((await fetchAsPlivo(otherKey, callId)).status, 403);

      // Plivo's own signature is required as on the answer webhook.
      const unsigned = await fetch(await link("+14155550123"), {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ CallUUID: callId }),
      });
      assertEquals(unsigned.status, 403);
      assertEquals((await unsigned.json()).error.code, "invalid_signature");

      // A good link fetched for another call id is not this call's.
      const other = await fetchAsPlivo(await link("+14155550123"), crypto.randomUUID());
      assertEquals(other.status, 409);

      // None of this moved the call: it goes on, and ends when the brain ends it.
      assertEquals(rig.rest.requests.length, 0);
      stream.pressKey("#");
      await stream.closed;
      const record = await rig.service.record(sessionId, "ended");
      assertEquals(record.end_reason, "brain_ended");
    } finally {
      await rig.close();
    }
  },
});

Deno.test({
  ...OPTIONS,
  name:
    "Plivo refuses a transfer: the brain is told TransferFailed, the call goes on and is hung up with DELETE",
  async fn() {
    const rig = await startStreamCallRig();
    try {
      const { stream, callId } = await rig.dial("plivo");
      const sessionId = sessionOf(stream.socket.url);
      await until(() => loudFrames(stream) > 10, "the greeting");
      // Plivo no longer knows the call: its Transfer answers 404.
      rig.rest.calls.delete(callId);
      stream.pressKey("0");
      const failed = await transferFailure(rig, sessionId);
      assert(/Plivo answered 404/.test(JSON.stringify(failed.data)), failed.data);
      assertEquals(rig.rest.transfers.length, 0);
      // The call goes on: its stream stays open after the refusal.
      const stillOpen = await Promise.race([
        stream.closed.then(() => false),
        new Promise<boolean>((r) => setTimeout(() => r(true), 1000)),
      ]);
      assert(stillOpen, "the stream closed after a refused transfer");
      rig.rest.calls.add(callId);
      stream.pressKey("#");
      await stream.closed;
      assertEquals(rig.rest.requests.map((r) => [r.method, r.path]), [
        ["POST", `/v1/Account/${PLIVO.authId}/Call/${callId}/`],
        ["DELETE", `/v1/Account/${PLIVO.authId}/Call/${callId}/`],
      ]);
      const record = await rig.service.record(sessionId, "ended");
      assertEquals(record.end_reason, "brain_ended");
    } finally {
      await rig.close();
    }
  },
});

Deno.test({
  ...OPTIONS,
  name:
    "an Exotel call's transfer is refused with the flow's way out, the call goes on, and ending it closes the stream",
  async fn() {
    const rig = await startStreamCallRig();
    try {
      const { stream } = await rig.dial("exotel");
      const sessionId = sessionOf(stream.socket.url);
      await until(() => loudFrames(stream) > 10, "the greeting");
      stream.pressKey("0");
      const failed = await transferFailure(rig, sessionId);
      assert(/next applet/.test(JSON.stringify(failed.data)), failed.data);
      const stillOpen = await Promise.race([
        stream.closed.then(() => false),
        new Promise<boolean>((r) => setTimeout(() => r(true), 1000)),
      ]);
      assert(stillOpen, "the stream closed after a refused transfer");
      stream.pressKey("#");
      const closed = await stream.closed;
      assertEquals(closed.code, 1000);
      // Exotel has no call API here: nothing went to a REST API.
      assertEquals(rig.rest.requests.length, 0);
      const record = await rig.service.record(sessionId, "ended");
      assertEquals(record.end_reason, "brain_ended");
    } finally {
      await rig.close();
    }
  },
});
