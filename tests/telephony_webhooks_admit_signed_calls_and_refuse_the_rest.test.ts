// The control plane's telephony webhooks (api/telephony/): a call signed as its provider signs
// (the FAKE providers sign with their own code, node:crypto) opens a session on a worker as
// connect does and is answered with the provider's stream instructions; a bad or missing
// signature, an unknown agent or an unconfigured provider is refused, clearly, writing nothing.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, rowCounts, startTestApi, type TestApi } from "./helpers/api_server.ts";
import { loadTelephonySettings } from "../common/telephony_settings.ts";
import { fakeCarrierAccounts, TWILIO_ACCOUNT } from "./fakes/carrier_accounts.ts";
import {
  postTwilioVoiceWebhook,
  readTwimlStream,
  twilioCall,
} from "./fakes/twilio_media_stream.ts";
import { plivoCall, postPlivoAnswer, readPlivoStream } from "./fakes/plivo_audio_stream.ts";
import { exotelCall, getExotelStreamUrl } from "./fakes/exotel_voicebot_stream.ts";
import { TokenVerifier } from "../common/token.ts";
import { signingJwk } from "../db/signing_key.ts";

const ACCOUNT = TWILIO_ACCOUNT;
const telephony = fakeCarrierAccounts();

/** The voice webhook at `path`, signed with the configured Twilio auth token. */
const signedByTwilio = (api: TestApi, path: string, call = twilioCall(ACCOUNT)) =>
  postTwilioVoiceWebhook(`${api.url}/api/v1/telephony/${path}`, "twilio-auth-token", call);

async function withApi(
  fn: (api: TestApi, agentId: string) => Promise<void>,
  options: { node?: boolean; configured?: boolean } = {},
) {
  const api = await startTestApi({}, {
    node: options.node,
    telephony: options.configured === false ? loadTelephonySettings({}) : telephony,
  });
  try {
    const tenant = await makeTenant(api);
    await fn(api, tenant.agent_id);
  } finally {
    await api.close();
  }
}

async function claimsOf(api: TestApi, token: string) {
  const verifier = await TokenVerifier.fromJwk(await signingJwk(api.db, api.settings));
  return await verifier.verify(token, "node-test-1");
}

Deno.test("a signed Twilio call gets TwiML connecting it to a worker's stream, the token as a Parameter", async () => {
  await withApi(async (api, agentId) => {
    const call = twilioCall(ACCOUNT);
    const r = await signedByTwilio(api, `twilio/${agentId}`, call);
    assertEquals(r.status, 200, r.body);
    const { url, params } = readTwimlStream(r.body);
    const m = /^ws:\/\/127\.0\.0\.1:9\/worker\/telephony\/twilio\/(ses_\w+)$/.exec(url);
    assert(m, `stream url ${url}`);
    assertEquals(params.from, call.from);
    assertEquals(params.to, call.to);
    const claims = await claimsOf(api, params.session_token);
    assertEquals(claims.sid, m[1]);
    assertEquals(claims.sub, agentId);
    const session = await api.admin("/api/v1/sessions.get", { session_id: m[1] });
    assertEquals(session.body.status, "created");
    assertEquals(session.body.metadata, {
      phone_carrier: "twilio",
      phone_caller: call.from,
      phone_dialled: call.to,
      phone_call_id: call.callSid,
    });
  });
});

Deno.test("a Twilio webhook with a wrong signature, another account or no token configured is refused and writes nothing", async () => {
  await withApi(async (api, agentId) => {
    const url = `${api.url}/api/v1/telephony/twilio/${agentId}`;
    const before = await rowCounts(api.db);
    const forged = await postTwilioVoiceWebhook(url, "not-the-token", twilioCall(ACCOUNT));
    assertEquals(forged.status, 403);
    assertEquals(JSON.parse(forged.body).error.code, "invalid_signature");
    const tampered = await postTwilioVoiceWebhook(url, "twilio-auth-token", twilioCall(ACCOUNT), {
      signature: "AAAAAAAAAAAAAAAAAAAAAAAAAAA=",
    });
    assertEquals(tampered.status, 403);
    // Signed with this token but for another account.
    const other = await postTwilioVoiceWebhook(url, "twilio-auth-token", twilioCall());
    assertEquals(other.status, 403);
    const unknownAgent = await signedByTwilio(api, "twilio/agt_nope");
    assertEquals(unknownAgent.status, 404);
    assertEquals(await rowCounts(api.db), before);
  });
  await withApi(async (api, agentId) => {
    const before = await rowCounts(api.db);
    const r = await signedByTwilio(api, `twilio/${agentId}`);
    assertEquals(r.status, 503);
    assertEquals(JSON.parse(r.body).error.code, "telephony_not_configured");
    assertEquals(await rowCounts(api.db), before);
  }, { configured: false });
});

Deno.test("with no worker to take it, a Twilio call is rejected busy and nothing is written", async () => {
  await withApi(async (api, agentId) => {
    const before = await rowCounts(api.db);
    const r = await signedByTwilio(api, `twilio/${agentId}`);
    assertEquals(r.status, 200);
    assert(r.body.includes(`<Reject reason="busy"/>`), r.body);
    assertEquals(await rowCounts(api.db), before);
  }, { node: false });
});

