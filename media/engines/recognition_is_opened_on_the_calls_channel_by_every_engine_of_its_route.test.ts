// A phone call's recognition is opened "narrowband" and a web call's "wideband"; the router
// passes the kind to every engine it opens for the stream, a fallback and a fresh reopening too
// (pocketsphinx starts a first utterance from that kind's prior, media/stt/seed_prior.ts). The
// engines are scripted stand-ins for the router's own test.
import { assertEquals } from "../../tests/helpers/assert.ts";
import {
  type ChannelKind,
  type RecognitionEngine,
  RecognitionError,
  type RecognitionOpenOptions,
  type RecognitionStream,
} from "../stt/engine.ts";
import { RecognitionRouter } from "./routing.ts";

/** Records the channel of every open; its finish fails while `failing` says so. */
class ChannelRecorder implements RecognitionEngine {
  kind = "local" as const;
  languages = ["LANGUAGE_EN"];
  opened: (ChannelKind | undefined)[] = [];
  failing = 0;
  constructor(readonly name: string) {}
  open(_language: string, options?: RecognitionOpenOptions): Promise<RecognitionStream> {
    this.opened.push(options?.channel);
    return Promise.resolve({
      push: () => {},
      onInterim: () => {},
      finish: () =>
        this.failing-- > 0
          ? Promise.reject(new RecognitionError(`${this.name} dropped`))
          : Promise.resolve({ text: this.name, audioMs: 20 }),
      close: () => {},
    });
  }
  close() {
    return Promise.resolve();
  }
}

Deno.test("a narrowband stream is opened narrowband on its fallback and its reopening too", async () => {
  const first = new ChannelRecorder("first"), second = new ChannelRecorder("second");
  const router = new RecognitionRouter([first, second], {});
  const stream = await router.open("LANGUAGE_EN", undefined, undefined, "narrowband");
  first.failing = 1;
  stream.push(new Int16Array(320));
  assertEquals((await stream.finish()).engine, "second", "fell back");
  second.failing = 1;
  stream.push(new Int16Array(320));
  assertEquals((await stream.finish()).engine, "second", "reopened");
  stream.close();
  assertEquals(first.opened, ["narrowband"]);
  assertEquals(second.opened, ["narrowband", "narrowband"]);
});

Deno.test("a stream opened without a channel is a web call's: wideband", async () => {
  const engine = new ChannelRecorder("only");
  const router = new RecognitionRouter([engine], {});
  (await router.open("LANGUAGE_EN")).close();
  assertEquals(engine.opened, ["wideband"]);
});
