// baresip 1.0.0 as the callee of a call the service places (issue 34): a user agent listening on a
// loopback port with no registrar, so a trunk whose outbound_address is that port sends its INVITE
// straight to it. Its account auto-answers (`;answermode=auto`), its microphone is a WAV (the
// `aufile` source: a person's "Hello?" or a voicemail greeting with its beep, 8 kHz mono as
// G.711 wants), and what it hears is dumped by the `sndfile` filter (`snd_path`: one
// `dump-...-dec.wav` a call, the decoded audio from the answer on). `ctrl_tcp` takes the
// `hangup` command (netstring JSON) and reports the call's events (CALL_ESTABLISHED,
// CALL_CLOSED), so a test hangs up when it chooses and waits for the end without a timed guess.
import { encodeWav, readWav } from "../../caller/wav.ts";
import { freePort } from "./process.ts";
import { freeUdpPort } from "./sipp.ts";
import { eventually } from "./live_call.ts";

const BARESIP = "/usr/bin/baresip";

export interface BaresipCallee {
  /** `127.0.0.1:port`, its SIP listen address: a trunk's outbound_address. */
  address: string;
  /** Events ctrl_tcp has reported so far (`CALL_INCOMING`, `CALL_ESTABLISHED`, `CALL_CLOSED`…). */
  events(): string[];
  /** Resolves at the call's CALL_CLOSED (whoever hung up), or throws after `ms`. */
  closed(ms?: number): Promise<void>;
  /** Sends BYE on the current call (ctrl_tcp's `hangup`). */
  hangup(): Promise<void>;
  /**
   * What baresip heard (`dec`) and sent (`enc`) on its one call, 8 kHz PCM on one timeline from
   * the call's media start; stops baresip first (the dumps are closed with the call).
   */
  dumps(): Promise<{ heard: Int16Array; sent: Int16Array }>;
  /** baresip's stdout and stderr (its SIP trace with `-s`), for failure messages. */
  output(): string;
  /** Stops baresip (SIGTERM) and removes its directory. */
  close(): Promise<void>;
}

/** One netstring: `len:payload,`. */
const netstring = (s: string) => `${new TextEncoder().encode(s).length}:${s},`;

/**
 * Starts baresip auto-answering at a free loopback port with `microphone` (8 kHz PCM) as its
 * audio, as `user`: baresip answers only a Request-URI whose user is its account's (404 "UA not
 * found" otherwise), so `user` is the number the service dials.
 * The WAV is padded with `tailSeconds` of silence so its end (aufile's EOF, on which baresip
 * hangs up) never comes before the test's own hangup.
 */
export async function startBaresipCallee(
  microphone: Int16Array,
  user: string,
  { tailSeconds = 120 } = {},
): Promise<BaresipCallee> {
  const dir = await Deno.makeTempDir({ prefix: "baresip-callee-" });
  const sipPort = await freeUdpPort();
  const ctrlPort = freePort();
  const samples = new Int16Array(microphone.length + tailSeconds * 8000);
  samples.set(microphone);
  await Deno.writeFile(`${dir}/microphone.wav`, encodeWav({ sampleRate: 8000, samples }));
  await Deno.writeTextFile(
    `${dir}/config`,
    [
      "poll_method epoll",
      `sip_listen 127.0.0.1:${sipPort}`,
      // Without it baresip picks eth0's address for its Contact and SDP.
      "net_interface 127.0.0.1",
      `audio_source aufile,${dir}/microphone.wav`,
      // sndfile is a filter: it writes what is encoded and decoded, no audio player needed.
      `snd_path ${dir}`,
      `ctrl_tcp_listen 127.0.0.1:${ctrlPort}`,
      "module_path /usr/lib/baresip/modules",
      "module g711.so",
      "module aufile.so",
      "module sndfile.so",
      "module_app account.so",
      // menu holds the commands (hangup) that ctrl_tcp runs.
      "module_app menu.so",
      "module_app ctrl_tcp.so",
      "",
    ].join("\n"),
  );
  // No registrar (regint=0); the INVITE names this address directly.
  await Deno.writeTextFile(
    `${dir}/accounts`,
    `<sip:${user}@127.0.0.1:${sipPort}>;regint=0;answermode=auto\n`,
  );
  await Deno.writeTextFile(`${dir}/contacts`, "");

  const child = new Deno.Command(BARESIP, {
    args: ["-f", dir, "-s"],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  let exited = false;
  const status = child.status.then((s) => (exited = true, s));

  const events: string[] = [];
  let conn: Deno.TcpConn | undefined;
  let reading: Promise<void> | undefined;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    try {
      conn?.close();
    } catch { /* already closed by baresip's exit */ }
    await reading?.catch(() => {});
    if (!exited) child.kill("SIGTERM");
    // SIGTERM ends the call and closes the dump files; a wedged baresip gets SIGKILL.
    const timer = setTimeout(() => exited || child.kill("SIGKILL"), 10_000);
    await status;
    clearTimeout(timer);
    await drained;
  };
  try {
    // ctrl_tcp listens once the modules are loaded: baresip is then up with its SIP socket bound.
    conn = await eventually("baresip's ctrl_tcp listening", async () => {
      if (exited) throw new Error(`baresip exited:\n${text}`);
      return await Deno.connect({ hostname: "127.0.0.1", port: ctrlPort }).catch(() => undefined);
    }, 30_000);
    reading = (async () => {
      // Netstrings count bytes, so they are cut before decoding.
      let buf = new Uint8Array(0);
      for await (const chunk of conn!.readable) {
        const joined = new Uint8Array(buf.length + chunk.length);
        joined.set(buf);
        joined.set(chunk, buf.length);
        buf = joined;
        for (let colon; (colon = buf.indexOf(58)) > 0;) {
          const len = Number(new TextDecoder().decode(buf.subarray(0, colon)));
          if (buf.length < colon + 1 + len + 1) break;
          const msg = JSON.parse(
            new TextDecoder().decode(buf.subarray(colon + 1, colon + 1 + len)),
          );
          buf = buf.slice(colon + 1 + len + 1);
          if (msg.event) events.push(String(msg.type));
        }
      }
    })().catch(() => {});
  } catch (err) {
    await stop();
    await Deno.remove(dir, { recursive: true });
    throw err;
  }

  return {
    address: `127.0.0.1:${sipPort}`,
    events: () => [...events],
    output: () => text,
    closed: (ms = 60_000) =>
      eventually(
        "baresip's call closed",
        () => Promise.resolve(events.includes("CALL_CLOSED") || undefined),
        ms,
      ).then(() => {}).catch((err) => {
        throw new Error(`${err.message}; events ${events}\n${text}`);
      }),
    async hangup() {
      const body = JSON.stringify({ command: "hangup", params: "", token: "hangup" });
      await conn!.write(new TextEncoder().encode(netstring(body)));
    },
    async dumps() {
      await stop();
      const read = async (which: "enc" | "dec") => {
        const file = [...Deno.readDirSync(dir)].find((f) => f.name.endsWith(`-${which}.wav`));
        if (!file) throw new Error(`baresip wrote no -${which}.wav dump in ${dir}\n${text}`);
        const wav = await readWav(`${dir}/${file.name}`);
        if (wav.sampleRate !== 8000) throw new Error(`the dump is at ${wav.sampleRate} Hz`);
        return wav.samples;
      };
      return { heard: await read("dec"), sent: await read("enc") };
    },
    async close() {
      await stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
