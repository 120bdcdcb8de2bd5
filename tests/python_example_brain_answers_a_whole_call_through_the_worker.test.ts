// The Python SDK's example brain (sdk/python/example/brain.py), as its own process, through the
// real service: a worker process dials it, the caller simulator (`deno task call --wav`, festival
// speech) talks to it, and the session record shows the greeting, a turn answered "You said ...",
// what the caller heard reported to the brain, and the end the brain asked for on "goodbye". The
// worker's liveness bound is cut to 3 s, so it pings the brain after 1 s of quiet (between the
// greeting and the first turn there are several): a brain whose socket did not answer pings would
// be marked silent at 2 s and failed at 3 s. Then again on current websockets and protobuf releases.
import { assert, assertEquals } from "./helpers/assert.ts";
import { type LogEntry, startCallService } from "./helpers/call_harness.ts";
import { callerSpeechWav } from "./helpers/audio.ts";
import { startPythonBrain } from "./helpers/python_brain.ts";
import { testOnNewestReleases } from "./helpers/python_releases.ts";
import { wordErrorRate } from "../media/stt/wer.ts";

const CALL = new URL("../cli/call.ts", import.meta.url).pathname;
const ASK = "what is the weather like today";
const BYE = "thank you goodbye";

async function wholeCall(packages?: string): Promise<void> {
  const brain = await startPythonBrain(undefined, undefined, packages);
  const service = await startCallService(brain, {
    workerEnv: { BRAIN_UNRESPONSIVE_SECONDS: "3" },
  });
  try {
    const sim = await new Deno.Command(Deno.execPath(), {
      args: [
        ...["run", "-A", CALL, "--json", "--api", service.api.url],
        ...["--key", service.tenant.sk, "--agent", service.tenant.agent_id],
        ...["--wav", await callerSpeechWav(ASK), "--wav", await callerSpeechWav(BYE)],
      ],
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(sim.stdout);
    const simulated = `simulator:\n${stdout}${new TextDecoder().decode(sim.stderr)}`;
    assertEquals(sim.code, 0, simulated);
    const sessionId: string = JSON.parse(stdout).session_id;

    const record = await service.record(sessionId, "ended", 20_000);
    const log: LogEntry[] = record.log;
    const toBrain = log.filter((e) => e.source === "to_brain");
    const fromBrain = log.filter((e) => e.source === "from_brain");
    const kinds = log.map((e) => `${e.source}:${e.kind}`).join(" ");

    // The greeting, spoken and heard whole.
    const greeting = fromBrain.find((e) => e.kind === "greeting");
    assert(/Python example brain/.test(greeting?.data.text), kinds);
    const greetingTurn = record.timings.turns[0];
    assertEquals(greetingTurn.turn_id, "greeting");
    assertEquals(greetingTurn.units[0].heard, greeting!.data.text);

    // The caller's turn reached the brain close to what was said, and was answered with it.
    const turns = toBrain.filter((e) => e.kind === "user_turn");
    assertEquals(turns.length, 2, kinds);
    const asked = turns[0].data;
    assert(wordErrorRate(ASK, asked.text) <= 0.5, `heard "${asked.text}" for "${ASK}"`);
    const reply = fromBrain.find((e) =>
      e.kind === "speech_unit" && e.data.turn_id === asked.turn_id
    );
    assertEquals(reply?.data.text, `You said: ${asked.text}`);
    assert(
      fromBrain.some((e) =>
        e.kind === "speech_unit" && e.data.turn_id === asked.turn_id &&
        e.data.last === true
      ),
      "the turn's last unit",
    );

    // What the caller heard of the reply was reported to the brain, unit by unit.
    const heard = toBrain.filter((e) => e.kind === "heard").map((e) => e.data);
    const heardReply = heard.find((h) => h.unit_id === reply!.data.unit_id);
    assertEquals(heardReply?.text, reply!.data.text);
    assertEquals(heardReply?.cut_off, false);

    // "goodbye": the brain said goodbye and asked to end; the call ended brain_ended, the brain
    // was sent Finalize (everything heard) then End, and its on_session_end saw both.
    assert(/\b(good)?bye\b/.test(turns[1].data.text), `heard "${turns[1].data.text}"`);
    const endAsked = fromBrain.find((e) => e.kind === "end_session");
    assertEquals(endAsked?.data.reason, "caller said goodbye");
    assertEquals(record.status, "ended");
    assertEquals(record.end_reason, "brain_ended");
    assertEquals(toBrain.slice(-2).map((e) => e.kind), ["finalize", "end"], kinds);
    const finalHeard: { text: string }[] = toBrain.at(-2)!.data.heard;
    assert(finalHeard.some((h) => h.text.startsWith("You said")), JSON.stringify(finalHeard));
    assert(finalHeard.some((h) => h.text.startsWith("Goodbye")), JSON.stringify(finalHeard));

    // The worker's pings were answered: the brain was never marked silent.
    assert(!/brain_silent|brain_unresponsive/.test(kinds), kinds);

    await brain.stop();
    const said =
      `session ${sessionId} ended (brain_ended); caller heard ${finalHeard.length} units`;
    assert(brain.output().includes(said), `brain output:\n${brain.output()}`);
  } finally {
    await service.close();
    await brain.stop();
  }
}

Deno.test("the Python example brain answers a whole call through the worker", async () => {
  await wholeCall();
});

// The same call with the brain on the newest websockets (its asyncio server answers the worker's
// pings) and protobuf whose wheels are on disk.
testOnNewestReleases("the Python example brain answers a whole call", wholeCall);
