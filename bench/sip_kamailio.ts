// Kamailio 5.6 (Debian `kamailio`) in two roles for bench/sip_redirect.ts, each run in the
// foreground in a temp dir on a free port (stop() ends it):
// - a SIP-aware balancer in front of workers: the dispatcher module picks a destination from a
//   list (by a hash of the Call-ID here; a real deployment would feed the list from node
//   heartbeats and probe with OPTIONS), tm relays the INVITE statefully, record-routed so
//   in-dialog requests come back through it;
// - the proxy an operator puts in front of the redirect server for a trunk that does not follow
//   3xx itself (docs/phone-numbers.md): it relays the INVITE to the redirect server and, on the
//   302, relays it again to the Contact (uac_redirect's get_redirects), record-routed.
import dgram from "node:dgram";
import { setTimeout as sleep } from "node:timers/promises";

const MODULES = "/usr/lib/x86_64-linux-gnu/kamailio/modules";

const head = (port: number, modules: string[]) =>
  `#!KAMAILIO
debug=1
log_stderror=yes
children=2
listen=udp:127.0.0.1:${port}
mpath="${MODULES}"
${
    ["tm", "sl", "rr", "maxfwd", "siputils", "textops", "pv", ...modules]
      .map((m) => `loadmodule "${m}.so"`).join("\n")
  }
`;

const IN_DIALOG = `
  if (!mf_process_maxfwd_header("10")) { sl_send_reply("483", "Too Many Hops"); exit; }
  if (has_totag() && loose_route()) { t_relay(); exit; }
  if (is_method("CANCEL")) { if (t_check_trans()) { t_relay(); } exit; }
  if (is_method("INVITE") && !has_totag()) { record_route(); }`;

function dispatcherConfig(port: number, dispatcherList: string): string {
  return `${head(port, ["dispatcher"])}
modparam("dispatcher", "list_file", "${dispatcherList}")
request_route {${IN_DIALOG}
  # Algorithm 0 hashes the Call-ID: every request of a call reaches the same worker, also from
  # UACs that send in-dialog requests without the Route set (SIPp's built-in uac does).
  if (!ds_select_dst("1", "0")) { sl_send_reply("503", "No worker"); exit; }
  t_relay();
}
`;
}

function followConfig(port: number, redirectPort: number): string {
  return `${head(port, ["acc", "uac_redirect"])}
request_route {${IN_DIALOG}
  if (has_totag()) { sl_send_reply("404", "Not here"); exit; }
  $du = "sip:127.0.0.1:${redirectPort}";
  t_on_failure("FOLLOW");
  t_relay();
}
failure_route[FOLLOW] {
  # The redirect server's 302: on to the worker in its Contact (the session token rides along).
  if (t_check_status("3[0-9][0-9]")) {
    $du = $null;
    if (get_redirects("1")) { t_relay(); }
  }
}
`;
}

export interface Kamailio {
  port: number;
  stop(): Promise<void>;
}

/** A UDP socket on a free loopback port (node:dgram: Deno's own needs --unstable-net). */
async function udpSocket(): Promise<dgram.Socket> {
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((ok) => socket.bind(0, "127.0.0.1", ok));
  return socket;
}

async function freeUdpPort(): Promise<number> {
  const socket = await udpSocket();
  const port = socket.address().port;
  await new Promise<void>((ok) => socket.close(() => ok()));
  return port;
}

/** Kamailio dispatching to `workers` (UDP ports on 127.0.0.1), ready when this resolves. */
export async function kamailioDispatcher(workers: number[]): Promise<Kamailio> {
  return await startKamailio((port, dir) => {
    const list = `${dir}/dispatcher.list`;
    Deno.writeTextFileSync(list, workers.map((p) => `1 sip:127.0.0.1:${p}\n`).join(""));
    return dispatcherConfig(port, list);
  });
}

/** Kamailio relaying every new INVITE to the redirect server and following its 302. */
export async function kamailioFollowingRedirects(redirectPort: number): Promise<Kamailio> {
  return await startKamailio((port) => followConfig(port, redirectPort));
}

async function startKamailio(config: (port: number, dir: string) => string): Promise<Kamailio> {
  const installed = await Deno.stat("/usr/sbin/kamailio").then(() => true, () => false);
  if (!installed) throw new Error("KAMAILIO=1 needs Kamailio: apt-get install kamailio");
  const dir = await Deno.makeTempDir({ prefix: "kamailio-" });
  const port = await freeUdpPort();
  Deno.writeTextFileSync(`${dir}/kamailio.cfg`, config(port, dir));
  const child = new Deno.Command("/usr/sbin/kamailio", {
    args: ["-f", `${dir}/kamailio.cfg`, "-DD", "-E", "-w", dir, "-P", `${dir}/k.pid`, "-n", "1"],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const log: string[] = [];
  const reading = child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (chunk) => void log.push(chunk) }),
  ).catch(() => {});
  // Ready once it answers an OPTIONS (relayed on, to the UAS or the redirect server: 200).
  const probe = await udpSocket();
  const local = probe.address().port;
  let answered = false;
  probe.on("message", () => answered = true);
  try {
    for (let i = 0; i < 50; i++) {
      const msg = `OPTIONS sip:probe@127.0.0.1:${port} SIP/2.0\r\nVia: SIP/2.0/UDP ` +
        `127.0.0.1:${local};branch=z9hG4bK-probe${i}\r\nFrom: <sip:p@127.0.0.1>;tag=p\r\n` +
        `To: <sip:probe@127.0.0.1>\r\nCall-ID: probe-${i}\r\nCSeq: 1 OPTIONS\r\n` +
        `Max-Forwards: 5\r\nContent-Length: 0\r\n\r\n`;
      probe.send(msg, port, "127.0.0.1");
      await sleep(200);
      if (answered) {
        return {
          port,
          stop: async () => {
            child.kill("SIGTERM");
            await child.status;
            await reading;
            await Deno.remove(dir, { recursive: true });
          },
        };
      }
    }
  } finally {
    probe.close();
  }
  try {
    child.kill("SIGKILL");
  } catch { /* it exited on its own: its log says why */ }
  await child.status;
  await reading;
  throw new Error(`Kamailio did not answer:\n${log.join("")}`);
}
