// A real softphone, baresip 1.0.0 (Debian), rings a phone number through the control plane: its
// INVITE goes to the SIP redirect server, which answers 302 with the chosen worker's contact and
// the session token; baresip follows the 302 on its own (libre's session layer retries at the
// Contact) and the worker answers. baresip's microphone is a WAV (its `aufile` module): silence
// through the greeting, festival speaking a sentence, then silence while the bot replies. When
// the file ends baresip's menu hangs up (BYE). What baresip heard is its `sndfile` dump. Checked
// end to end: the redirect's 302 and the worker's 200 in baresip's SIP trace, the caller's turn at
// a scripted brain, the greeting and the reply as speech in what baresip recorded, and the
// session record (phone info, the SIP dialogue's events, end reason caller_hung_up).
import { assert, assertEquals } from "./helpers/assert.ts";
import { startCallService } from "./helpers/call_harness.ts";
import { callerSpeechWav } from "./helpers/audio.ts";
import { freeUdpPort } from "./helpers/sipp.ts";
import { startSipRedirect } from "../api/sip/start.ts";
import { createBrain, type PhoneInfo } from "../sdk/brain/mod.ts";
import { readWav, rms } from "../caller/wav.ts";
import { wordErrorRate } from "../media/stt/wer.ts";

const BARESIP = "/usr/bin/baresip";
const SENTENCE = "i am looking for a cheap hotel near the airport";
const GREETING = "Hello, this is the hotel desk. How can I help?";
const REPLY = "We have three hotels near the airport.";
const DIALLED = "+15550100";
const CALLER = "+15550111";
/** Silence before the caller speaks (the greeting plays) and after (the reply plays), seconds. */
const LEAD_S = 8, TAIL_S = 15;

/** A config dir for one baresip run: loopback only, G.711, the WAV as microphone, dumps in `dir`. */
async function baresipConfig(dir: string, microphone: string): Promise<void> {
  const sipPort = await freeUdpPort();
  await Deno.writeTextFile(
    `${dir}/config`,
    [
      "poll_method epoll",
      `sip_listen 127.0.0.1:${sipPort}`,
      // Without it baresip picks eth0's address for Contact and SDP.
      "net_interface 127.0.0.1",
      "call_local_timeout 60",
      // aufile wants the codec's rate: 8 kHz mono S16LE for G.711.
      `audio_source aufile,${microphone}`,
      // sndfile is a filter: it writes what is encoded and what is decoded, no player needed.
      `snd_path ${dir}`,
      "module_path /usr/lib/baresip/modules",
      "module g711.so",
      "module aufile.so",
      "module sndfile.so",
      // account.so reads `accounts` (without it there is no user agent to dial from); menu.so
      // runs the -e /dial command and hangs up when the microphone's file ends.
      "module_app account.so",
      "module_app menu.so",
      "",
    ].join("\n"),
  );
  await Deno.writeTextFile(`${dir}/accounts`, `<sip:${CALLER}@127.0.0.1>;regint=0\n`);
  await Deno.writeTextFile(`${dir}/contacts`, "");
}

/** 20 ms frames of 8 kHz audio louder than `level`, per frame. */
function loudFrames(pcm: Int16Array, level = 500): boolean[] {
  const out: boolean[] = [];
  for (let i = 0; i + 160 <= pcm.length; i += 160) out.push(rms(pcm, i, i + 160) > level);
  return out;
}

const count = (frames: boolean[]) => frames.filter(Boolean).length;

async function dump(dir: string, which: "enc" | "dec"): Promise<Int16Array> {
  const file = [...Deno.readDirSync(dir)].find((f) => f.name.endsWith(`-${which}.wav`));
  assert(file, `baresip wrote no ${which} dump in ${dir}`);
  const wav = await readWav(`${dir}/${file.name}`);
  assertEquals(wav.sampleRate, 8000);
  return wav.samples;
}

/**
 * Runs baresip until its call has ended, then stops it: without a stop it idles until `-t`
 * (menu hangs up at the WAV's end but baresip stays up). The end is baresip's own line for it,
 * after the call was established; the dumps are closed with the call.
 */
