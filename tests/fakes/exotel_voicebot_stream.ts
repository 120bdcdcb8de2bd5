// A FAKE Exotel for tests: not Exotel, a local stand-in that runs a call through a Voicebot
// applet whose URL is the service's dynamic endpoint, as "Working with the Stream and Voicebot
// Applet" describes (https://support.exotel.com/support/solutions/articles/3000108630): it GETs
// the https endpoint (with the Basic credentials of its URL), reads {"url": "wss://..."}, dials it
// and speaks "WebSocket protocol" (https://developer.exotel.com/docs/agentstream/websocket-
// protocol): connected, start (stream_sid, call_sid, account_sid, from, to, custom_parameters,
// media_format audio/x-raw 8000 16), media (chunk, timestamp, base64 raw/slin 16-bit LE mono
// 8 kHz) every 100 ms, as Exotel streams, dtmf (digit, duration), mark once played, stop. From
// the worker it reads media (refusing chunks under 3.2 KB or not a multiple of 320 bytes, as the
// applet's chunk rules require), mark and clear.
import { FakeProviderStream, type FakeWire, sid } from "./provider_media_stream.ts";

export interface ExotelCall {
  callSid: string;
  from: string;
  to: string;
}

export const exotelCall = (): ExotelCall => ({
  callSid: sid("").slice(0, 32),
  from: "09876543210",
  to: "08041234567",
});

export async function getExotelStreamUrl(
  endpoint: string,
  secret: string,
  call: ExotelCall,
): Promise<{ status: number; body: string }> {
  const u = new URL(endpoint);
  u.searchParams.set("CallSid", call.callSid);
  u.searchParams.set("CallFrom", call.from);
  u.searchParams.set("CallTo", call.to);
  u.searchParams.set("Direction", "incoming");
  const r = await fetch(u, { headers: { Authorization: `Basic ${btoa(`exotel:${secret}`)}` } });
  return { status: r.status, body: await r.text() };
}

export function exotelWire(call: ExotelCall): FakeWire & { badChunks: number } {
  const streamSid = sid("").slice(0, 32);
  let sequence = 0;
  const seq = () => String(++sequence);
  const wire = {
    badChunks: 0,
    audio: "slin16" as const,
    chunkMs: 100,
    opening: () => [
      { event: "connected" },
      {
        event: "start",
        sequence_number: seq(),
        stream_sid: streamSid,
        start: {
          stream_sid: streamSid,
          call_sid: call.callSid,
          account_sid: "exotel-test",
          from: call.from,
          to: call.to,
          custom_parameters: {},
          media_format: { encoding: "audio/x-raw", sample_rate: "8000", bit_rate: "16" },
        },
      },
    ],
    media: (payload: string, chunk: number, elapsedMs: number) => ({
      event: "media",
      sequence_number: seq(),
      stream_sid: streamSid,
      media: { chunk: String(chunk), timestamp: String(elapsedMs), payload },
    }),
    dtmf: (digit: string) => ({
      event: "dtmf",
      sequence_number: seq(),
      stream_sid: streamSid,
      dtmf: { digit, duration: "100" },
    }),
    stop: () => ({
      event: "stop",
      sequence_number: seq(),
      stream_sid: streamSid,
      stop: { call_sid: call.callSid, account_sid: "exotel-test", reason: "callended" },
    }),
    played: (name: string) => ({
      event: "mark",
      sequence_number: seq(),
      stream_sid: streamSid,
      mark: { name },
    }),
    cleared: () => undefined,
    read(m: Record<string, unknown>) {
      if (m.stream_sid !== streamSid) {
        return { kind: "unknown" as const, event: `${m.event} for another stream` };
      }
      const media = m.media as { payload?: unknown } | undefined;
      if (m.event === "media" && typeof media?.payload === "string") {
        const bytes = Uint8Array.fromBase64(media.payload).length;
        if (bytes < 3200 || bytes % 320 !== 0) wire.badChunks++;
        return { kind: "media" as const, payload: media.payload };
      }
      const mark = m.mark as { name?: unknown } | undefined;
      if (m.event === "mark" && typeof mark?.name === "string") {
        return { kind: "mark" as const, name: mark.name };
      }
      if (m.event === "clear") return { kind: "clear" as const };
      return { kind: "unknown" as const, event: String(m.event) };
    },
  };
  return wire;
}

export async function dialThroughFakeExotel(
  endpoint: string,
  secret: string,
  call: ExotelCall = exotelCall(),
): Promise<{ stream: FakeProviderStream; wire: ReturnType<typeof exotelWire> }> {
  const answer = await getExotelStreamUrl(endpoint, secret, call);
  if (answer.status !== 200) throw new Error(`dynamic URL: ${answer.status} ${answer.body}`);
  const wire = exotelWire(call);
  return { stream: await FakeProviderStream.open(JSON.parse(answer.body).url, wire), wire };
}
