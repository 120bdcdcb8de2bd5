// Plivo Audio Streams, bidirectional (`<Stream bidirectional="true">`), as documented in "Stream
// Event Protocol": https://www.plivo.com/docs/voice/audio-streaming/audio-streaming and the
// `<Stream>` element: https://www.plivo.com/docs/voice/xml/the-stream-element
// From Plivo: start (start.callId, streamId, mediaFormat), media (media.track, timestamp as Unix
// ms, chunk, base64 payload), dtmf (dtmf.digit), playedStream (a checkpoint was played),
// clearedAudio. No stop message: the stream ends when Plivo closes the socket. To Plivo: playAudio
// (media.contentType audio/x-mulaw, sampleRate 8000, payload), checkpoint, clearAudio.
import {
  audioFormatOf,
  dtmfEvent,
  mediaEvent,
  objectOf,
  type StreamDialect,
  type StreamEvent,
  stringOf,
  unlessMulaw8k,
} from "../dialect.ts";

export const plivoDialect: StreamDialect = {
  carrier: "plivo",
  audio: "mulaw",
  framesPerMessage: 1,
  read(message: unknown): StreamEvent {
    const m = objectOf(message, "message");
    const event = stringOf(m.event, "event");
    switch (event) {
      case "start": {
        const s = objectOf(m.start, "start");
        const format = audioFormatOf(
          s.mediaFormat,
          "start.mediaFormat",
          "sampleRate",
          "audio/x-mulaw",
        );
        return {
          kind: "start",
          streamId: stringOf(s.streamId ?? m.streamId, "start.streamId"),
          callId: stringOf(s.callId, "start.callId"),
          // The numbers are not in the stream: they come with the session (the answer webhook).
          params: {},
          ...format,
        };
      }
      case "media":
        return mediaEvent(m, event, true);
      case "dtmf":
        return dtmfEvent(m);
      case "playedStream":
        return { kind: "played", name: stringOf(m.name, "name") };
      case "clearedAudio":
        return { kind: "cleared" };
      // Not in Plivo's list, but harmless to honour should it come.
      case "stop":
        return { kind: "stop" };
      default:
        return { kind: "other", event };
    }
  },
  unreadableFormat: unlessMulaw8k,
  media: (_streamId, payload) => ({
    event: "playAudio",
    media: { contentType: "audio/x-mulaw", sampleRate: 8000, payload },
  }),
  mark: (streamId, name) => ({ event: "checkpoint", streamId, name }),
  clear: (streamId) => ({ event: "clearAudio", streamId }),
};
