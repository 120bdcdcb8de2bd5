// Plivo Audio Streams, bidirectional (`<Stream bidirectional="true">`), as documented in "Stream
// Event Protocol": https://www.plivo.com/docs/voice/audio-streaming/audio-streaming and the
// `<Stream>` element: https://www.plivo.com/docs/voice/xml/the-stream-element
// From Plivo: start (start.callId, streamId, mediaFormat), media (media.track, timestamp as Unix
// ms, chunk, base64 payload), dtmf (dtmf.digit), playedStream (a checkpoint was played),
// clearedAudio. No stop message: the stream ends when Plivo closes the socket. To Plivo: playAudio
// (media.contentType and sampleRate as the stream's, payload), checkpoint, clearAudio.
// Formats (`contentType`): audio/x-mulaw at 8 kHz, or audio/x-l16 at 8 or 16 kHz
// (https://www.plivo.com/docs/voice/xml/the-stream-element/play-audio-event). Plivo does not state
// L16's byte order; little-endian is read and sent, as from the FreeSWITCH it streams from and as
// Exotel documents for its PCM (to be confirmed on a real Plivo call).
import {
  audioFormatOf,
  dtmfEvent,
  type LineFormat,
  mediaEvent,
  objectOf,
  type StreamDialect,
  type StreamEvent,
  stringOf,
  unlessMulaw8k,
} from "../dialect.ts";

const isL16 = (encoding: string) => /l16/i.test(encoding);

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
  unreadableFormat(start) {
    if (isL16(start.encoding) && (start.sampleRate === 8000 || start.sampleRate === 16000)) {
      return undefined;
    }
    return unlessMulaw8k(start) &&
      `the stream is ${start.encoding} at ${start.sampleRate} Hz; only audio/x-mulaw at 8000 Hz ` +
        "and audio/x-l16 at 8000 or 16000 Hz are read";
  },
  formatOf: (start): LineFormat =>
    isL16(start.encoding)
      ? { audio: "slin16", rate: start.sampleRate === 16000 ? 16000 : 8000 }
      : { audio: "mulaw", rate: 8000 },
  media: (_streamId, payload, format) => ({
    event: "playAudio",
    media: {
      contentType: format.audio === "mulaw" ? "audio/x-mulaw" : "audio/x-l16",
      sampleRate: format.rate,
      payload,
    },
  }),
  mark: (streamId, name) => ({ event: "checkpoint", streamId, name }),
  clear: (streamId) => ({ event: "clearAudio", streamId }),
};
