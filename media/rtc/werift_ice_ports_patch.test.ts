// RTC_PORTS under contention: peers that gather at once hold one UDP port each, their own, in the
// range; a port another socket holds is passed over; a range with none free is a plain error.
// Without the patch the first test ends the test process ("Uncaught Error: bind EADDRINUSE"), and
// on a host with a network address besides loopback each peer held two ports or more.
import assert from "node:assert/strict";
import { createSocket, type Socket } from "node:dgram";
import { RTCPeerConnection } from "werift";
import { peerConfig } from "./config.ts";
import { listCandidates } from "./sdp.ts";
import { bindInRange } from "./werift_ice_ports_patch.ts";

/** A fresh range below the ephemeral ports (32768 and up), where other sockets rarely sit. */
function freshRange(size: number): [number, number] {
  const first = 20000 + size * Math.floor(Math.random() * Math.floor(10000 / size));
  return [first, first + size - 1];
}

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A socket bound to `port` on loopback, or undefined if something else has it. */
async function hold(port: number): Promise<Socket | undefined> {
  const s = createSocket("udp4");
  const ok = await new Promise<boolean>((resolve) => {
    s.once("error", () => resolve(false));
    s.once("listening", () => resolve(true));
    s.bind({ port, address: "127.0.0.1" });
  });
  if (ok) return s;
  s.close();
  return undefined;
}

const close = (s: Socket) => new Promise<void>((r) => s.close(() => r()));

Deno.test("peers gathering at once in one RTC_PORTS range hold one UDP port each, all different, and the process lives", async () => {
  const range = freshRange(64);
  const config = peerConfig({ iceAddresses: ["127.0.0.1"], icePortRange: range });
  const pcs = Array.from({ length: 8 }, () => new RTCPeerConnection(config));
  try {
    await Promise.all(pcs.map(async (pc) => {
      pc.addTransceiver("audio", { direction: "sendrecv" });
      await pc.setLocalDescription(await pc.createOffer());
    }));
    await until(() => pcs.every((pc) => pc.iceGatheringState === "complete"), "gathering");
    // Each UDP candidate names its own socket's port; the peers gather on 127.0.0.1 alone.
    const ports = pcs.flatMap((pc) =>
      listCandidates(pc.localDescription!.sdp)
        .map((c) => c.split(/\s+/))
        .filter((f) => f[2].toLowerCase() === "udp")
        .map((f) => Number(f[5]))
    );
    assert.equal(ports.length, pcs.length, `UDP candidates of ${pcs.length} peers: ${ports}`);
    assert.equal(new Set(ports).size, ports.length, `a port bound twice: ${ports}`);
    for (const p of ports) assert.ok(p >= range[0] && p <= range[1], `${p} not in ${range}`);
  } finally {
    await Promise.all(pcs.map((pc) => pc.close()));
  }
});

Deno.test("a port of the range another socket holds is passed over", async () => {
  const range = freshRange(4);
  const held: Socket[] = [];
  const socket = createSocket("udp4");
  try {
    for (let p = range[0]; p < range[1]; p++) {
      const s = await hold(p);
      if (s) held.push(s);
    }
    const port = await bindInRange(socket, "127.0.0.1", range);
    assert.equal(port, range[1], "the only port of the range not held");
    assert.equal(socket.address().port, port);
  } finally {
    await Promise.all([...held, socket].map(close));
  }
});

Deno.test("a range with no free port rejects by name and leaves the socket unbound", async () => {
  const range = freshRange(2);
  const held = (await Promise.all([hold(range[0]), hold(range[1])])).filter((s) => s !== undefined);
  const socket = createSocket("udp4");
  try {
    assert.equal(held.length, 2, "both ports of the range held");
    await assert.rejects(
      bindInRange(socket, "127.0.0.1", range),
      new Error(`no free UDP port in ${range[0]}-${range[1]}`),
    );
    assert.throws(() => socket.address());
  } finally {
    socket.close();
    await Promise.all(held.map(close));
  }
});
