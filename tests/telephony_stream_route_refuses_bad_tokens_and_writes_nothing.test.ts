// The worker's telephony stream route takes a session token exactly as the offer route does:
// one minted for this node and this session, unexpired, unspent, and (here) opened for this
// provider; it is spent once, when the provider's stream starts. A forged, foreign or spent
// token is refused (an HTTP error before the upgrade when it is in the URL; a close with code
// 1008 and the reason when it comes in Twilio's start message) and the refusal writes nothing.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, rowCounts, startTestApi, type TestApi } from "./helpers/api_server.ts";
import { loadTelephonySettings } from "../common/telephony_settings.ts";
import { TokenVerifier } from "../common/token.ts";
import { signingJwk } from "../db/signing_key.ts";
import { createWorkerApp, type WorkerContext } from "../media/worker.ts";
import type { AdmittedPhoneCall } from "../media/signaling/telephony_stream.ts";
import { FakeProviderStream } from "./fakes/provider_media_stream.ts";
import {
  postTwilioVoiceWebhook,
  readTwimlStream,
  twilioCall,
  twilioWire,
} from "./fakes/twilio_media_stream.ts";
import { plivoCall, postPlivoAnswer, readPlivoStream } from "./fakes/plivo_audio_stream.ts";
import { exotelCall, exotelWire, getExotelStreamUrl } from "./fakes/exotel_voicebot_stream.ts";

const ACCOUNT = "AC0123456789abcdef0123456789abcdef";
const telephony = loadTelephonySettings({
  TWILIO_ACCOUNT_SID: ACCOUNT,
  TWILIO_AUTH_TOKEN: "tw",
  PLIVO_AUTH_ID: "MAXXXXXXXXXXXXXXXXXX",
  PLIVO_AUTH_TOKEN: "pl",
  EXOTEL_WEBHOOK_SECRET: "ex",
});

interface Rig {
  api: TestApi;
  agentId: string;
  admitted: AdmittedPhoneCall[];
  twilio(): Promise<{ url: string; params: Record<string, string> }>;
  plivo(): Promise<string>;
  status(sessionId: string): Promise<string>;
}

/** The API and a worker app serving node-test-1 (no engines: admitted calls are only collected). */
async function withRig(fn: (rig: Rig) => Promise<void>) {
  const api = await startTestApi({}, { telephony });
  const admitted: AdmittedPhoneCall[] = [];
  const context: WorkerContext = {
    sql: api.db.sql,
    nodeId: "node-test-1",
    verifier: await TokenVerifier.fromJwk(await signingJwk(api.db, api.settings)),
    iceAddresses: ["127.0.0.1"],
    calls: new Map(),
    startPhoneCall: (call) => admitted.push(call),
  };
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    createWorkerApp(context).fetch,
  );
  await api.db
    .sql`update worker_nodes set offer_base_url = ${`http://127.0.0.1:${server.addr.port}`} where id = 'node-test-1'`;
  try {
    const { agent_id: agentId } = await makeTenant(api);
    await fn({
      api,
      agentId,
      admitted,
      async twilio() {
        const r = await postTwilioVoiceWebhook(
          `${api.url}/api/v1/telephony/twilio/${agentId}`,
          "tw",
          twilioCall(ACCOUNT),
        );
        return readTwimlStream(r.body);
      },
      async plivo() {
        const r = await postPlivoAnswer(
          `${api.url}/api/v1/telephony/plivo/${agentId}`,
          "pl",
          plivoCall(),
        );
        return readPlivoStream(r.body).url;
      },
      async status(sessionId) {
        return (await api.admin("/api/v1/sessions.get", { session_id: sessionId })).body.status;
      },
    });
  } finally {
    for (const a of admitted) a.line.refuse("test over");
    ac.abort();
    await server.finished;
    await api.close();
  }
}

const sessionOf = (url: string) => new URL(url).pathname.split("/").pop()!;

/** A WebSocket upgrade request to a ws:// URL, answered with an HTTP error or not. */
async function upgrade(wsUrl: string): Promise<{ status: number; code?: string }> {
  const url = new URL(wsUrl);
  url.protocol = "http:";
  const r = await fetch(url, {
    headers: {
      Upgrade: "websocket",
      Connection: "Upgrade",
      "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
      "Sec-WebSocket-Version": "13",
    },
  });
  const text = await r.text();
  return { status: r.status, code: text ? JSON.parse(text).error?.code : undefined };
}

Deno.test("a Twilio stream whose start carries a forged or foreign token is closed 1008 and nothing is written", async () => {
  await withRig(async (rig) => {
    const { url, params } = await rig.twilio();
    const plivoUrl = await rig.plivo();
    const before = await rowCounts(rig.api.db);
    // A token with a broken signature.
    const forged = await FakeProviderStream.open(
      url,
      twilioWire(twilioCall(ACCOUNT), { ...params, session_token: `${params.session_token}x` }),
    );
    const closed = await forged.closed;
    assertEquals(closed.code, 1008);
    assert(closed.reason.startsWith("invalid_token"), closed.reason);
    // A good token of a Plivo call, presented as Twilio's.
    const plivoToken = new URL(plivoUrl).searchParams.get("session_token")!;
    const foreign = await FakeProviderStream.open(
      `${new URL(url).origin}/telephony/twilio/${sessionOf(plivoUrl)}`,
      twilioWire(twilioCall(ACCOUNT), { ...params, session_token: plivoToken }),
    );
    const closedForeign = await foreign.closed;
    assertEquals(closedForeign.code, 1008);
    assert(closedForeign.reason.startsWith("wrong_carrier"), closedForeign.reason);
    // No token at all.
    const none = await FakeProviderStream.open(url, twilioWire(twilioCall(ACCOUNT), {}));
    const closedNone = await none.closed;
    assertEquals(closedNone.code, 1008);

    assertEquals(await rowCounts(rig.api.db), before);
    assertEquals(await rig.status(sessionOf(url)), "created");
    assertEquals(await rig.status(sessionOf(plivoUrl)), "created");
    assertEquals(rig.admitted.length, 0);
  });
});

