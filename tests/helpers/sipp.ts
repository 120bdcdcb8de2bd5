// Runs SIPp 3.6 (Debian sip-tester, /usr/bin/sipp) as a real SIP peer: a scenario written into a
// temp dir, one call against 127.0.0.1:<port>, on free local ports so parallel runs do not collide.
import dgram from "node:dgram";
import { assertEquals } from "./assert.ts";
import { drawPort } from "./process.ts";

export const SIPP = "/usr/bin/sipp";

export interface SippRun {
  /** 0: every call passed its scenario; 1: a call failed (an unexpected or missing message). */
  code: number;
  /** SIPp's own log of what went wrong, and the messages it sent and received. */
  errors: string;
  messages: string;
}

/** Fails the test unless every call of `run` passed its scenario, with SIPp's logs as the reason. */
export function assertSippPassed(run: SippRun): void {
  assertEquals(run.code, 0, `SIPp failed:\n${run.errors}\n${run.messages}`);
}

/** A UDP port free right now (SIPp binds its own: it takes a number, not a socket). */
export async function freeUdpPort(): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    // Drawn as freePort draws (below the ephemeral range), and free for TCP too: a worker's
    // SIP_PORT listens on both.
    const port = drawPort();
    const socket = dgram.createSocket("udp4");
    const bound = await new Promise<boolean>((ok) => {
      socket.once("error", () => ok(false));
      socket.bind(port, "127.0.0.1", () => ok(true));
    });
    await new Promise<void>((ok) => {
      try {
        socket.close(() => ok());
      } catch {
        ok(); // a socket that never bound is not running
      }
    });
    if (!bound) continue;
    try {
      Deno.listen({ hostname: "127.0.0.1", port }).close();
      return port;
    } catch { /* taken for TCP: draw again */ }
  }
  throw new Error("no free UDP port below the ephemeral range");
}

/**
 * The first of `count` consecutive UDP ports free right now. SIPp's `-mp` port is the first of
 * four it binds (audio RTP and RTCP, then video RTP and RTCP at +2 and +3, used or not): with only
 * the first checked, CI saw SIPp fail "Unable to bind video RTP socket" on a port a worker held.
 * The UDP twin of tests/helpers/process.ts freePortRun (TCP, synchronous: Deno.listen).
 */
export async function freeUdpPortRun(count: number): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const first = await freeUdpPort();
    if (first + count > 65536) continue;
    const held: dgram.Socket[] = [];
    try {
      for (let i = 1; i < count; i++) {
        // Held before it binds, so a socket whose port was taken is closed too.
        const socket = dgram.createSocket("udp4");
        held.push(socket);
        await new Promise<void>((ok, fail) => {
          socket.once("error", fail);
          socket.bind(first + i, "127.0.0.1", ok);
        });
      }
      return first;
    } catch {
      // One of the run is taken: try another first port.
    } finally {
      for (const socket of held) await new Promise<void>((ok) => socket.close(() => ok()));
    }
  }
  throw new Error(`no ${count} consecutive free UDP ports found`);
}

/**
 * Plays `scenario` (SIPp XML) once against `port`, dialling `service` (the Request-URI user), over
 * UDP or one TCP connection.
 */
