// Outbound calls through a carrier's call API (issue 34), per carrier, against a FAKE of that API
// (tests/fakes/*_calls_api.ts, *_call_api.ts, *_connect_api.ts, each following and citing the
// carrier's pages): the API and a worker in this process, a real PostgreSQL (or PGlite) database.
// Calls go through POST /api/v1/calls.dial with `carrier`; the status checks reserve a session that
// is never dialled (one phone session, then `direction` outbound and `dial_state` dialing in one
// UPDATE, as calls.dial writes them with its reservation). An answered call's stream
// reaches the worker and the greeting plays; busy, no-answer and failed end the session with the
// contract's reasons; a status whose signature (or secret) is wrong is refused and changes nothing;
// a status for a session already ended changes nothing.
import { assert, assertEquals } from "./helpers/assert.ts";
import { createBrain, type Session } from "../sdk/brain/mod.ts";
import { loadTelephonySettings } from "../common/telephony_settings.ts";
import type { MachineDetection } from "../common/dial.ts";
import { createPhoneSession } from "../api/sip/phone_session.ts";
import { createPhoneNumber } from "../db/phone_numbers.ts";
import { workerMachineDetection } from "../api/telephony/dial.ts";
import { type InProcessCallService, startInProcessCallService } from "./helpers/call_harness.ts";
import { GREETING, loudFrames, PLIVO, TWILIO, until } from "./helpers/stream_phone_call.ts";
import { type FakeTelephonyRest, startFakeTelephonyRest } from "./fakes/telephony_rest.ts";
import type { FakeCallApi } from "./fakes/carrier_call_api.ts";
import { startFakeTwilioCallsApi } from "./fakes/twilio_calls_api.ts";
import { startFakePlivoCallApi } from "./fakes/plivo_call_api.ts";
import { startFakeExotelConnectApi } from "./fakes/exotel_connect_api.ts";
import { signTwilio } from "./fakes/twilio_media_stream.ts";
import { signPlivo } from "./fakes/plivo_audio_stream.ts";

type Carrier = "twilio" | "plivo" | "exotel";
const EXOTEL = {
  accountSid: "exotel-test",
  apiKey: "ex-api-key",
  apiToken: "ex-api-token",
  secret: "ex-secret",
};
const NUMBERS = { to: "+14155550142", from: "+14155550100" };
/** The operator's outbound flow (a Voicebot applet pointed at our `dialed` endpoint). */
const EXOTEL_FLOW = "http://my.exotel.com/exotel-test/exoml/start_voice/424242";

interface Rig {
  service: InProcessCallService;
  fake: FakeCallApi;
  rest: FakeTelephonyRest;
  sessions: Session[];
  close(): Promise<void>;
}

async function startRig(carrier: Carrier): Promise<Rig> {
  const sessions: Session[] = [];
  const served = createBrain({
    onSessionStart: (s) => {
      sessions.push(s);
      return GREETING;
    },
    async *onTurn() {},
  });
  const rest = startFakeTelephonyRest({ twilio: TWILIO, plivo: PLIVO });
  const exotel = carrier === "exotel" ? startFakeExotelConnectApi(EXOTEL, rest) : undefined;
  const fake = carrier === "twilio"
    ? startFakeTwilioCallsApi(TWILIO, rest)
    : carrier === "plivo"
    ? startFakePlivoCallApi(PLIVO, rest)
    : exotel!;
  const telephony = loadTelephonySettings({
    TWILIO_ACCOUNT_SID: TWILIO.accountSid,
    TWILIO_AUTH_TOKEN: TWILIO.authToken,
    TWILIO_API_URL: fake.url,
    PLIVO_AUTH_ID: PLIVO.authId,
    PLIVO_AUTH_TOKEN: PLIVO.authToken,
    PLIVO_API_URL: fake.url,
    EXOTEL_WEBHOOK_SECRET: EXOTEL.secret,
    EXOTEL_ACCOUNT_SID: EXOTEL.accountSid,
    EXOTEL_API_KEY: EXOTEL.apiKey,
    EXOTEL_API_TOKEN: EXOTEL.apiToken,
    EXOTEL_API_URL: fake.url,
    EXOTEL_OUTBOUND_FLOW_URL: EXOTEL_FLOW,
  });
  const service = await startInProcessCallService(served, { telephony });
  // The workspace's own number the calls come from (calls.dial refuses any other `from`).
  await createPhoneNumber(service.api.deps.sql, {
    number: NUMBERS.from,
    agent_id: service.tenant.agent_id,
    trunk_id: null,
    enabled: true,
  });
  // The address the carriers call our status webhooks at: this API's.
  telephony.publicApiUrl = service.api.url;
  // The flow's Voicebot applet, as the operator sets it up: our endpoint, the webhook secret.
  exotel?.flows.set(EXOTEL_FLOW, {
    url: `${service.api.url}/api/v1/telephony/exotel/dialed`,
    user: "exotel",
    password: EXOTEL.secret,
  });
  return {
    service,
    fake,
    rest,
    sessions,
    async close() {
      await fake.close();
      await service.close();
      await rest.close();
    },
  };
}

