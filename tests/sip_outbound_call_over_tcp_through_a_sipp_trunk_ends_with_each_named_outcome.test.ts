// Outbound calls to a trunk whose transport is TCP (RFC 3261 18.1.1): a real worker process dials
// SIPp 3.6 listening on TCP (`-t t1`), with the same trunk scenarios as over UDP
// (tests/helpers/sipp_trunk.ts). The INVITE goes on the worker's connection with `Via:
// SIP/2.0/TCP` and a `;transport=tcp` Contact, once (no Timer A), the answers come back on it, and
// the ACK, the callee's BYE and its 200 use it too. A trunk address where nothing listens fails the
// dial at once.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { startCallService } from "./helpers/call_harness.ts";
import { assertSippPassed, freeUdpPort, runSippTrunk, type SippRun } from "./helpers/sipp.ts";
import { answersThenHangsUp, challengesThenAnswers, refusesWith } from "./helpers/sipp_trunk.ts";
import { PhoneCaller } from "./helpers/phone_caller.ts";
import { sessionLog } from "./helpers/live_call.ts";
import { createBrain } from "../sdk/brain/mod.ts";
import { rms } from "../caller/wav.ts";

const CALLEE = "+15550123";
const USER = "trunkuser";
const PASSWORD = "s3cret-pass";

const loudFrames = (pcm: Int16Array, level = 500) => {
  let n = 0;
  for (let i = 0; i + 160 <= pcm.length; i += 160) if (rms(pcm, i, i + 160) > level) n++;
  return n;
};

/** A free TCP port on 127.0.0.1 (SIPp's -p is also its TCP port with -t t1). */
function freeTcpPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** The messages SIPp received over TCP, by their first line. */
const received = (messages: string) =>
  messages.split(/^-{20,} .*$/m)
    .map((c) => /^\s*TCP message received \[\d+\] bytes :\s*(.*)$/m.exec(c))
    .filter((m) => m !== null)
    .map((m) => m![1].trim());

interface Row {
  status: string;
  end_reason: string | null;
  dial_state: string | null;
}

