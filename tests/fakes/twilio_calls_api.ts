// A FAKE Twilio Calls API for tests: not Twilio, a local stand-in that places a call as "Create a
// Call resource" documents it (https://www.twilio.com/docs/voice/api/call-resource
// #create-a-call-resource): POST /2010-04-01/Accounts/{AccountSid}/Calls.json, HTTP Basic
// (AccountSid, AuthToken; else 401, code 20003), form-encoded, To and From required (21201,
// 21603), one of Url, Twiml or ApplicationSid (21205), StatusCallbackEvent among initiated,
// ringing, answered, completed (21626), Timeout 1-600, MachineDetection Enable or
// DetectMessageEnd; 201 with the Call as JSON (sid CA…, status queued, direction outbound-api).
// Then it plays the call: the StatusCallback is POSTed for each subscribed event, form-encoded
// with CallSid, AccountSid, From, To, CallStatus, Direction, ApiVersion, CallbackSource,
// SequenceNumber, signed with X-Twilio-Signature ("Status callbacks",
// https://www.twilio.com/docs/voice/api/call-resource#statuscallback;
// https://www.twilio.com/docs/usage/security#validating-requests): initiated, ringing, then
// in-progress (the answered event; AnsweredBy human or machine_start when MachineDetection was
// asked for, https://www.twilio.com/docs/voice/answering-machine-detection) and the TwiML's
// `<Connect><Stream>` is opened to the worker as the inbound fake does (twilio_media_stream.ts);
// or busy / no-answer / failed as the completed event's CallStatus (Twilio reports a call that
// never connected on `completed` with that status).
import { FakeProviderStream, sid } from "./provider_media_stream.ts";
import { readTwimlStream, signTwilio, twilioWire } from "./twilio_media_stream.ts";
import {
  basicOf,
  type CallScript,
  type FakeCallApi,
  type PlayedCall,
  postCallback,
  startFakeCallApi,
} from "./carrier_call_api.ts";
import type { FakeTelephonyRest } from "./telephony_rest.ts";

const EVENTS = ["initiated", "ringing", "answered", "completed"];

const twilioError = (status: number, code: number, message: string) =>
  Response.json(
    { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status },
    {
      status,
    },
  );

export function startFakeTwilioCallsApi(
  account: { accountSid: string; authToken: string },
  rest?: FakeTelephonyRest,
): FakeCallApi {
  return startFakeCallApi(async (req, path, record) => {
    const m = /^\/2010-04-01\/Accounts\/([^/]+)\/Calls\.json$/.exec(path);
    if (!m || req.method !== "POST") return undefined;
    const form = new URLSearchParams(await req.text());
    const fields = Object.fromEntries(form);
    const events = form.getAll("StatusCallbackEvent");
    record({ ...fields, StatusCallbackEvent: events });
    const auth = req.headers.get("authorization");
    if (m[1] !== account.accountSid || auth !== basicOf(account.accountSid, account.authToken)) {
      return { response: twilioError(401, 20003, "Authenticate") };
    }
    if (!fields.To) return { response: twilioError(400, 21201, "No 'To' number is specified") };
    if (!fields.From) {
      return { response: twilioError(400, 21603, "A 'From' phone number is required.") };
    }
    if (!fields.Url && !fields.Twiml && !fields.ApplicationSid) {
      return { response: twilioError(400, 21205, "Url parameter is required.") };
    }
    if (events.some((e) => !EVENTS.includes(e))) {
      return { response: twilioError(400, 21626, "Invalid 'StatusCallbackEvent'") };
    }
    const timeout = Number(fields.Timeout ?? 60);
    if (!Number.isInteger(timeout) || timeout < 1 || timeout > 600) {
      return { response: twilioError(400, 21210, "Invalid Timeout") };
    }
    const amd = fields.MachineDetection;
    if (amd && amd !== "Enable" && amd !== "DetectMessageEnd") {
      return { response: twilioError(400, 21218, "Invalid MachineDetection") };
    }
    const callSid = sid("CA");
    const call = { callSid, accountSid: account.accountSid, from: fields.From, to: fields.To };
    const response = Response.json({
      sid: callSid,
      account_sid: account.accountSid,
      to: fields.To,
      from: fields.From,
      status: "queued",
      direction: "outbound-api",
      api_version: "2010-04-01",
      uri: `/2010-04-01/Accounts/${account.accountSid}/Calls/${callSid}.json`,
    }, { status: 201 });
    let sequence = 0;
    const play = async (script: CallScript, hungUp: () => boolean): Promise<PlayedCall> => {
      const played: PlayedCall = { callId: callSid, script, callbacks: [] };
      const status = async (
        event: string,
        callStatus: string,
        extra: Record<string, string> = {},
      ) => {
        if (!fields.StatusCallback || !events.includes(event)) return;
        const params = {
          CallSid: callSid,
          AccountSid: account.accountSid,
          From: fields.From,
          To: fields.To,
          CallStatus: callStatus,
          Direction: "outbound-api",
          ApiVersion: "2010-04-01",
          CallbackSource: "call-progress-events",
          SequenceNumber: String(sequence++),
          ...extra,
        };
        await postCallback(played, fields.StatusCallback, params, {
          "X-Twilio-Signature": signTwilio(account.authToken, fields.StatusCallback, params),
        });
      };
      await status("initiated", "initiated");
      if (script === "failed") {
        await status("completed", "failed");
        return played;
      }
      if (script === "busy") {
        await status("completed", "busy");
        return played;
      }
      await status("ringing", "ringing");
      if (script === "no-answer") {
        await status("completed", "no-answer");
        return played;
      }
      const answeredBy = script === "machine" ? "machine_start" : "human";
      await status("answered", "in-progress", amd ? { AnsweredBy: answeredBy } : {});
      // Hung up through the REST API on the answered callback (a machine): no TwiML runs.
      if (hungUp()) return played;
      if (!fields.Twiml) {
        played.error = "only inline Twiml is played by this fake";
        return played;
      }
      const { url, params } = readTwimlStream(fields.Twiml);
      played.stream = await FakeProviderStream.open(url, twilioWire(call, params));
      return played;
    };
    return { response, play, callId: callSid };
  }, rest);
}
