// Exotel's Voicebot applet (bidirectional stream), as documented in "WebSocket protocol":
// https://developer.exotel.com/docs/agentstream/websocket-protocol and "Working with the Stream and
// Voicebot Applet": https://developer.exotel.com/docs/agentstream/stream-voicebot-applet
// From Exotel: connected, start (stream_sid, call_sid, from, to, custom_parameters, media_format),
// media (chunk, timestamp, base64 payload), dtmf (digit, duration), mark, stop. To Exotel: media,
// mark, clear. Audio both ways is raw/slin: 16-bit little-endian mono PCM at 8 kHz (not μ-law),
// and what is sent to Exotel must come in chunks of at least 3.2 KB, a multiple of 320 bytes.
import {
  audioFormatOf,
  dtmfEvent,
  mediaEvent,
  objectOf,
  type StreamDialect,
  type StreamEvent,
  stringOf,
  stringsOf,
} from "../dialect.ts";

/** Exotel's smallest chunk to it: 3,200 bytes, 200 ms of 8 kHz 16-bit audio (10 frames). */
export const EXOTEL_MIN_CHUNK_BYTES = 3200;

export const exotelDialect: StreamDialect = {
  carrier: "exotel",
  audio: "slin16",
  framesPerMessage: EXOTEL_MIN_CHUNK_BYTES / 320,
  read(message: unknown): StreamEvent {
    const m = objectOf(message, "message");
    const event = stringOf(m.event, "event");
    switch (event) {
      case "connected":
        return { kind: "connected" };
      case "start": {
        const s = objectOf(m.start, "start");
        const format = audioFormatOf(
          s.media_format,
          "start.media_format",
          "sample_rate",
          "audio/x-raw",
        );
        return {
          kind: "start",
          streamId: stringOf(s.stream_sid ?? m.stream_sid, "start.stream_sid"),
          callId: stringOf(s.call_sid, "start.call_sid"),
          from: typeof s.from === "string" ? s.from : undefined,
          to: typeof s.to === "string" ? s.to : undefined,
          params: stringsOf(s.custom_parameters),
          ...format,
        };
      }
      case "media":
        return mediaEvent(m, event, false);
      case "dtmf":
        return dtmfEvent(m);
      case "mark":
        return { kind: "played", name: stringOf(objectOf(m.mark, "mark").name, "mark.name") };
      case "stop":
        return { kind: "stop" };
      default:
        return { kind: "other", event };
    }
  },
  // The base applet streams raw/slin (audio/x-raw, 16 bits); a beta option may choose μ-law or
  // 16 kHz instead, which this dialect does not read.
  unreadableFormat: ({ encoding, sampleRate }) =>
    /raw|l16|slin|pcm/i.test(encoding) && sampleRate === 8000
      ? undefined
      : `the stream is ${encoding} at ${sampleRate} Hz; only raw/slin 16-bit at 8000 Hz is read`,
  media: (streamSid, payload) => ({ event: "media", stream_sid: streamSid, media: { payload } }),
  mark: (streamSid, name) => ({ event: "mark", stream_sid: streamSid, mark: { name } }),
  clear: (streamSid) => ({ event: "clear", stream_sid: streamSid }),
  noTransfer: "Exotel calls cannot be transferred from the stream: the Voicebot stream has no " +
    "transfer message and Exotel has no API to move a flow's call. End the call instead; " +
    "Exotel then runs the flow's next applet (e.g. a Connect to an agent).",
};
