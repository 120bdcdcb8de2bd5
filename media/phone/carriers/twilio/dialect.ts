// Twilio Media Streams, bidirectional (`<Connect><Stream>`), as documented in "Media Streams -
// WebSocket Messages": https://www.twilio.com/docs/voice/media-streams/websocket-messages
// From Twilio: connected, start (streamSid, callSid, customParameters, mediaFormat audio/x-mulaw
// 8000), media (media.track, chunk, timestamp in ms since the stream began, base64 payload), dtmf
// (dtmf.digit), mark (mark.name, once the audio before it has played), stop. To Twilio: media
// (base64 audio/x-mulaw 8000, no header), mark, clear (drops the audio Twilio has buffered).
import {
  audioFormatOf,
  mediaEvent,
  objectOf,
  type StreamDialect,
  type StreamEvent,
  stringOf,
  stringsOf,
  unlessMulaw8k,
} from "../dialect.ts";

export const twilioDialect: StreamDialect = {
  carrier: "twilio",
  audio: "mulaw",
  // Twilio plays what it receives in order, any size; 20 ms keeps a barge-in's clear exact.
  framesPerMessage: 1,
  read(message: unknown): StreamEvent {
    const m = objectOf(message, "message");
    const event = stringOf(m.event, "event");
    switch (event) {
      case "connected":
        return { kind: "connected" };
      case "start": {
        const s = objectOf(m.start, "start");
        const format = audioFormatOf(
          s.mediaFormat,
          "start.mediaFormat",
          "sampleRate",
          "audio/x-mulaw",
        );
        const params = stringsOf(s.customParameters);
        return {
          kind: "start",
          streamId: stringOf(s.streamSid ?? m.streamSid, "start.streamSid"),
          callId: stringOf(s.callSid, "start.callSid"),
          // The start message has no numbers: the webhook passes them as <Parameter>s.
          from: params.from,
          to: params.to,
          params,
          ...format,
        };
      }
      case "media":
        return mediaEvent(m, event, true);
      case "dtmf": {
        const dtmf = objectOf(m.dtmf, "dtmf");
        // Twilio reports a key once, without its duration.
        return { kind: "dtmf", digit: stringOf(dtmf.digit, "dtmf.digit"), durationMs: 0 };
      }
      case "mark":
        return { kind: "played", name: stringOf(objectOf(m.mark, "mark").name, "mark.name") };
      case "stop":
        return { kind: "stop" };
      default:
        return { kind: "other", event };
    }
  },
  unreadableFormat: unlessMulaw8k,
  media: (streamSid, payload) => ({ event: "media", streamSid, media: { payload } }),
  mark: (streamSid, name) => ({ event: "mark", streamSid, mark: { name } }),
  clear: (streamSid) => ({ event: "clear", streamSid }),
};
