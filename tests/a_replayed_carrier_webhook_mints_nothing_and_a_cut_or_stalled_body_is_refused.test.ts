// Issue 32: the same signed Twilio form posted twice, or the same Plivo request with the same
// nonce, minted a new session and token each time; a webhook body cut short was a 500 with a
// stack trace, and one that stalled stayed open past 30 s. Now a carrier's call id and a Plivo
// nonce admit once (409 replayed, nothing written: db admission_keys, so any API process refuses
// it), a body cut short is a 400 and one not whole within 10 s a 408, as on the JSON routes.
import { assertEquals } from "./helpers/assert.ts";
import { makeTenant, rowCounts, startTestApi, type TestApi } from "./helpers/api_server.ts";
import { fakeCarrierAccounts, TWILIO_ACCOUNT } from "./fakes/carrier_accounts.ts";
import { postTwilioVoiceWebhook, twilioCall } from "./fakes/twilio_media_stream.ts";
import { plivoCall, postPlivoAnswer } from "./fakes/plivo_audio_stream.ts";
import { exotelCall, getExotelStreamUrl } from "./fakes/exotel_voicebot_stream.ts";
import { rawRequest } from "../bench/fuzz/raw_http.ts";
import { createApp } from "../api/app.ts";

const ACCOUNT = TWILIO_ACCOUNT;
const telephony = fakeCarrierAccounts();

async function withApi(fn: (api: TestApi, agentId: string) => Promise<void>) {
  const api = await startTestApi({}, { telephony });
  try {
    await fn(api, (await makeTenant(api)).agent_id);
  } finally {
    await api.close();
  }
}

const code = (body: string) => JSON.parse(body).error.code;

Deno.test("a replayed carrier webhook is refused 409 and writes nothing", async (t) => {
  await withApi(async (api, agentId) => {
    await t.step("Twilio: the same signed form twice", async () => {
      const url = `${api.url}/api/v1/telephony/twilio/${agentId}`;
      const call = twilioCall(ACCOUNT);
      assertEquals((await postTwilioVoiceWebhook(url, "twilio-auth-token", call)).status, 200);
      const before = await rowCounts(api.db);
      const again = await postTwilioVoiceWebhook(url, "twilio-auth-token", call);
      assertEquals([again.status, code(again.body)], [409, "replayed"]);
      assertEquals(await rowCounts(api.db), before);
    });

    await t.step("Plivo: the same nonce twice, for the same call or another", async () => {
      const url = `${api.url}/api/v1/telephony/plivo/${agentId}`;
      const call = plivoCall();
      const nonce = "715517302318512345";
      const first = await postPlivoAnswer(url, "plivo-auth-token", call, { nonce });
      assertEquals(first.status, 200, first.body);
      const before = await rowCounts(api.db);
      const same = await postPlivoAnswer(url, "plivo-auth-token", call, { nonce });
      assertEquals([same.status, code(same.body)], [409, "replayed"]);
      const other = await postPlivoAnswer(url, "plivo-auth-token", plivoCall(), { nonce });
      assertEquals([other.status, code(other.body)], [409, "replayed"]);
      // The same call with a fresh nonce (a carrier's retry re-signs): still that call, once.
      const resigned = await postPlivoAnswer(url, "plivo-auth-token", call);
      assertEquals([resigned.status, code(resigned.body)], [409, "replayed"]);
      assertEquals(await rowCounts(api.db), before);
    });

    await t.step("Exotel: the same CallSid twice", async () => {
      const endpoint = `${api.url}/api/v1/telephony/exotel/${agentId}`;
      const call = exotelCall();
      assertEquals((await getExotelStreamUrl(endpoint, "exotel-secret", call)).status, 200);
      const before = await rowCounts(api.db);
      const again = await getExotelStreamUrl(endpoint, "exotel-secret", call);
      assertEquals([again.status, code(again.body)], [409, "replayed"]);
      assertEquals(await rowCounts(api.db), before);
    });
  });
});

Deno.test("a webhook body cut short is a 400 and one that stalls a 408, never a 500", async (t) => {
  await withApi(async (api, agentId) => {
    const path = `/api/v1/telephony/twilio/${agentId}`;
    const before = await rowCounts(api.db);

    await t.step("cut short: the body ends before its Content-Length", async () => {
      // Through the app itself: Deno's server drops any answer on a half-closed connection, so
      // a raw socket could not see it (the 500 showed in the API's log).
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("CallSid=CA1&From=%2B1"));
          controller.error(new Error("connection reset"));
        },
      });
      const r = await createApp(api.deps).fetch(
        new Request(`http://api.test${path}`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body,
        }),
      );
      const text = await r.text();
      assertEquals([r.status, code(text)], [400, "invalid_request"]);
    });

    await t.step("stalled: part of the body, then nothing, over a real socket", async () => {
      const head = `POST ${path} HTTP/1.1\r\nHost: x\r\n` +
        `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 400\r\n\r\n`;
      const r = await rawRequest(Number(new URL(api.url).port), {
        bytes: new TextEncoder().encode(head + "CallSid=CA1"),
        after: "keep",
        timeoutMs: 20_000,
      });
      assertEquals([r.status, code(r.body)], [408, "request_timeout"]);
    });
    assertEquals(await rowCounts(api.db), before);
  });
});
