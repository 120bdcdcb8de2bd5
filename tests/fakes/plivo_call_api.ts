// A FAKE Plivo Call API for tests: not Plivo, a local stand-in that places a call as "Make a call"
// documents it (https://www.plivo.com/docs/voice/api/call/make-a-call): POST
// /v1/Account/{auth_id}/Call/, HTTP Basic (auth ID, auth token; else 401), a JSON body with from,
// to and answer_url required (400 with Plivo's {api_id, error}), answer_method / ring_method /
// hangup_method GET or POST, ring_timeout a whole number of seconds, machine_detection true or
// hangup; 201 {api_id, message: "call fired", request_uuid}. Then it plays the call, each callback
// form-encoded and signed with X-Plivo-Signature-V3 and its nonce
// (https://www.plivo.com/docs/voice/concepts/signature-validation, the inbound fake's signPlivo):
// ring_url (CallStatus ringing, Event Ring), then for an answer the answer_url (CallStatus
// in-progress, Event StartApp), whose XML `<Stream>` it opens to the worker as the inbound fake
// does (plivo_audio_stream.ts); otherwise the hangup_url with CallStatus busy, no-answer or failed
// and its HangupCauseName (Event Hangup). A machine under machine_detection=hangup is hung up by
// Plivo itself: hangup_url with CallStatus completed and Machine=true (Plivo's machine parameter;
// the fake's reading of "machine_detection" on the same page).
import { FakeProviderStream } from "./provider_media_stream.ts";
import { plivoFormatOf, plivoWire, readPlivoStream, signPlivo } from "./plivo_audio_stream.ts";
import {
  basicOf,
  type CallScript,
  type FakeCallApi,
  type PlayedCall,
  postCallback,
  startFakeCallApi,
} from "./carrier_call_api.ts";
import type { FakeTelephonyRest } from "./telephony_rest.ts";

const plivoError = (status: number, error: string) =>
  Response.json({ api_id: crypto.randomUUID(), error }, { status });

export function startFakePlivoCallApi(
  account: { authId: string; authToken: string },
  rest?: FakeTelephonyRest,
): FakeCallApi {
  return startFakeCallApi(async (req, path, record) => {
    const m = /^\/v1\/Account\/([^/]+)\/Call\/$/.exec(path);
    if (!m || req.method !== "POST") return undefined;
    const body = await req.json().catch(() => undefined) as Record<string, unknown> | undefined;
    record(body ?? {});
    if (
      m[1] !== account.authId ||
      req.headers.get("authorization") !== basicOf(account.authId, account.authToken)
    ) {
      return { response: plivoError(401, "authentication failed") };
    }
    if (!body) return { response: plivoError(400, "invalid JSON body") };
    for (const f of ["from", "to", "answer_url"]) {
      if (typeof body[f] !== "string" || !body[f]) {
        return { response: plivoError(400, `${f} parameter must be present`) };
      }
    }
    for (const f of ["answer_method", "ring_method", "hangup_method"]) {
      if (body[f] !== undefined && body[f] !== "GET" && body[f] !== "POST") {
        return { response: plivoError(400, `${f} must be GET or POST`) };
      }
    }
    if (body.ring_timeout !== undefined && !Number.isInteger(Number(body.ring_timeout))) {
      return { response: plivoError(400, "ring_timeout must be an integer") };
    }
    const amd = body.machine_detection;
    if (amd !== undefined && amd !== "true" && amd !== "hangup") {
      return { response: plivoError(400, "machine_detection must be true or hangup") };
    }
    const requestUuid = crypto.randomUUID();
    const response = Response.json({
      api_id: crypto.randomUUID(),
      message: "call fired",
      request_uuid: requestUuid,
    }, { status: 201 });
    const from = body.from as string, to = body.to as string;
    const callUuid = crypto.randomUUID();
    const play = async (script: CallScript): Promise<PlayedCall> => {
      const played: PlayedCall = { callId: callUuid, script, callbacks: [] };
      const post = async (url: unknown, params: Record<string, string>) => {
        if (typeof url !== "string") return undefined;
        const all = {
          CallUUID: callUuid,
          RequestUUID: requestUuid,
          From: from,
          To: to,
          Direction: "outbound",
          ...params,
        };
        const nonce = String(Math.floor(Math.random() * 1e15));
        return await postCallback(played, url, all, {
          "X-Plivo-Signature-V3": signPlivo(account.authToken, url, all, nonce),
          "X-Plivo-Signature-V3-Nonce": nonce,
        });
      };
      const hangup = (status: string, cause: string, extra: Record<string, string> = {}) =>
        post(body.hangup_url, {
          CallStatus: status,
          HangupCauseName: cause,
          Event: "Hangup",
          ...extra,
        });
      if (script === "failed") {
        await hangup("failed", "Network Error");
        return played;
      }
      if (script === "busy") {
        await hangup("busy", "Busy Line");
        return played;
      }
      await post(body.ring_url, { CallStatus: "ringing", Event: "Ring" });
      if (script === "no-answer") {
        await hangup("no-answer", "No Answer");
        return played;
      }
      if (script === "machine" && amd === "hangup") {
        await hangup("completed", "Machine Detected", { Machine: "true" });
        return played;
      }
      const answer = await post(body.answer_url, { CallStatus: "in-progress", Event: "StartApp" });
      if (!answer || answer.status !== 200 || !/<Stream\b/.test(answer.body)) {
        played.error ??= `answer_url gave no <Stream>: ${answer?.body}`;
        return played;
      }
      const stream = readPlivoStream(answer.body);
      played.stream = await FakeProviderStream.open(
        stream.url,
        plivoWire({ callUuid, from, to }, plivoFormatOf(stream.attributes)),
      );
      return played;
    };
    return { response, play, callId: callUuid };
  }, rest);
}
