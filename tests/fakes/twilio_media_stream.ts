// A FAKE Twilio for tests: not Twilio, a local stand-in that places a call the way Twilio does
// with `<Connect><Stream>`: it POSTs the number's voice webhook signed as Twilio signs
// (X-Twilio-Signature, https://www.twilio.com/docs/usage/security#validating-requests, computed
// here with node:crypto, apart from the service's own code), reads the TwiML answer
// (https://www.twilio.com/docs/voice/twiml/stream), dials the `<Stream url>` and speaks Media
// Streams as "Media Streams - WebSocket Messages" documents it
// (https://www.twilio.com/docs/voice/media-streams/websocket-messages): connected, start (streamSid,
// callSid, tracks, customParameters from the `<Parameter>`s, mediaFormat audio/x-mulaw 8000 mono),
// media every 20 ms (track inbound, chunk and timestamp as strings, base64 μ-law), dtmf
// (track inbound_track), mark once the audio before it played, stop; from the worker it reads
// media, mark and clear, each naming the streamSid.
import { createHmac } from "node:crypto";
import { FakeProviderStream, type FakeWire, sid } from "./provider_media_stream.ts";

export interface TwilioCall {
  callSid: string;
  accountSid: string;
  from: string;
  to: string;
}

export function twilioCall(accountSid = sid("AC")): TwilioCall {
  return { callSid: sid("CA"), accountSid, from: "+14155550100", to: "+14155550199" };
}

/** X-Twilio-Signature as Twilio's docs define it: HMAC-SHA1(URL + sorted name+value), base64. */
export function signTwilio(authToken: string, url: string, params: Record<string, string>) {
  const data = url + Object.keys(params).sort().map((k) => k + params[k]).join("");
  return createHmac("sha1", authToken).update(data).digest("base64");
}

/** The webhook Twilio POSTs when the call comes in (a subset of its documented parameters). */
export async function postTwilioVoiceWebhook(
  url: string,
  authToken: string,
  call: TwilioCall,
  options: { signature?: string } = {},
): Promise<{ status: number; body: string }> {
  const params = {
    CallSid: call.callSid,
    AccountSid: call.accountSid,
    From: call.from,
    To: call.to,
    CallStatus: "ringing",
    Direction: "inbound",
    ApiVersion: "2010-04-01",
  };
  const r = await fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      "X-Twilio-Signature": options.signature ?? signTwilio(authToken, url, params),
    },
    body: new URLSearchParams(params),
  });
  return { status: r.status, body: await r.text() };
}

/** The `<Connect><Stream>` of a TwiML answer: its url and its `<Parameter>`s. */
export function readTwimlStream(twiml: string): { url: string; params: Record<string, string> } {
  const unescape = (s: string) =>
    s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'").replace(/&amp;/g, "&");
  const url = /<Connect>\s*<Stream\b[^>]*\burl="([^"]*)"/.exec(twiml)?.[1];
  if (!url) throw new Error(`no <Connect><Stream url> in ${twiml}`);
  const params: Record<string, string> = {};
  for (const m of twiml.matchAll(/<Parameter name="([^"]*)" value="([^"]*)"\s*\/>/g)) {
    params[unescape(m[1])] = unescape(m[2]);
  }
  return { url: unescape(url), params };
}

export function twilioWire(call: TwilioCall, customParameters: Record<string, string>): FakeWire {
  const streamSid = sid("MZ");
  let sequence = 0;
  const seq = () => String(++sequence);
  return {
    audio: "mulaw",
    chunkMs: 20,
    opening: () => [
      { event: "connected", protocol: "Call", version: "1.0.0" },
      {
        event: "start",
        sequenceNumber: seq(),
        start: {
          accountSid: call.accountSid,
          streamSid,
          callSid: call.callSid,
          tracks: ["inbound"],
          mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
          customParameters,
        },
        streamSid,
      },
    ],
    media: (payload, chunk, elapsedMs) => ({
      event: "media",
      sequenceNumber: seq(),
      media: { track: "inbound", chunk: String(chunk), timestamp: String(elapsedMs), payload },
      streamSid,
    }),
    dtmf: (digit) => ({
      event: "dtmf",
      streamSid,
      sequenceNumber: seq(),
      dtmf: { track: "inbound_track", digit },
    }),
    stop: () => ({
      event: "stop",
      sequenceNumber: seq(),
      streamSid,
      stop: { accountSid: call.accountSid, callSid: call.callSid },
    }),
    played: (name) => ({ event: "mark", sequenceNumber: seq(), streamSid, mark: { name } }),
    cleared: () => undefined,
    read(m) {
      if (m.streamSid !== streamSid) {
        return { kind: "unknown", event: `${m.event} for another stream` };
      }
      const media = m.media as { payload?: unknown } | undefined;
      if (m.event === "media" && typeof media?.payload === "string") {
        return { kind: "media", payload: media.payload };
      }
      const mark = m.mark as { name?: unknown } | undefined;
      if (m.event === "mark" && typeof mark?.name === "string") {
        return { kind: "mark", name: mark.name };
      }
      if (m.event === "clear") return { kind: "clear" };
      return { kind: "unknown", event: String(m.event) };
    },
  };
}

/** The whole of Twilio's part: the webhook, then the stream its TwiML names. */
export async function dialThroughFakeTwilio(
  webhookUrl: string,
  authToken: string,
  call: TwilioCall = twilioCall(),
): Promise<FakeProviderStream> {
  const answer = await postTwilioVoiceWebhook(webhookUrl, authToken, call);
  if (answer.status !== 200) throw new Error(`webhook: ${answer.status} ${answer.body}`);
  const { url, params } = readTwimlStream(answer.body);
  return await FakeProviderStream.open(url, twilioWire(call, params));
}