Deno.test("a token starts one stream: the second stream with it is refused token_used", async () => {
  await withRig(async (rig) => {
    const { url, params } = await rig.twilio();
    const call = twilioCall(ACCOUNT);
    const first = await FakeProviderStream.open(url, twilioWire(call, params));
    const deadline = Date.now() + 5000;
    while (rig.admitted.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assertEquals(rig.admitted.length, 1);
    assertEquals(rig.admitted[0].line.carrier, "twilio");
    assertEquals(rig.admitted[0].line.callId, call.callSid);
    assertEquals(rig.admitted[0].line.from, call.from);
    assertEquals(await rig.status(sessionOf(url)), "connecting");
    const before = await rowCounts(rig.api.db);
    // Its session no longer waits: refused before the upgrade, as the offer route would.
    const again = await upgrade(url);
    assertEquals([again.status, again.code], [401, "token_used"]);
    assertEquals(await rowCounts(rig.api.db), before);
    assertEquals(rig.admitted.length, 1);
    first.socket.close();
  });
});

Deno.test("a Plivo stream URL with a bad token is refused before the upgrade, with the offer's error", async () => {
  await withRig(async (rig) => {
    const url = new URL(await rig.plivo());
    const before = await rowCounts(rig.api.db);
    url.searchParams.set("session_token", "not.a.token");
    assertEquals(await upgrade(url.href), { status: 401, code: "invalid_token" });
    assertEquals(await rowCounts(rig.api.db), before);
    assertEquals(await rig.status(sessionOf(url.href)), "created");
  });
});

Deno.test("a stream whose start names audio the line cannot read is refused unsupported_media_format", async () => {
  await withRig(async (rig) => {
    const call = exotelCall();
    const answer = await getExotelStreamUrl(
      `${rig.api.url}/api/v1/telephony/exotel/${rig.agentId}`,
      "ex",
      call,
    );
    const url = JSON.parse(answer.body).url;
    const before = await rowCounts(rig.api.db);
    const wire = exotelWire(call);
    // Exotel's beta media format option set to μ-law: not the raw/slin this line reads.
    const [connected, start] = wire.opening() as [unknown, { start: Record<string, unknown> }];
    start.start.media_format = { encoding: "audio/x-mulaw", sample_rate: "8000" };
    const stream = await FakeProviderStream.open(url, {
      ...wire,
      opening: () => [connected, start],
    });
    const closed = await stream.closed;
    assertEquals(closed.code, 1008);
    assert(closed.reason.startsWith("unsupported_media_format"), closed.reason);
    assertEquals(await rowCounts(rig.api.db), before);
    assertEquals(await rig.status(sessionOf(url)), "created");
  });
});

Deno.test("a Plivo or Exotel stream URL without a token is refused before the upgrade", async () => {
  await withRig(async (rig) => {
    const plivo = new URL(await rig.plivo());
    plivo.searchParams.delete("session_token");
    const exotel = new URL(plivo.href.replace("/telephony/plivo/", "/telephony/exotel/"));
    const before = await rowCounts(rig.api.db);
    for (const url of [plivo, exotel]) {
      assertEquals(await upgrade(url.href), { status: 401, code: "unauthorized" });
    }
    assertEquals(await rowCounts(rig.api.db), before);
    assertEquals(await rig.status(sessionOf(plivo.href)), "created");
  });
});

Deno.test("a Twilio stream naming no session waiting on this node is refused before the upgrade", async () => {
  await withRig(async (rig) => {
    const { url } = await rig.twilio();
    const unknown = url.replace(/ses_\w+$/, "ses_0000000000000000000000");
    assertEquals(await upgrade(unknown), { status: 404, code: "session_not_found" });
    // One stream per waiting session: a second upgrade while the first waits for its start.
    const first = new WebSocket(url);
    await new Promise((ok) => first.addEventListener("open", ok, { once: true }));
    assertEquals(await upgrade(url), { status: 409, code: "stream_pending" });
    first.close();
  });
});

Deno.test("a stream message over 64 KiB closes the stream 1009 before the line reads it", async () => {
  await withRig(async (rig) => {
    const { url } = await rig.twilio();
    const before = await rowCounts(rig.api.db);
    const socket = new WebSocket(url);
    await new Promise((ok) => socket.addEventListener("open", ok, { once: true }));
    const closed = new Promise<CloseEvent>((ok) =>
      socket.addEventListener("close", ok, { once: true })
    );
    socket.send("x".repeat(65 * 1024));
    assertEquals((await closed).code, 1009);
    assertEquals(await rowCounts(rig.api.db), before);
    assertEquals(rig.admitted.length, 0);
    assertEquals(await rig.status(sessionOf(url)), "created");
  });
});