Deno.test("a signed Plivo answer request gets a bidirectional μ-law <Stream> to a worker; a bad one is refused", async () => {
  await withApi(async (api, agentId) => {
    const url = `${api.url}/api/v1/telephony/plivo/${agentId}`;
    const before = await rowCounts(api.db);
    const forged = await postPlivoAnswer(url, "not-the-token", plivoCall());
    assertEquals(forged.status, 403);
    assertEquals(await rowCounts(api.db), before);

    const call = plivoCall();
    const r = await postPlivoAnswer(url, "plivo-auth-token", call);
    assertEquals(r.status, 200, r.body);
    const stream = readPlivoStream(r.body);
    assert(stream.attributes.includes(`bidirectional="true"`), stream.attributes);
    assert(stream.attributes.includes(`contentType="audio/x-mulaw;rate=8000"`));
    const ws = new URL(stream.url);
    assertEquals(ws.protocol, "ws:");
    const claims = await claimsOf(api, ws.searchParams.get("session_token")!);
    assertEquals(ws.pathname, `/worker/telephony/plivo/${claims.sid}`);
    const input = claims.input as { metadata: Record<string, string> };
    assertEquals(input.metadata.phone_call_id, call.callUuid);
    assertEquals(input.metadata.phone_dialled, `+${call.to}`);
  });
});

Deno.test("a Plivo Answer URL's content_type picks the stream's audio; an unknown one is refused and writes nothing", async () => {
  await withApi(async (api, agentId) => {
    const base = `${api.url}/api/v1/telephony/plivo/${agentId}`;
    const wide = await postPlivoAnswer(
      `${base}?content_type=${encodeURIComponent("audio/x-l16;rate=16000")}`,
      "plivo-auth-token",
      plivoCall(),
    );
    assertEquals(wide.status, 200, wide.body);
    const stream = readPlivoStream(wide.body);
    assert(stream.attributes.includes(`contentType="audio/x-l16;rate=16000"`), stream.attributes);

    const before = await rowCounts(api.db);
    const odd = await postPlivoAnswer(
      `${base}?content_type=${encodeURIComponent("audio/x-l16;rate=48000")}`,
      "plivo-auth-token",
      plivoCall(),
    );
    assertEquals(odd.status, 400, odd.body);
    assertEquals(JSON.parse(odd.body).error.code, "invalid_content_type");
    assertEquals(await rowCounts(api.db), before);
  });
});

Deno.test("PLIVO_STREAM_CONTENT_TYPE must be one of Plivo's formats", () => {
  const set = (v: string) => loadTelephonySettings({ PLIVO_STREAM_CONTENT_TYPE: v });
  assertEquals(set("audio/x-l16;rate=16000").plivo.streamContentType, "audio/x-l16;rate=16000");
  assertEquals(loadTelephonySettings({}).plivo.streamContentType, "audio/x-mulaw;rate=8000");
  let refused = "";
  try {
    set("audio/x-opus;rate=48000");
  } catch (err) {
    refused = (err as Error).message;
  }
  assert(/must be one of/.test(refused), refused);
});

Deno.test("Exotel's dynamic URL answers {url} only with the webhook secret", async () => {
  await withApi(async (api, agentId) => {
    const endpoint = `${api.url}/api/v1/telephony/exotel/${agentId}`;
    const before = await rowCounts(api.db);
    const wrong = await getExotelStreamUrl(endpoint, "guess", exotelCall());
    assertEquals(wrong.status, 401);
    const bare = await fetch(endpoint);
    assertEquals(bare.status, 401);
    await bare.body?.cancel();
    assertEquals(await rowCounts(api.db), before);

    const call = exotelCall();
    const r = await getExotelStreamUrl(endpoint, "exotel-secret", call);
    assertEquals(r.status, 200, r.body);
    const ws = new URL(JSON.parse(r.body).url);
    const claims = await claimsOf(api, ws.searchParams.get("session_token")!);
    assertEquals(ws.pathname, `/worker/telephony/exotel/${claims.sid}`);
    const input = claims.input as { metadata: Record<string, string> };
    assertEquals(input.metadata, {
      phone_carrier: "exotel",
      phone_caller: call.from,
      phone_dialled: `+91${call.to.slice(1)}`,
      phone_call_id: call.callSid,
    });
  });
});

Deno.test("without an agent in the URL, the dialled number's agent answers; an unknown number is 404 and writes nothing", async () => {
  await withApi(async (api, agentId) => {
    for (const number of ["+14155550199", "+918041234567"]) {
      const made = await api.admin("/api/v1/numbers.create", { number, agent_id: agentId });
      assertEquals(made.status, 200, JSON.stringify(made.body));
    }
    // Twilio gives E.164, Plivo the digits without "+", Exotel India's national form.
    const twilio = await signedByTwilio(api, "twilio");
    assertEquals(twilio.status, 200, twilio.body);
    const twilioClaims = await claimsOf(api, readTwimlStream(twilio.body).params.session_token);
    assertEquals(twilioClaims.sub, agentId);
    const plivo = await postPlivoAnswer(
      `${api.url}/api/v1/telephony/plivo`,
      "plivo-auth-token",
      plivoCall(),
    );
    assertEquals(plivo.status, 200, plivo.body);
    const exotel = await getExotelStreamUrl(
      `${api.url}/api/v1/telephony/exotel`,
      "exotel-secret",
      exotelCall(),
    );
    assertEquals(exotel.status, 200, exotel.body);

    const before = await rowCounts(api.db);
    const unknown = await signedByTwilio(api, "twilio", {
      ...twilioCall(ACCOUNT),
      to: "+14155550000",
    });
    assertEquals(unknown.status, 404);
    assertEquals(JSON.parse(unknown.body).error.code, "number_not_found");
    assertEquals(await rowCounts(api.db), before);
  });
});
