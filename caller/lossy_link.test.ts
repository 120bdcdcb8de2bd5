import { assert, assertEquals, assertThrows } from "../tests/helpers/assert.ts";
import { impairedLink, parseLoss } from "./lossy_link.ts";

/** Runs `n` packets out through the link's filter; returns which were lost. */
function losses(link: ReturnType<typeof impairedLink>, n: number): boolean[] {
  // deno-lint-ignore no-explicit-any
  const sent: any[] = [];
  const transport = {
    send: (d: Uint8Array) => (sent.push(d), Promise.resolve()),
    onData: () => {},
  };
  const pc = { iceTransports: [{ connection: { protocols: [{ transport }] } }] };
  // deno-lint-ignore no-explicit-any
  link.attach(pc as any);
  const lost: boolean[] = [];
  for (let i = 0; i < n; i++) {
    const before = sent.length;
    transport.send(new Uint8Array([128, i & 0xff]));
    lost.push(sent.length === before);
  }
  return lost;
}

const runs = (lost: boolean[]) => {
  const out: number[] = [];
  let run = 0;
  for (const l of lost) {
    if (l) run++;
    else if (run) (out.push(run), run = 0);
  }
  return out;
};

Deno.test("bursty loss keeps the asked rate and loses packets in runs of about the asked length", () => {
  const lost = losses(impairedLink({ loss: 0.05, burst: 4, jitterMs: 0, seed: 3 }), 200_000);
  const rate = lost.filter(Boolean).length / lost.length;
  assert(Math.abs(rate - 0.05) < 0.005, `rate ${rate}`);
  const r = runs(lost);
  const mean = r.reduce((a, b) => a + b, 0) / r.length;
  assert(Math.abs(mean - 4) < 0.3, `mean run ${mean}`);
});

Deno.test("random loss without bursts loses packets mostly one at a time", () => {
  const lost = losses(impairedLink({ loss: 0.05, burst: 1, jitterMs: 0, seed: 3 }), 200_000);
  const r = runs(lost);
  const mean = r.reduce((a, b) => a + b, 0) / r.length;
  assert(mean < 1.1, `mean run ${mean}`);
});

Deno.test("--loss takes a percentage and an optional mean burst, and refuses anything else", () => {
  assertEquals(parseLoss("10"), { loss: 0.1, burst: 1 });
  assertEquals(parseLoss("5,3"), { loss: 0.05, burst: 3 });
  for (const bad of ["", "x", "-1", "100", "5,0", "5,2,1", "5,y"]) {
    assertThrows(() => parseLoss(bad), Error);
  }
});