/** The session calls.dial will reserve: a phone session of `carrier`, made outbound. */
async function reserve(rig: Rig, carrier: Carrier) {
  const deps = rig.service.api.deps;
  const t = rig.service.tenant;
  const opened = await createPhoneSession(deps, {
    number: NUMBERS.to,
    agent_id: t.agent_id,
    workspace_id: t.workspace_id,
    trunk_id: null,
    record_by_default: false,
    interruption_sensitivity: "medium",
    turn_patience: "medium",
  }, { caller: NUMBERS.from, sip: false, carrier });
  if (opened.kind !== "reserved") throw new Error(`not reserved: ${opened.kind}`);
  // calls.dial writes these with its reservation; until it lands, the test does.
  await deps.sql`update sessions set direction = 'outbound', dial_state = 'dialing'
    where id = ${opened.session_id}`;
  return opened;
}

type DialOutcome = { carrier_call_id: string } | { refused: { code: string } };

/** POST /api/v1/calls.dial through `carrier`, as the tenant's server would. */
async function dial(rig: Rig, carrier: Carrier, machine: MachineDetection = "off") {
  const t = rig.service.tenant;
  const r = await fetch(`${rig.service.api.url}/api/v1/calls.dial`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${t.sk}` },
    body: JSON.stringify({
      agent_id: t.agent_id,
      ...NUMBERS,
      carrier,
      ring_timeout_seconds: 25,
      machine_detection: machine,
    }),
  });
  const body = await r.json();
  if (r.status === 202) {
    const id: string = body.session_id;
    const callId = (await row(rig, id)).metadata.phone_call_id as string;
    return { sessionId: id, result: { carrier_call_id: callId } as DialOutcome };
  }
  assertEquals([r.status, body.error?.code], [502, "dial_failed"], JSON.stringify(body));
  return {
    sessionId: body.error.details.session_id as string,
    result: { refused: { code: body.error.details.carrier_code as string } } as DialOutcome,
  };
}

async function row(rig: Rig, sessionId: string) {
  const [r] = await rig.service.api.deps.sql<
    {
      status: string;
      end_reason: string | null;
      dial_state: string | null;
      metadata: Record<string, unknown>;
    }[]
  >`select status, end_reason, dial_state, metadata from sessions where id = ${sessionId}`;
  return r;
}

async function settled(rig: Rig, sessionId: string, status: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = await row(rig, sessionId);
    if (r.status === status) return r;
    if (Date.now() > deadline) {
      throw new Error(`session is ${r.status}/${r.end_reason}, not ${status}`);
    }
    await new Promise((res) => setTimeout(res, 50));
  }
}

/** A status callback for `sessionId` as `carrier` would post it, signed well or badly. */
async function postStatus(
  rig: Rig,
  carrier: Carrier,
  sessionId: string,
  status: "busy" | "answered",
  good: boolean,
): Promise<number> {
  const base = `${rig.service.api.url}/api/v1/telephony/${carrier}/dialed/${sessionId}`;
  let url: string, params: Record<string, string>, headers: Record<string, string>;
  if (carrier === "twilio") {
    url = `${base}?machine=off`;
    params = {
      CallSid: "CAforged",
      AccountSid: TWILIO.accountSid,
      CallStatus: status === "busy" ? "busy" : "in-progress",
    };
    headers = {
      "X-Twilio-Signature": signTwilio(good ? TWILIO.authToken : "not-the-token", url, params),
    };
  } else if (carrier === "plivo") {
    url = `${base}/${status === "busy" ? "hangup" : "answer"}`;
    params = {
      RequestUUID: "forged",
      CallUUID: "forged",
      CallStatus: status === "busy" ? "busy" : "in-progress",
    };
    headers = {
      "X-Plivo-Signature-V3": signPlivo(good ? PLIVO.authToken : "not-the-token", url, params, "1"),
      "X-Plivo-Signature-V3-Nonce": "1",
    };
  } else {
    url = `${base}?secret=${good ? EXOTEL.secret : "not-the-secret"}`;
    params = status === "busy"
      ? { CallSid: "forged", Status: "busy", EventType: "terminal" }
      : { CallSid: "forged", Status: "in-progress", EventType: "answered" };
    headers = {};
  }
  const r = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(params),
  });
  await r.body?.cancel();
  return r.status;
}

/** What each fake was asked, carrier by carrier: the fields that carry the contract. */
function checkRequest(carrier: Carrier, fields: Record<string, unknown>, sessionId: string) {
  if (carrier === "twilio") {
    assertEquals([fields.To, fields.From, fields.Timeout], [NUMBERS.to, NUMBERS.from, "25"]);
    assertEquals(fields.StatusCallbackEvent, ["initiated", "ringing", "answered", "completed"]);
    assert(String(fields.StatusCallback).includes(`/twilio/dialed/${sessionId}`));
    assert(String(fields.Twiml).includes('<Parameter name="session_token"'));
  } else if (carrier === "plivo") {
    assertEquals([fields.to, fields.from, fields.ring_timeout], ["14155550142", "14155550100", 25]);
    assert(String(fields.answer_url).includes(`/plivo/dialed/${sessionId}/answer?stream=`));
  } else {
    assertEquals([fields.From, fields.CallerId, fields.TimeOut], [NUMBERS.to, NUMBERS.from, "25"]);
    assertEquals([fields.Url, fields.CustomField], [EXOTEL_FLOW, sessionId]);
    // The token never goes to Exotel's REST API: the applet fetches the stream URL at answer.
    assert(!JSON.stringify(fields).includes("session_token"));
    assertEquals(fields.StatusCallbackEvents, ["answered", "terminal"]);
  }
}

for (const carrier of ["twilio", "plivo", "exotel"] as const) {
  Deno.test({
    name: `${carrier} outbound: an answered call's stream reaches the worker and the greeting ` +
      "plays; busy, no-answer and failed end the session with their reasons; a badly signed " +
      "status changes nothing, nor does one after the end",
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      const rig = await startRig(carrier);
      try {
        // Answered: the carrier's callbacks move the dial state, its stream reaches the worker.
        rig.fake.scripts.push("answer", "busy", "no-answer", "failed");
        const answered = await dial(rig, carrier);
        assert("carrier_call_id" in answered.result, JSON.stringify(answered.result));
        checkRequest(carrier, rig.fake.requests[0].fields, answered.sessionId);
        const call = await rig.fake.played(0);
        assertEquals(call.error, undefined);
        assert(call.stream, "the answered call opened no stream");
        await until(() => loudFrames(call.stream!) > 25, "half a second of the greeting");
        assertEquals(rig.sessions[0].phone?.carrier, carrier);
        // The brain hears of a placed call, from our number to the callee's.
        assertEquals(
          [rig.sessions[0].phone?.direction, rig.sessions[0].phone?.to],
          ["outbound", NUMBERS.to],
        );
        const live = await row(rig, answered.sessionId);
        assertEquals([live.status, live.dial_state], ["active", "answered"]);
        // The call id kept is the one the carrier answered the request with.
        const kept = String(live.metadata.phone_call_id);
        assert(kept && rig.fake.requests[0].answer.includes(kept), kept);
        await call.stream.hangUp();
        assertEquals(
          (await settled(rig, answered.sessionId, "ended")).end_reason,
          "caller_hung_up",
        );

        // Busy, no answer, failed: the session ends with the contract's reason; nothing streams.
        for (
          const [n, status, reason, rang] of [
            [1, "ended", "busy", false],
            // Exotel reports no ringing (its callback events are answered and terminal).
            [2, "ended", "no_answer", carrier !== "exotel"],
            [3, "failed", "dial_failed", false],
          ] as const
        ) {
          const placed = await dial(rig, carrier);
          assert("carrier_call_id" in placed.result);
          const played = await rig.fake.played(n);
          assertEquals([played.error, played.stream], [undefined, undefined]);
          const ended = await settled(rig, placed.sessionId, status);
          assertEquals(ended.end_reason, reason);
          assertEquals(ended.dial_state, rang ? "ringing" : "dialing");
        }
        await rig.service.noCalls();

        // A status with a bad signature (or secret) is refused and changes nothing; the same one
        // signed well ends the session; an answer after that changes nothing.
        const waiting = await reserve(rig, carrier);
        assertEquals(
          await postStatus(rig, carrier, waiting.session_id, "busy", false),
          carrier === "exotel" ? 401 : 403,
        );
        const untouched = await row(rig, waiting.session_id);
        assertEquals([untouched.status, untouched.end_reason, untouched.dial_state], [
          "created",
          null,
          "dialing",
        ]);
        assert((await postStatus(rig, carrier, waiting.session_id, "busy", true)) < 300);
        const busy = await row(rig, waiting.session_id);
        assertEquals([busy.status, busy.end_reason], ["ended", "busy"]);
        assert((await postStatus(rig, carrier, waiting.session_id, "answered", true)) < 300);
        const after = await row(rig, waiting.session_id);
        assertEquals([after.status, after.end_reason, after.dial_state], [
          "ended",
          "busy",
          "dialing",
        ]);
        if (carrier === "exotel") {
          // The outbound flow's applet URL: the secret, then an open session of this very call.
          const other = await reserve(rig, carrier);
          const applet = (secret: string, callSid: string) =>
            fetch(
              `${rig.service.api.url}/api/v1/telephony/exotel/dialed?CallSid=${callSid}` +
                `&CustomField=${other.session_id}&secret=${secret}`,
            ).then(async (r) => [r.status, await r.text()] as const);
          assertEquals((await applet("not-the-secret", "x"))[0], 401);
          // No call id was recorded for it (never dialled): no stream URL for anybody.
          assertEquals((await applet(EXOTEL.secret, "x"))[0], 409);
          await rig.service.api.deps.sql`update sessions
            set metadata = metadata || '{"phone_call_id": "exo-1"}' where id = ${other.session_id}`;
          assertEquals((await applet(EXOTEL.secret, "exo-2"))[0], 409);
          const [status, body] = await applet(EXOTEL.secret, "exo-1");
          assertEquals(status, 200);
          assert(
            JSON.parse(body).url.includes(`/telephony/exotel/${other.session_id}?session_token=`),
          );
        }
      } finally {
        await rig.close();
      }
    },
  });
}

