// On a busy core the media thread (every call's 20 ms frames) must run before the engines'
// threads: recognition and synthesis threads lower their own priority, the media thread keeps its.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { threadNames } from "../../common/thread_name.ts";
import { ENGINE_THREAD_NICE, threadNiceValues } from "../../common/thread_priority.ts";
import { PocketsphinxEngine } from "../stt/pocketsphinx.ts";
import { EspeakEngine } from "../tts/espeak_engine.ts";

Deno.test("recognition and synthesis threads run at a lower priority than the media thread", async () => {
  const recognition = await PocketsphinxEngine.create({ threads: 1, spareDecoders: 0 });
  const synthesis = new EspeakEngine();
  try {
    await synthesis.ready;
    const names = threadNames(), nice = threadNiceValues();
    const niceOf = (name: string) =>
      [...names].filter(([, n]) => n === name).map(([tid]) => nice.get(tid));
    assertEquals(niceOf("recognition"), [ENGINE_THREAD_NICE]);
    assertEquals(niceOf("synthesis"), [ENGINE_THREAD_NICE]);
    assertEquals(nice.get(Deno.pid), 0);
  } finally {
    await synthesis.close();
    await recognition.close();
  }
});
