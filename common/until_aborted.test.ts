import { assertEquals } from "../tests/helpers/assert.ts";
import { untilAborted } from "./until_aborted.ts";

const failure = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);

Deno.test("a wait that never ends on its own ends with the signal's reason", async () => {
  const ac = new AbortController();
  const waiting = untilAborted(new Promise<number>(() => {}), ac.signal);
  const reason = new Error("stalled");
  ac.abort(reason);
  assertEquals(await failure(waiting), reason);
});

Deno.test("a wait that ends first keeps its own outcome and leaves no listener behind", async () => {
  const ac = new AbortController();
  let listening = 0;
  const { signal } = ac;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = (...a: Parameters<typeof add>) => (listening++, add(...a));
  signal.removeEventListener = (...a: Parameters<typeof remove>) => (listening--, remove(...a));
  assertEquals(await untilAborted(Promise.resolve(7), signal), 7);
  const own = new Error("own");
  assertEquals(await failure(untilAborted(Promise.reject(own), signal)), own);
  assertEquals(listening, 0);
});

Deno.test("an already aborted signal rejects at once; the wait's later failure is not left unhandled", async () => {
  const ac = new AbortController();
  const before = new Error("before");
  ac.abort(before);
  let fail!: (e: Error) => void;
  const later = new Promise<number>((_, reject) => (fail = reject));
  assertEquals(await failure(untilAborted(later, ac.signal)), before);
  fail(new Error("later")); // an unhandled rejection would fail this test
  await new Promise((r) => setTimeout(r, 0));
});
