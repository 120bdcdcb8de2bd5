// Hostile input at sessions.connect (the CI-sized sample of `deno task fuzz`'s connect surface,
// same generators): bodies and headers through fetch, and requests fetch will not send written
// raw on a socket (Content-Length lies, conflicting framing, control characters, header blocks
// past Deno's limits, unknown methods). Per input: no 5xx, every refusal in the error envelope
// (or, for HTTP-level garbage only, Deno's own bare 400), a 200 writes exactly one session and
// one usage row, a refusal writes nothing. Over the sample: the API's own metric counts no 5xx,
// including answers to clients that had gone away.
import fc from "fast-check";
import { assert, assertEquals } from "./helpers/assert.ts";
import {
  checkConnectInput,
  type ConnectTarget,
  serverFiveXX,
  startConnectTarget,
} from "../bench/fuzz/surfaces/connect.ts";
import { connectInput, fetchInput, rawInput } from "../bench/fuzz/gen/connect.ts";
import { rawRequest } from "../bench/fuzz/raw_http.ts";
import { installGuard, takeEscapes } from "../bench/fuzz/guard.ts";

const RUNS = Number(Deno.env.get("HOSTILE_CONNECT_RUNS") ?? 80);

async function property(
  target: ConnectTarget,
  arb: fc.Arbitrary<Parameters<typeof checkConnectInput>[1]>,
  runs: number,
) {
  await fc.assert(
    fc.asyncProperty(arb, async (input) => {
      const v = await checkConnectInput(target, input);
      assertEquals(v.violations, [], `${input.note} → ${v.tag}`);
    }),
    { numRuns: runs },
  );
}

Deno.test("sessions.connect: hostile bodies, headers and raw requests", async (t) => {
  installGuard();
  const target = await startConnectTarget();
  try {
    const fiveBefore = await serverFiveXX(target);
    await t.step(
      "bodies under hostile headers (fetch)",
      () => property(target, fetchInput(target.tenant), RUNS),
    );
    await t.step("requests written raw", () => property(target, rawInput(target.tenant), RUNS / 2));
    await t.step("both, mixed", () => property(target, connectInput(target.tenant), RUNS / 4));

    await t.step("a body cut short of its Content-Length is a 400, never a 500", async () => {
      const body = JSON.stringify({ agent_id: target.tenant.agent_id });
      const head = `POST /api/v1/sessions.connect HTTP/1.1\r\nHost: x\r\n` +
        `Authorization: Bearer ${target.tenant.sk}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length + 100}\r\n\r\n`;
      const r = await rawRequest(target.port, {
        bytes: new TextEncoder().encode(head + body),
        after: "half",
      });
      // Deno drops the answer on a half-closed connection; whatever it answered, it was no 5xx.
      assert(r.status === 0 || r.status === 400, `${r.status} ${r.body}`);
    });

    await t.step("a key holding an unpaired surrogate is a 400 naming it, not a 500", async () => {
      // Found by the bench: such a key passed validation and PostgreSQL's json refused it.
      const r = await fetch(`${target.api.url}/api/v1/sessions.connect`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${target.tenant.sk}`,
          "content-type": "application/json",
        },
        body: `{"agent_id":"${target.tenant.agent_id}","init":{"a":{"x\\udc00y":1}}}`,
      });
      const body = await r.json();
      assertEquals([r.status, body.error.code], [400, "invalid_request"]);
      assertEquals(body.error.details.field, "init.a.x\udc00y");
    });

    await t.step("the API answered no 5xx, not even to clients that had gone away", async () => {
      assertEquals((await serverFiveXX(target)) - fiveBefore, 0);
      assertEquals(takeEscapes(), []);
    });
  } finally {
    await target.api.close();
  }
});
