// A FAKE Exotel Connect API for tests: not Exotel, a local stand-in that places a call as "Connect
// Number to Call Flow" (https://developer.exotel.com/docs/voice-v1/api-reference/connect-to-flow)
// and "Connect Voice AI API" (https://developer.exotel.com/docs/agentstream/connect-voice-ai)
// document it:
// POST /v1/Accounts/{sid}/Calls/connect.json, HTTP Basic (API key, API token; else 401),
// form-encoded, From and CallerId required, and StreamUrl (ws:// or wss://, at most 600
// characters) with StreamType bidirectional, or a flow Url (400 with Exotel's RestException
// otherwise); TimeOut and TimeLimit whole seconds (TimeLimit at most 14400); StatusCallbackEvents
// among ringing, answered, terminal. 200 with {"Call": {Sid, AccountSid, From, To, Status,
// Direction, ...}}. Then it plays the call: the StatusCallback is POSTed form-encoded ("StatusCallback",
// https://developer.exotel.com/docs/voice-v1/api-reference/status-callback: CallSid, Status,
// EventType, DateCreated, DateUpdated, To, From, RecordingUrl) for the subscribed events: ringing,
// then for an answer `answered` and the stream opened as the inbound fake's Voicebot stream
// (exotel_voicebot_stream.ts): the StreamUrl, or for a flow, the flow's Voicebot applet run as
// "Working with the Stream and Voicebot Applet" describes it
// (https://support.exotel.com/support/solutions/articles/3000108630): its dynamic URL (`flows`,
// set by the test as an operator sets the applet up) is GET with the call's CallSid, CallFrom,
// CallTo and CustomField and Basic credentials, and the {"url"} it answers is dialled; otherwise
// `terminal` with Status busy, no-answer or failed. Exotel signs nothing: the StatusCallback URL
// is called as given (ours carries its secret).
import { FakeProviderStream, sid } from "./provider_media_stream.ts";
import { exotelWire } from "./exotel_voicebot_stream.ts";
import {
  basicOf,
  type CallScript,
  type FakeCallApi,
  type PlayedCall,
  postCallback,
  startFakeCallApi,
} from "./carrier_call_api.ts";
import type { FakeTelephonyRest } from "./telephony_rest.ts";

const exotelError = (status: number, message: string) =>
  Response.json({ RestException: { Status: status, Message: message } }, { status });

const now = () => new Date().toISOString().slice(0, 19).replace("T", " ");

/** A flow's Voicebot applet: its dynamic URL and the Basic credentials it is called with. */
export interface FakeVoicebotApplet {
  url: string;
  user: string;
  password: string;
}

export function startFakeExotelConnectApi(
  account: { accountSid: string; apiKey: string; apiToken: string },
  rest?: FakeTelephonyRest,
): FakeCallApi & { flows: Map<string, FakeVoicebotApplet> } {
  const flows = new Map<string, FakeVoicebotApplet>();
  const api = startFakeCallApi(async (req, path, record) => {
    const m = /^\/v1\/Accounts\/([^/]+)\/Calls\/connect(\.json)?$/.exec(path);
    if (!m || req.method !== "POST") return undefined;
    const form = new URLSearchParams(await req.text());
    const f = Object.fromEntries(form);
    const events = [...form.entries()].filter(([k]) => /^StatusCallbackEvents(\[\d*\])?$/.test(k))
      .map(([, v]) => v);
    record({ ...f, StatusCallbackEvents: events });
    if (
      m[1] !== account.accountSid ||
      req.headers.get("authorization") !== basicOf(account.apiKey, account.apiToken)
    ) {
      return { response: exotelError(401, "Authentication is required to view this resource.") };
    }
    if (!f.From || !f.CallerId) {
      return { response: exotelError(400, "From and CallerId are mandatory") };
    }
    const streamed = f.StreamUrl !== undefined;
    if (streamed) {
      if (!/^wss?:\/\//.test(f.StreamUrl) || f.StreamUrl.length > 600) {
        return {
          response: exotelError(
            400,
            "StreamUrl must be a ws:// or wss:// URL of at most 600 characters",
          ),
        };
      }
      if (f.StreamType !== "bidirectional") {
        return { response: exotelError(400, "StreamType must be bidirectional") };
      }
    } else if (!f.Url) return { response: exotelError(400, "Url or StreamUrl is mandatory") };
    else if (!flows.has(f.Url)) {
      return { response: exotelError(400, "Url is not a flow of this account") };
    }
    if ((f.CustomField ?? "").length > 128) {
      return { response: exotelError(400, "CustomField is at most 128 characters") };
    }
    for (const k of ["TimeOut", "TimeLimit"]) {
      if (f[k] !== undefined && !/^[0-9]+$/.test(f[k])) {
        return { response: exotelError(400, `${k} must be whole seconds`) };
      }
    }
    if (Number(f.TimeLimit ?? 0) > 14400) {
      return { response: exotelError(400, "TimeLimit is at most 14400") };
    }
    if (events.some((e) => !["ringing", "answered", "terminal"].includes(e))) {
      return { response: exotelError(400, "StatusCallbackEvents: ringing, answered or terminal") };
    }
    const callSid = sid("").slice(0, 32);
    const created = now();
    const response = Response.json({
      Call: {
        Sid: callSid,
        ParentCallSid: null,
        DateCreated: created,
        DateUpdated: created,
        AccountSid: account.accountSid,
        To: f.CallerId,
        From: f.From,
        PhoneNumberSid: f.CallerId,
        Status: "in-progress",
        Direction: "outbound-api",
        Uri: `/v1/Accounts/${account.accountSid}/Calls/${callSid}.json`,
      },
    });
    const play = async (script: CallScript): Promise<PlayedCall> => {
      const played: PlayedCall = { callId: callSid, script, callbacks: [] };
      const status = async (event: string, callStatus: string) => {
        if (!f.StatusCallback || (event !== "terminal" && !events.includes(event))) return;
        await postCallback(played, f.StatusCallback, {
          CallSid: callSid,
          Status: callStatus,
          EventType: event,
          DateCreated: created,
          DateUpdated: now(),
          To: f.CallerId,
          From: f.From,
          RecordingUrl: "",
        });
      };
      if (script === "failed") {
        await status("terminal", "failed");
        return played;
      }
      if (script === "busy") {
        await status("terminal", "busy");
        return played;
      }
      await status("ringing", "ringing");
      if (script === "no-answer") {
        await status("terminal", "no-answer");
        return played;
      }
      await status("answered", "in-progress");
      let streamUrl = f.StreamUrl;
      if (!streamed) {
        const applet = flows.get(f.Url)!;
        const u = new URL(applet.url);
        for (
          const [k, v] of Object.entries({
            CallSid: callSid,
            CallFrom: f.From,
            CallTo: f.CallerId,
            Direction: "outbound-api",
            CustomField: f.CustomField ?? "",
          })
        ) u.searchParams.set(k, v);
        const r = await fetch(u, {
          headers: { Authorization: basicOf(applet.user, applet.password) },
        });
        const body = await r.text();
        if (r.status !== 200) {
          played.error = `voicebot applet URL: ${r.status} ${body}`;
          return played;
        }
        streamUrl = JSON.parse(body).url;
      }
      played.stream = await FakeProviderStream.open(
        streamUrl,
        exotelWire({ callSid, from: f.From, to: f.CallerId }),
      );
      return played;
    };
    return { response, play, callId: callSid };
  }, rest);
  return Object.assign(api, { flows });
}
