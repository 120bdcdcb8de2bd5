// RTC_PORTS confines a worker's WebRTC media to the ports a firewall opens: every ICE candidate
// of a real call's answer (UDP and passive TCP) is in the range, and the call runs over them
// (its data channel, which needs ICE and DTLS on those ports, says the bot is ready). A range
// with no port free refuses the offer 503 no_media_port, and the token still starts the call once
// a port frees.
import { createSocket, type Socket } from "node:dgram";
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import { startWorkerProcess } from "./helpers/process.ts";
import { CallerHttpError, TestCaller } from "../caller/caller.ts";

/**
 * (protocol, port) of each candidate an SDP asks the other end to send to. An active TCP
 * candidate listens nowhere: it carries the discard port 9 (RFC 6544 §4.5), so it is left out.
 */
function candidates(sdp: string): { protocol: string; port: number }[] {
  return [...sdp.matchAll(/^a=candidate:\S+ \d+ (\w+) \d+ \S+ (\d+) typ.*$/gm)]
    .filter((m) => !/ tcptype active\b/.test(m[0]))
    .map((m) => ({ protocol: m[1].toLowerCase(), port: Number(m[2]) }));
}

/** A fresh range of `size` ports below the ephemeral ones (32768 and up), where few sockets sit. */
function freshRange(size: number): [number, number] {
  const first = 20000 + size * Math.floor(Math.random() * Math.floor(10000 / size));
  return [first, first + size - 1];
}

/** A worker on `range` with ICE-TCP, an API and a tenant whose connects start echo calls. */
async function workerOn([first, last]: [number, number]) {
  const api = await startTestApi({}, { node: false });
  const worker = await startWorkerProcess(api.db.url, undefined, {
    RTC_PORTS: `${first}-${last}`,
    ICE_TCP: "on",
  });
  const acme = await makeTenant(api, "acme", { brain_url: "echo:" });
  const connect = async () => {
    const r = await api.post("/api/v1/sessions.connect", { agent_id: acme.agent_id }, acme.sk);
    assertEquals(r.status, 200);
    const params = r.body.webrtc_request_params;
    return { offerUrl: params.endpoint as string, headers: params.headers };
  };
  const stop = async () => {
    await worker.stop();
    await api.close();
  };
  return { worker, connect, stop };
}

Deno.test("a call's ICE candidates, UDP and TCP, fall in RTC_PORTS and the call connects over them", async () => {
  const [first, last] = freshRange(41);
  const { connect, stop } = await workerOn([first, last]);
  let caller: TestCaller | undefined;
  try {
    caller = await TestCaller.connect(await connect());
    await caller.ready();
    const answer = caller.pc.remoteDescription?.sdp ?? "";
    const found = candidates(answer);
    // One UDP socket and one TCP listener for the call (each m-line of the bundle names them
    // again): it gathers on ICE_ADDRESSES alone.
    const sockets = [...new Set(found.map((c) => `${c.protocol} ${c.port}`))];
    assertEquals(sockets.map((s) => s.split(" ")[0]).sort(), ["tcp", "udp"], answer);
    for (const c of found) {
      assert(c.port >= first && c.port <= last, `${c.protocol} ${c.port} not in ${first}-${last}`);
    }
  } finally {
    await caller?.hangUp().catch(() => {});
    await stop();
  }
});

/** Holds `port` on 127.0.0.1, UDP and TCP, as another program would. */
async function hold(port: number): Promise<{ release(): Promise<void> }> {
  const udp: Socket = createSocket("udp4");
  await new Promise<void>((resolve, reject) => {
    udp.once("error", reject);
    udp.once("listening", () => resolve());
    udp.bind({ port, address: "127.0.0.1" });
  });
  const tcp = Deno.listen({ hostname: "127.0.0.1", port });
  return {
    async release() {
      tcp.close();
      await new Promise<void>((r) => udp.close(() => r()));
    },
  };
}

Deno.test("a worker whose RTC_PORTS are all taken refuses the offer 503 no_media_port, and the token starts the call once a port frees", async () => {
  const range = freshRange(2);
  const held = [await hold(range[0]), await hold(range[1])];
  const { worker, connect, stop } = await workerOn(range);
  let caller: TestCaller | undefined;
  try {
    const params = await connect();
    const refused = await TestCaller.connect(params).then(
      (c) => (caller = c, undefined),
      (e) => e,
    );
    assert(refused instanceof CallerHttpError, `not refused: ${refused}`);
    assertEquals(refused.status, 503);
    assertEquals(JSON.parse(refused.body).error.code, "no_media_port");
    assert(worker.child.output().includes("offer refused: no media port"), "the refusal is logged");

    await held[0].release();
    caller = await TestCaller.connect(params);
    await caller.ready();
    const ports = candidates(caller.pc.remoteDescription?.sdp ?? "").map((c) => c.port);
    assertEquals([...new Set(ports)], [range[0]], "the freed port");
  } finally {
    await caller?.hangUp().catch(() => {});
    await stop();
    await Promise.all(held.map((h) => h.release().catch(() => {})));
  }
});
