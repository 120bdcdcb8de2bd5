// SIP over TCP under half-open connections (issue 32): what 500 connections, each holding a
// partial SIP head, cost the process that listens (the transport the redirect server and the
// worker share, sip/tcp.ts), and how long they are held; and whether a slow-loris (a byte
// a second) is dropped. Each run starts a listener in a child process three times: as the
// transport read before issue 32 (its readable stream, no bounds: the baseline, measured in the
// same run), as it is now with its bounds off, and with the default bounds; and reports its RSS
// growth per connection and the connections still held 12 s later.
//
//   deno run -A bench/sip_tcp_half_open.ts            (about 60 s)
//
// Connections come from 20 loopback addresses (127.0.3.1-20, 25 each), under the per-source cap
// of 32, so the total is what is measured. Knob: BENCH_SIP_TCP_CONNECTIONS (500).
import net from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { DEFAULT_STREAM_BOUNDS, listenTcp, type StreamBounds } from "../sip/tcp.ts";
import { SipStreamFramer } from "../sip/stream.ts";

const COUNT = Number(Deno.env.get("BENCH_SIP_TCP_CONNECTIONS") ?? 500);
const OFF: StreamBounds = {
  messageTimeoutMs: 3_600_000,
  idleTimeoutMs: 3_600_000,
  perSource: 1_000_000,
  total: 1_000_000,
};

/**
 * The transport as it was before issue 32, for the baseline: each connection read through its
 * readable stream (Deno's own 64 KiB chunks) into the framer, with no deadline and no cap.
 */
function listenAsBefore(): { port: number; connections: number } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const state = { port: (listener.addr as Deno.NetAddr).port, connections: 0 };
  (async () => {
    for await (const conn of listener) {
      state.connections++;
      (async () => {
        const framer = new SipStreamFramer();
        try {
          for await (const chunk of conn.readable) framer.push(chunk);
        } catch { /* reset */ }
        state.connections--;
      })();
    }
  })();
  return state;
}

/** The child: a listener as argv names it, reporting RSS and connections. */
function child(mode: string) {
  const listener = mode === "before" ? listenAsBefore() : listenTcp(
    "127.0.0.1",
    0,
    { message: () => {}, broken: () => {} },
    mode === "off" ? OFF : DEFAULT_STREAM_BOUNDS,
  );
  console.log(JSON.stringify({ port: listener.port }));
  setInterval(() => {
    console.log(JSON.stringify({ rss: Deno.memoryUsage().rss, open: listener.connections }));
  }, 250);
}

interface Sample {
  rss: number;
  open: number;
}

async function run(mode: "before" | "bounded" | "off") {
  const proc = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", import.meta.filename!, "child", mode],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = proc.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  let latest: Sample = { rss: 0, open: 0 };
  let port = 0;
  const pump = (async () => {
    for (;;) {
      const { value, done } = await lines.read();
      if (done) return;
      buffered += value;
      let nl;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (!line.startsWith("{")) continue; // the listener's own log lines
        const msg = JSON.parse(line);
        if (msg.port) port = msg.port;
        else latest = msg;
      }
    }
  })();
  while (!port || !latest.rss) await sleep(50);
  await sleep(1000);
  const base = latest.rss;
  const head = "INVITE sip:+15550101@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1\r\n" +
    "X-Filler: " + "a".repeat(1000) + "\r\n"; // no blank line: the head never ends
  const sockets: net.Socket[] = [];
  for (let i = 0; i < COUNT; i++) {
    const s = net.connect({ host: "127.0.0.1", port, localAddress: `127.0.3.${(i % 20) + 1}` });
    s.on("error", () => {});
    s.write(head);
    sockets.push(s);
  }
  await sleep(2000);
  const loaded = latest;
  // A slow-loris beside them: one byte a second.
  const loris = net.connect({ host: "127.0.0.1", port, localAddress: "127.0.4.1" });
  let lorisClosedAt: number | undefined;
  const lorisStart = performance.now();
  loris.on("close", () => (lorisClosedAt = performance.now() - lorisStart));
  loris.on("error", () => {});
  const wire = head + "\r\n";
  let at = 0;
  const drip = setInterval(() => {
    if (!loris.destroyed) loris.write(wire[at++ % wire.length]);
  }, 1000);
  await sleep(12_000);
  const later = latest;
  const lorisDropped = lorisClosedAt; // before the bench closes it below
  clearInterval(drip);
  for (const s of sockets) s.destroy();
  loris.destroy();
  proc.kill();
  await pump.catch(() => {});
  await proc.status;
  return {
    mode,
    base_rss_mb: +(base / 1e6).toFixed(1),
    held_at_2s: loaded.open,
    rss_growth_mb: +((loaded.rss - base) / 1e6).toFixed(1),
    kb_per_connection: +((loaded.rss - base) / 1e3 / Math.max(1, loaded.open)).toFixed(1),
    held_at_14s: later.open,
    slow_loris_dropped_after_s: lorisDropped === undefined
      ? "not dropped"
      : +(lorisDropped / 1000).toFixed(1),
  };
}

if (Deno.args[0] === "child") child(Deno.args[1]);
else {
  const before = await run("before");
  const off = await run("off");
  const bounded = await run("bounded");
  console.table([before, off, bounded]);
  console.log(
    `held after 14 s: ${bounded.held_at_14s} of ${COUNT} bounded, ${off.held_at_14s} unbounded`,
  );
}