Deno.test({
  name: "twilio outbound with machine detection hang_up: AnsweredBy machine_start ends the " +
    "session `machine` and the call is hung up through Twilio's API",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const rig = await startRig("twilio");
    try {
      rig.fake.scripts.push("machine");
      const placed = await dial(rig, "twilio", "hang_up");
      assert("carrier_call_id" in placed.result);
      assertEquals(rig.fake.requests[0].fields.MachineDetection, "Enable");
      const call = await rig.fake.played(0);
      assertEquals(call.error, undefined);
      const ended = await settled(rig, placed.sessionId, "ended");
      assertEquals(ended.end_reason, "machine");
      // Our webhook hung the machine up through Twilio's API, so its TwiML (the stream) never ran.
      assert(
        rig.rest.requests.some((r) =>
          r.path.endsWith(`/Calls/${call.callId}.json`) && r.form.Status === "completed"
        ),
        "no hang-up reached Twilio's API",
      );
      assertEquals(call.stream, undefined);
      await rig.service.noCalls();
    } finally {
      await rig.close();
    }
  },
});

Deno.test({
  name: "a carrier that refuses the call (bad credentials) ends the session failed/dial_failed",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const rig = await startRig("plivo");
    try {
      rig.service.api.deps.telephony!.plivo.authToken = "wrong-token";
      const placed = await dial(rig, "plivo");
      assert("refused" in placed.result);
      assertEquals(placed.result.refused.code, "plivo_401");
      assertEquals(rig.fake.requests[0].status, 401);
      const r = await row(rig, placed.sessionId);
      assertEquals([r.status, r.end_reason], ["failed", "dial_failed"]);
    } finally {
      await rig.close();
    }
  },
});

Deno.test("the worker runs its own machine detection only where the carrier's does not serve the mode", () => {
  const modes = ["off", "hang_up", "leave_message"] as const;
  const table = Object.fromEntries(
    (["twilio", "plivo", "exotel"] as const).map((c) => [
      c,
      modes.map((m) => workerMachineDetection(c, m)),
    ]),
  );
  assertEquals(table, {
    twilio: ["off", "off", "off"],
    plivo: ["off", "off", "leave_message"],
    exotel: ["off", "hang_up", "leave_message"],
  });
});