async function untilCallEnds(args: string[]) {
  const child = new Deno.Command(BARESIP, {
    args,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let stdout = "", stderr = "";
  const ended = Promise.withResolvers<void>();
  const read = async (stream: ReadableStream<Uint8Array>, add: (s: string) => void) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) add(decoder.decode(chunk, { stream: true }));
  };
  const drained = Promise.all([
    read(child.stdout, (s) => {
      stdout += s;
      if (/Call established[\s\S]*Call with \S+ terminated \(duration/.test(stdout)) {
        ended.resolve();
      }
    }),
    read(child.stderr, (s) => void (stderr += s)),
  ]);
  const status = await Promise.race([child.status, ended.promise.then(() => undefined)]);
  if (!status) child.kill("SIGTERM");
  const { code } = await child.status;
  await drained;
  return { code, stdout, stderr };
}

Deno.test("baresip dials a number through the redirect server, speaks a turn from a WAV and records the bot's greeting and answer", async () => {
  const seen: { phone?: PhoneInfo | null; sessionId?: string; turns: string[]; end?: string } = {
    turns: [],
  };
  const brain = createBrain({
    onSessionStart(session) {
      seen.phone = session.phone;
      seen.sessionId = session.id;
      return GREETING;
    },
    onTurn(turn) {
      seen.turns.push(turn.text);
      return REPLY;
    },
    onSessionEnd: (_s, end) => void (seen.end = end.reason),
  });
  const workerSip = await freeUdpPort();
  const service = await startCallService(brain, { workerEnv: { SIP_PORT: String(workerSip) } });
  const redirect = await startSipRedirect(service.api.deps, { host: "127.0.0.1", port: 0 });
  const dir = await Deno.makeTempDir({ prefix: "baresip-" });
  try {
    const added = await service.api.admin("/api/v1/numbers.create", {
      number: DIALLED,
      agent_id: service.tenant.agent_id,
    });
    assertEquals(added.status, 200, JSON.stringify(added.body));

    const speech = await callerSpeechWav(SENTENCE, 0.2, 8000);
    const microphone = `${dir}/microphone.wav`;
    const sox = await new Deno.Command("sox", {
      args: [speech, "-b", "16", microphone, "pad", String(LEAD_S), String(TAIL_S)],
    }).output();
    assert(sox.success, "sox could not pad the caller's speech");
    await baresipConfig(dir, microphone);

    // -s: the SIP trace on stdout, to see the 302 followed. -t: a backstop only; the call ends
    // when the WAV does (LEAD_S + speech + TAIL_S, about 26 s).
    const run = await untilCallEnds(
      ["-f", dir, "-s", "-e", `/dial sip:${DIALLED}@127.0.0.1:${redirect.port}`, "-t", "120"],
    );
    const trace = run.stdout;
    assertEquals(run.code, 0, run.stderr);

    // The redirect server's 302 named the worker with the token; baresip re-sent its INVITE there.
    const contact = new RegExp(
      `302 Moved Temporarily[\\s\\S]*?Contact: <sip:\\${DIALLED}@127\\.0\\.0\\.1:${workerSip};session=([\\w.-]+)>`,
    ).exec(trace);
    assert(contact, `no 302 to the worker in baresip's trace:\n${trace}`);
    assert(
      trace.includes(`INVITE sip:${DIALLED}@127.0.0.1:${workerSip};session=${contact[1]} SIP/2.0`),
      "baresip did not follow the 302",
    );
    assert(trace.includes("Call established"), "baresip never had its call answered");

    // The brain saw a phone call from baresip's number to the dialled one, and the spoken turn.
    assertEquals(seen.phone?.from, CALLER);
    assertEquals(seen.phone?.to, DIALLED);
    assertEquals(seen.phone?.carrier, "sip");
    assert(seen.turns.length >= 1, "no turn reached the brain");
    const wer = wordErrorRate(SENTENCE, seen.turns[0]);

    // What baresip sent and heard share one timeline (both dumps start with the call's media).
    const sent = loudFrames(await dump(dir, "enc"));
    const heard = loudFrames(await dump(dir, "dec"));
    const spokeFrom = sent.indexOf(true), spokeTo = sent.lastIndexOf(true);
    assert(spokeFrom > 0 && spokeTo > spokeFrom, "baresip sent no speech");
    // The greeting: speech before the caller speaks. The reply: speech after the caller stopped.
    const greeting = count(heard.slice(0, spokeFrom));
    const reply = count(heard.slice(spokeTo + 1));
    assert(greeting > 25, `baresip heard ${greeting} loud frames of greeting`);
    assert(reply > 25, `baresip heard ${reply} loud frames after its turn`);

    const record = await service.record(seen.sessionId!, "ended", 30_000);
    assertEquals(record.end_reason, "caller_hung_up");
    // The session is the one the redirect server made for the number (not a sessions.connect).
    assertEquals(record.metadata, { phone_dialled: DIALLED, phone_caller: CALLER });
    // deno-lint-ignore no-explicit-any
    const sip = record.log.filter((e: any) => e.source === "sip").map((e: any) => e.kind);
    for (const kind of ["invite", "answered", "confirmed", "ended"]) {
      assert(sip.includes(kind), `no sip/${kind} in ${sip}`);
    }
    const t1 = record.timings.turns.find((t: { turn_id: string }) => t.turn_id === "t1");
    assertEquals(t1.user_text, seen.turns[0]);
    assertEquals(seen.end, "caller_hung_up");
    // A figure of this one call, not a benchmark; the recognition of 8 kHz phone audio varies
    // with the machine's load, so its word error rate is printed, not asserted.
    // deno-lint-ignore no-explicit-any
    const line = record.log.find((e: any) => e.source === "phone" && e.kind === "line")?.data;
    console.log(JSON.stringify({ heard: seen.turns[0], wer, greeting, reply, sip, line }));
    assert(record.usage.recognised_seconds > 1, JSON.stringify(record.usage));
  } finally {
    await redirect.close();
    await service.close();
    await Deno.remove(dir, { recursive: true });
  }
});
