// A FAKE Plivo for tests: not Plivo, a local stand-in that answers a call the way Plivo does with
// `<Stream bidirectional="true">`: it POSTs the application's answer URL signed as Plivo signs
// (X-Plivo-Signature-V3 and its nonce, https://www.plivo.com/docs/voice/concepts/signature-
// validation, as plivo-node's v3Security.js computes it, written again here with node:crypto),
// reads the XML answer (https://www.plivo.com/docs/voice/xml/the-stream-element), dials the
// stream URL and speaks "Stream Event Protocol"
// (https://www.plivo.com/docs/voice/audio-streaming/audio-streaming): start (callId, streamId,
// accountId, tracks, mediaFormat as the XML's contentType asked: audio/x-mulaw 8000, or
// audio/x-l16 at 8000 or 16000, https://www.plivo.com/docs/voice/xml/the-stream-element), media
// every 20 ms (track inbound, timestamp in Unix ms, chunk, base64 μ-law or 16-bit PCM, which the
// fake sends little-endian: Plivo does not state the byte order), dtmf, playedStream after a checkpoint,
// clearedAudio after clearAudio; no stop message: Plivo ends a stream by closing it. From the
// worker it reads playAudio, checkpoint and clearAudio.
import { createHmac } from "node:crypto";
import { FakeProviderStream, type FakeWire } from "./provider_media_stream.ts";

export interface PlivoCall {
  callUuid: string;
  from: string;
  to: string;
}

export const plivoCall = (): PlivoCall => ({
  callUuid: crypto.randomUUID(),
  from: "919876543210",
  to: "918041234567",
});

/**
 * X-Plivo-Signature-V3 of a POST: the URL without its query, "?", the query's k=v sorted and
 * joined by "&" (then "." when there are POST parameters too), the POST parameters' name+value
 * sorted, then "." and the nonce.
 */
export function signPlivo(
  authToken: string,
  url: string,
  params: Record<string, string>,
  nonce: string,
) {
  const u = new URL(url);
  const query = [...u.searchParams.entries()].map(([k, v]) => `${k}=${v}`).sort().join("&");
  const names = Object.keys(params).sort();
  const post = names.map((k) => k + params[k]).join("");
  const base = `${u.origin}${u.pathname}?${query}${query && post ? "." : ""}${post}`;
  return createHmac("sha256", authToken).update(`${base}.${nonce}`).digest("base64");
}

export async function postPlivoAnswer(
  url: string,
  authToken: string,
  call: PlivoCall,
  /** `nonce`: the V3 nonce to sign with (a fresh random one by default, as Plivo sends). */
  options: { signature?: string; nonce?: string } = {},
): Promise<{ status: number; body: string }> {
  const params = {
    CallUUID: call.callUuid,
    From: call.from,
    To: call.to,
    CallStatus: "in-progress",
    Direction: "inbound",
    Event: "StartApp",
  };
  const nonce = options.nonce ?? String(Math.floor(Math.random() * 1e15));
  const r = await fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      "X-Plivo-Signature-V3": options.signature ?? signPlivo(authToken, url, params, nonce),
      "X-Plivo-Signature-V3-Nonce": nonce,
    },
    body: new URLSearchParams(params),
  });
  return { status: r.status, body: await r.text() };
}

export function readPlivoStream(xml: string): { url: string; attributes: string } {
  const m = /<Stream\b([^>]*)>([^<]*)<\/Stream>/.exec(xml);
  if (!m) throw new Error(`no <Stream> in ${xml}`);
  return { url: m[2].trim().replace(/&amp;/g, "&"), attributes: m[1] };
}

/** The format a `<Stream contentType="...">` asks for (Plivo's default: audio/x-l16;rate=8000). */
export function plivoFormatOf(attributes: string): { encoding: string; sampleRate: 8000 | 16000 } {
  const m = /contentType="([^";]+);rate=(\d+)"/.exec(attributes);
  if (!m) return { encoding: "audio/x-l16", sampleRate: 8000 };
  const sampleRate = Number(m[2]);
  if (sampleRate !== 8000 && sampleRate !== 16000) throw new Error(`rate ${m[2]}`);
  if (m[1] !== "audio/x-mulaw" && m[1] !== "audio/x-l16") throw new Error(`type ${m[1]}`);
  if (m[1] === "audio/x-mulaw" && sampleRate !== 8000) throw new Error("μ-law is 8 kHz only");
  return { encoding: m[1], sampleRate };
}

export function plivoWire(
  call: PlivoCall,
  format: { encoding: string; sampleRate: 8000 | 16000 } = {
    encoding: "audio/x-mulaw",
    sampleRate: 8000,
  },
): FakeWire {
  const streamId = crypto.randomUUID();
  let sequence = 0;
  const startedAt = Date.now();
  return {
    audio: format.encoding === "audio/x-mulaw" ? "mulaw" : "slin16",
    rate: format.sampleRate,
    chunkMs: 20,
    opening: () => [{
      event: "start",
      sequenceNumber: ++sequence,
      start: {
        callId: call.callUuid,
        streamId,
        accountId: "MAXXXXXXXXXXXXXXXXXX",
        tracks: ["inbound"],
        mediaFormat: format,
      },
      extra_headers: "",
    }],
    media: (payload, chunk, elapsedMs) => ({
      event: "media",
      sequenceNumber: ++sequence,
      streamId,
      media: { track: "inbound", timestamp: String(startedAt + elapsedMs), chunk, payload },
      extra_headers: "",
    }),
    dtmf: (digit) => ({
      event: "dtmf",
      sequenceNumber: ++sequence,
      streamId,
      dtmf: { track: "inbound", digit, timestamp: String(Date.now()) },
    }),
    stop: () => undefined,
    played: (name) => ({ event: "playedStream", sequenceNumber: ++sequence, streamId, name }),
    cleared: () => ({ event: "clearedAudio", sequenceNumber: ++sequence, streamId }),
    read(m) {
      const media = m.media as { payload?: unknown; contentType?: unknown; sampleRate?: unknown };
      if (m.event === "playAudio" && typeof media?.payload === "string") {
        // Plivo plays what it is sent; here it must be the stream's own format.
        if (media.contentType !== format.encoding || media.sampleRate !== format.sampleRate) {
          return {
            kind: "unknown",
            event: `playAudio as ${media.contentType}/${media.sampleRate}`,
          };
        }
        return { kind: "media", payload: media.payload };
      }
      if (m.streamId !== streamId) {
        return { kind: "unknown", event: `${m.event} for another stream` };
      }
      if (m.event === "checkpoint" && typeof m.name === "string") {
        return { kind: "mark", name: m.name };
      }
      if (m.event === "clearAudio") return { kind: "clear" };
      return { kind: "unknown", event: String(m.event) };
    },
  };
}

export async function dialThroughFakePlivo(
  answerUrl: string,
  authToken: string,
  call: PlivoCall = plivoCall(),
): Promise<FakeProviderStream> {
  const answer = await postPlivoAnswer(answerUrl, authToken, call);
  if (answer.status !== 200) throw new Error(`answer: ${answer.status} ${answer.body}`);
  const stream = readPlivoStream(answer.body);
  return await FakeProviderStream.open(
    stream.url,
    plivoWire(call, plivoFormatOf(stream.attributes)),
  );
}