Deno.test("an outbound call to a TCP trunk ends with the outcome each answer names", async (t) => {
  const brain = createBrain({
    onSessionStart: () => "Hello, this is the hotel calling about your booking.",
    onTurn: () => "Thank you.",
  });
  const sipPort = await freeUdpPort();
  const service = await startCallService(brain, { workerEnv: { SIP_PORT: String(sipPort) } });
  const sql = service.api.db.sql;

  const outboundSession = async () => {
    const r = await service.api.post(
      "/api/v1/sessions.connect",
      { agent_id: service.tenant.agent_id },
      service.tenant.sk,
    );
    assertEquals(r.status, 200);
    const id = r.body.session_id as string;
    await sql`update sessions set direction = 'outbound' where id = ${id}`;
    const token = (r.body.webrtc_request_params.headers.Authorization as string).slice(7);
    return { id, token };
  };
  const row = async (id: string) =>
    (await sql<Row[]>`select status, end_reason, dial_state from sessions where id = ${id}`)[0];
  const ended = async (id: string, ms = 20_000) => {
    const until = Date.now() + ms;
    for (;;) {
      const r = await row(id);
      if (r.status === "ended" || r.status === "failed") return r;
      if (Date.now() > until) {
        throw new Error(`session is ${r.status}\n${service.worker.child.output()}`);
      }
      await new Promise((res) => setTimeout(res, 100));
    }
  };
  const dial = async (trunkPort: number, credentials = {}) => {
    const s = await outboundSession();
    const res = await fetch(`${service.worker.url}/sessions/${s.id}/dial`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        to: CALLEE,
        from: "+15550100",
        trunk: {
          trunk_id: "trunk-tcp",
          address: `127.0.0.1:${trunkPort}`,
          transport: "tcp",
          ...credentials,
        },
        ring_timeout_seconds: 30,
        machine_detection: "off",
      }),
    });
    assertEquals(res.status, 202, await res.clone().text());
    await res.body?.cancel();
    return s.id;
  };
  /** SIPp plays `scenario` as a TCP trunk; the dial goes to it; SIPp's run and the row. */
  const call = async (
    scenario: string,
    credentials = {},
  ): Promise<{ run: SippRun; row: Row; id: string }> => {
    const trunkPort = freeTcpPort();
    const sipp = runSippTrunk(scenario, trunkPort, [], "tcp");
    await new Promise((r) => setTimeout(r, 300)); // SIPp binds its port
    const id = await dial(trunkPort, credentials);
    const run = await sipp;
    const r = await ended(id).catch((err) => {
      throw new Error(`${err.message}\nSIPp:\n${run.errors}\n${run.messages}`);
    });
    return { run, row: r, id };
  };
  /** The worker's INVITE as SIPp logged it: TCP in the Via and the Contact. */
  const assertTcpInvite = (messages: string) => {
    const invite = messages.split(/^-{20,} .*$/m).find((c) => /received.*\s*INVITE sip:/.test(c));
    assert(invite, messages);
    assertMatch(invite, /^Via: SIP\/2\.0\/TCP 127\.0\.0\.1:\d+;branch=z9hG4bK/m);
    assertMatch(invite, /^Contact: <sip:127\.0\.0\.1:\d+;transport=tcp>/m);
  };

  try {
    await t.step(
      "answered: ACK on the connection, greeting RTP heard, the callee's BYE ends it",
      async () => {
        const phone = await PhoneCaller.open();
        try {
          const t0 = performance.now();
          const running = call(answersThenHangsUp(phone.port, 6_000));
          await phone.start();
          const { run, row, id } = await running;
          assertSippPassed(run);
          assertEquals(row, {
            status: "ended",
            end_reason: "caller_hung_up",
            dial_state: "answered",
          });
          assert(
            loudFrames(phone.audioSince(t0)) > 25,
            "no greeting audio reached the trunk's RTP",
          );
          assertTcpInvite(run.messages);
          // Everything SIPp got came over TCP: the INVITE once, its ACK, the 200 to its BYE.
          assertEquals(received(run.messages).map((l) => l.split(" ")[0]), [
            "INVITE",
            "ACK",
            "SIP/2.0",
          ]);
          const sip = (await sessionLog(sql, id)).filter((e) => e.source === "sip").map((e) =>
            e.kind
          );
          assertEquals(sip.slice(0, 3), ["dial", "ringing", "answered"]);
        } finally {
          await phone.close();
        }
      },
    );

    await t.step("486 over TCP: busy, the 486 ACKed on the connection", async () => {
      const { run, row } = await call(refusesWith("486 Busy Here", ["100 Trying", "180 Ringing"]));
      assertSippPassed(run);
      assertEquals([row.status, row.end_reason, row.dial_state], ["ended", "busy", "ringing"]);
      assertTcpInvite(run.messages);
    });

    await t.step(
      "a 401 over TCP is answered with the trunk's credentials on the connection",
      async () => {
        const phone = await PhoneCaller.open();
        try {
          const running = call(challengesThenAnswers("401", USER, PASSWORD, phone.port), {
            username: USER,
            password: PASSWORD,
          });
          await phone.start();
          const { run, row } = await running;
          // SIPp's verifyauth checked the second INVITE's Authorization, or its call failed.
          assertSippPassed(run);
          assertEquals([row.status, row.end_reason, row.dial_state], [
            "ended",
            "caller_hung_up",
            "answered",
          ]);
          assertEquals(received(run.messages).filter((l) => l.startsWith("INVITE")).length, 2);
        } finally {
          await phone.close();
        }
      },
    );

    await t.step(
      "a trunk address where nothing listens: failed, dial_failed, at once",
      async () => {
        const started = Date.now();
        const id = await dial(freeTcpPort());
        const r = await ended(id, 5_000);
        assertEquals([r.status, r.end_reason, r.dial_state], ["failed", "dial_failed", "dialing"]);
        assert(Date.now() - started < 3_000, "the refused connect waited for Timer B");
        const dialEnded = (await sessionLog(sql, id)).find((e) => e.kind === "dial_ended");
        assertMatch(String(dialEnded?.data.sip), /^TCP connection: connect failed/);
        assertMatch(service.worker.child.output(), /SIP TCP connect failed/);
      },
    );
  } finally {
    await service.close();
  }
});