export async function runSipp(
  scenario: string,
  port: number,
  service: string,
  transport: "udp" | "tcp" = "udp",
  /** More SIPp arguments (e.g. -au/-ap for the [authentication] keyword). */
  extra: string[] = [],
): Promise<SippRun> {
  const dir = await Deno.makeTempDir({ prefix: "sipp-" });
  try {
    await Deno.writeTextFile(`${dir}/scenario.xml`, scenario);
    const [local, media] = [await freeUdpPort(), await freeUdpPortRun(4)];
    const out = await new Deno.Command(SIPP, {
      args: [
        `127.0.0.1:${port}`,
        ...["-sf", `${dir}/scenario.xml`, "-s", service, "-m", "1", "-l", "1"],
        ...["-t", transport === "udp" ? "u1" : "t1"],
        ...["-i", "127.0.0.1", "-p", String(local), "-mp", String(media)],
        ...["-timeout", "30", "-timeout_error", "-recv_timeout", "10000", "-nostdin"],
        ...["-trace_err", "-error_file", `${dir}/errors.log`],
        ...["-trace_msg", "-message_file", `${dir}/messages.log`],
        ...extra,
      ],
      cwd: dir,
      stdout: "null",
      stderr: "piped",
    }).output();
    const read = (f: string) => Deno.readTextFile(`${dir}/${f}`).catch(() => "");
    return {
      code: out.code,
      errors: await read("errors.log"),
      messages: await read("messages.log"),
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Plays `scenario` (SIPp XML, starting with a `<recv>`) once as a SIP trunk listening on
 * 127.0.0.1:`port` over UDP (or TCP, `-t t1`): the worker's outbound INVITE comes to it. Resolves
 * when the call's scenario ends (or fails, or no INVITE came in `-timeout`).
 */
export async function runSippTrunk(
  scenario: string,
  port: number,
  /** More SIPp arguments. */
  extra: string[] = [],
  transport: "udp" | "tcp" = "udp",
): Promise<SippRun> {
  const dir = await Deno.makeTempDir({ prefix: "sipp-trunk-" });
  try {
    await Deno.writeTextFile(`${dir}/scenario.xml`, scenario);
    const media = await freeUdpPortRun(4);
    const out = await new Deno.Command(SIPP, {
      args: [
        ...["-sf", `${dir}/scenario.xml`, "-m", "1", "-t", transport === "udp" ? "u1" : "t1"],
        ...["-i", "127.0.0.1", "-p", String(port), "-mp", String(media)],
        ...["-timeout", "40", "-timeout_error", "-nostdin"],
        ...["-trace_err", "-error_file", `${dir}/errors.log`],
        ...["-trace_msg", "-message_file", `${dir}/messages.log`],
        ...extra,
      ],
      cwd: dir,
      stdout: "null",
      stderr: "piped",
    }).output();
    const read = (f: string) => Deno.readTextFile(`${dir}/${f}`).catch(() => "");
    return {
      code: out.code,
      errors: (await read("errors.log")) + new TextDecoder().decode(out.stderr),
      messages: await read("messages.log"),
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

export interface SippTrunkServer {
  /** Asks SIPp to stop (SIGUSR1: no new calls, exit once its calls end), then its logs. */
  stop(): Promise<SippRun>;
}

/**
 * SIPp as a SIP trunk taking any number of calls on 127.0.0.1:`port` over UDP, each played by
 * `scenario`, until stop(): for campaigns and benches, where the number of calls is not one.
 * Its message log (-trace_msg) holds every INVITE it received (countInvites reads it).
 */
export async function startSippTrunk(
  scenario: string,
  port: number,
  extra: string[] = [],
): Promise<SippTrunkServer> {
  const dir = await Deno.makeTempDir({ prefix: "sipp-trunk-" });
  await Deno.writeTextFile(`${dir}/scenario.xml`, scenario);
  const media = await freeUdpPortRun(4);
  const child = new Deno.Command(SIPP, {
    args: [
      ...["-sf", `${dir}/scenario.xml`, "-t", "u1"],
      ...["-i", "127.0.0.1", "-p", String(port), "-mp", String(media)],
      ...["-nostdin", "-max_recv_loops", "10000"],
      ...["-trace_err", "-error_file", `${dir}/errors.log`],
      ...["-trace_msg", "-message_file", `${dir}/messages.log`],
      ...extra,
    ],
    cwd: dir,
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  return {
    async stop() {
      try {
        child.kill("SIGUSR1");
      } catch { /* already gone */ }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const killed = new Promise<void>((ok) =>
        timer = setTimeout(() => {
          try {
            child.kill("SIGKILL");
          } catch { /* gone */ }
          ok();
        }, 20_000)
      );
      const out = await Promise.race([output, killed.then(() => output)]);
      clearTimeout(timer);
      const read = (f: string) => Deno.readTextFile(`${dir}/${f}`).catch(() => "");
      const run = {
        code: out.code,
        errors: (await read("errors.log")) + new TextDecoder().decode(out.stderr),
        messages: await read("messages.log"),
      };
      await Deno.remove(dir, { recursive: true });
      return run;
    },
  };
}

/**
 * The INVITEs in a SIPp message log (-trace_msg) that SIPp received, one per Call-ID (a
 * retransmission or a challenged INVITE's second try is the same call): the count per dialled
 * number (the Request-URI's user).
 */
export function countInvites(messages: string): Map<string, number> {
  const seen = new Set<string>();
  const counts = new Map<string, number>();
  // Each message follows a line of dashes and the time, then "UDP message received [n] bytes :".
  for (const chunk of messages.split(/^-{20,} .*$/m)) {
    const m = /^\s*\w+ message received \[\d+\] bytes :\s*INVITE sip:([^@;>\s]+)@/.exec(chunk);
    if (!m) continue;
    const callId = /^Call-ID:\s*(\S+)/im.exec(chunk)?.[1];
    if (!callId || seen.has(callId)) continue;
    seen.add(callId);
    counts.set(m[1], (counts.get(m[1]) ?? 0) + 1);
  }
  return counts;
}
