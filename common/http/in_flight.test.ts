import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { countInFlight } from "./in_flight.ts";

const info = {} as Deno.ServeHandlerInfo;

Deno.test("idle waits for the requests in flight to be answered", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const flight = countInFlight(async () => {
    await gate;
    return new Response("done");
  });
  const answer = flight.fetch(new Request("http://x/"), info);
  assertEquals(flight.count, 1);
  let idle = false;
  const waiting = flight.idle(5_000).then((v) => (idle = v));
  await new Promise((r) => setTimeout(r, 20));
  assert(!idle, "idle before the request was answered");
  release();
  assertEquals(await (await answer).text(), "done");
  await waiting;
  assert(idle);
  assertEquals(flight.count, 0);
});

Deno.test("idle gives up after its timeout and says so; a thrown handler still counts down", async () => {
  const flight = countInFlight(() => new Promise<Response>(() => {}));
  flight.fetch(new Request("http://x/"), info);
  assertEquals(await flight.idle(30), false);
  const failing = countInFlight(() => Promise.reject(new Error("boom")));
  await Promise.resolve(failing.fetch(new Request("http://x/"), info)).catch(() => {});
  assertEquals([failing.count, await failing.idle(10)], [0, true]);
});
