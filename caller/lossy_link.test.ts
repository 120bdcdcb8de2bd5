import { assert, assertEquals, assertThrows } from "../tests/helpers/assert.ts";
import { gilbertStep, impairedLink, parseLoss } from "./lossy_link.ts";

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

Deno.test("reordering holds some packets back so they arrive behind later ones, losing none", async () => {
  const link = impairedLink({ loss: 0, burst: 1, jitterMs: 0, reorder: 0.02, seed: 5 });
  const sent: number[] = [];
  const transport = {
    send: (d: Uint8Array) => (sent.push(d[1] | (d[2] << 8)), Promise.resolve()),
    onData: () => {},
  };
  // deno-lint-ignore no-explicit-any
  link.attach({ iceTransports: [{ connection: { protocols: [{ transport }] } }] } as any);
  const n = 1000;
  // 20 ms apart, as an audio stream's packets leave.
  for (let i = 0; i < n; i++) {
    transport.send(new Uint8Array([128, i & 0xff, i >> 8]));
    await new Promise((r) => setTimeout(r, i % 10 === 0 ? 20 : 0));
  }
  await new Promise((r) => setTimeout(r, 200));
  assertEquals(sent.length, n);
  assertEquals([...sent].sort((a, b) => a - b), [...Array(n).keys()]);
  const late = sent.filter((s, i) => i > 0 && s < sent[i - 1]).length;
  assert(late >= 8 && late <= 35, `${late} packets arrived behind a later one`);
});

Deno.test("the Gilbert step keeps a lossy state's share at the rate and its runs at the burst", () => {
  let bad = false, lost = 0, runs = 0;
  let seed = 7;
  const draw = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
  for (let i = 0; i < 400_000; i++) {
    const next = gilbertStep(bad, 0.05, 4, draw());
    if (next) lost++;
    if (next && !bad) runs++;
    bad = next;
  }
  assert(Math.abs(lost / 400_000 - 0.05) < 0.004, `share ${lost / 400_000}`);
  assert(Math.abs(lost / runs - 4) < 0.3, `mean run ${lost / runs}`);
});
