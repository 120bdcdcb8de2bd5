// Sarvam's Saaras recognition against what every recognition provider must do
// (tests/conformance/), on the fake of its documented realtime socket.
import { setQuiet } from "../../../common/log.ts";
import { recognitionConformance } from "../../../tests/conformance/stt.ts";
import { startFakeSarvamStt } from "../../../tests/fakes/sarvam_stt.ts";
import { SarvamRecognitionEngine } from "./stt.ts";

setQuiet(true);

recognitionConformance({
  provider: "Sarvam",
  fake({ dropFirstUtteranceAfterMs, ...behaviour }) {
    const fake = startFakeSarvamStt({
      ...behaviour,
      faults: dropFirstUtteranceAfterMs === undefined
        ? []
        : [{ utterance: 0, kind: "drop", afterMs: dropFirstUtteranceAfterMs }],
    });
    const { connections, refused } = fake.received;
    return {
      url: fake.url,
      opened: () => connections.length + refused.length,
      heard() {
        const parts = connections.map((c) => fake.audioOf(c));
        const all = new Int16Array(parts.reduce((n, a) => n + a.length, 0));
        parts.reduce((at, a) => (all.set(a, at), at + a.length), 0);
        return all;
      },
      dropped: () => connections[0]?.closeCode !== undefined,
      close: () => fake.close(),
    };
  },
  engine: (url, options) => new SarvamRecognitionEngine({ url, ...options }),
  language: "LANGUAGE_HI",
  unservedLanguage: "LANGUAGE_FR",
});
