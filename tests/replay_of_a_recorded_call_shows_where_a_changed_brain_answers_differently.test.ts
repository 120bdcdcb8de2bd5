// `deno task replay`: a call recorded through the real service (the caller simulator speaking to
// the example brain through a worker) is read back from its session log with the admin token and
// replayed straight to a brain over its WebSocket, no audio. The same brain answers the same:
// exit 0. A changed brain (other words, no transcript action, a config change, another end
// reason) is shown exchange by exchange in units, actions, config and end: exit 1. Run as the
// command it is, the replay ends as a live call does: the brain's session end has the worker's
// reason (brain_ended), not "disconnected" (the process once exited before Finalize and End went
// out), under a session id of its own marked as a replay of the recorded one.
import { assert, assertEquals } from "./helpers/assert.ts";
import { startCallService } from "./helpers/call_harness.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";
import { createBrain } from "../sdk/brain/mod.ts";
import { prepareTurns } from "../caller/script.ts";
import { formatEvent, simulateCall } from "../caller/simulator.ts";
import { runReplay } from "../cli/replay.ts";

const ASK = "what is the weather like today";
const BYE = "thank you goodbye";

async function replayCli(args: string[], env: Record<string, string>) {
  const out: string[] = [];
  const code = await runReplay(args, env, { out: (l) => out.push(l), err: (l) => out.push(l) });
  return { code, text: out.join("\n") };
}

Deno.test("a replay of a recorded call shows where a changed brain answers differently", async () => {
  const service = await startCallService(createExampleBrain());
  const example = createExampleBrain().handlers;
  const endings: { id: string; original?: string; reason: string; heard: number }[] = [];
  const same = createBrain({
    ...example,
    onSessionEnd: (s, end) =>
      void endings.push({
        id: s.id,
        original: s.replay?.originalSessionId,
        reason: end.reason,
        heard: end.heard.length,
      }),
  }).serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const changed = createBrain({
    onSessionStart: () => "Hello! I am the example brain. Say something and I will repeat it.",
    async *onTurn(turn, session) {
      if (/\b(good)?bye\b/i.test(turn.text)) {
        yield "Bye now.";
        session.end("done talking");
        return;
      }
      session.configure({ tts: { voice: "VOICE_ANANYA" } });
      yield `I heard: ${turn.text}`;
    },
  }).serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  try {
    const lines: string[] = [];
    const call = await simulateCall({
      api: service.api.url,
      key: service.tenant.sk,
      agent: service.tenant.agent_id,
      timeoutMs: 20_000,
      turns: await prepareTurns([{ kind: "text", text: ASK }, { kind: "text", text: BYE }], {
        voice: "VOICE_ARJUN",
        language: "LANGUAGE_EN",
      }, { speaker: "festival" }),
      onEvent: (e) => lines.push(formatEvent(e)),
    });
    assertEquals(call.exit_code, 0, lines.join("\n"));
    const sessionId = call.session_id!;
    await service.record(sessionId, "ended", 20_000);
    const env = { API_URL: service.api.url, ADMIN_TOKEN: service.api.adminToken };

    const alike = await replayCli([sessionId, "--brain", same.url, "--settle", "800"], env);
    assertEquals(alike.code, 0, alike.text);
    assert(/2 caller events/.test(alike.text), alike.text);
    assert(/same answers in all 3 exchanges/.test(alike.text), alike.text);

    // The command itself, in its own process: it exits once the brain has had Finalize and End.
    const cli = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "cli/replay.ts", sessionId, "--brain", same.url, "--settle", "800"],
      cwd: new URL("..", import.meta.url).pathname,
      env,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const printed = new TextDecoder().decode(cli.stdout) + new TextDecoder().decode(cli.stderr);
    assertEquals(cli.code, 0, printed);
    const replayId = new RegExp(`replaying ${sessionId} as (${sessionId}-replay-[0-9a-f]{8})`)
      .exec(printed)?.[1];
    assert(replayId, printed);
    const ended = endings.find((e) => e.id === replayId);
    assertEquals(ended, { id: replayId, original: sessionId, reason: "brain_ended", heard: 3 });

    const differs = await replayCli([sessionId, "--brain", changed.url, "--settle", "800"], env);
    console.log(differs.text);
    assertEquals(differs.code, 1, differs.text);
    const heard = call.turns[0].heard.join(" ");
    const expected = [
      `after turn t1: "${heard}":`,
      `  units   recorded: "You said: ${heard}"\n`,
      `          replayed: "I heard: ${heard}"\n`,
      `  actions recorded: transcript {"turn_id":"t1","text":"${heard}","typed":false}`,
      `          replayed: (none)`,
      `  config  recorded: (none)`,
    ];
    for (const l of expected) assert(differs.text.includes(l), `${l}\n---\n${differs.text}`);
    assert(
      differs.text.includes(`          replayed: {"tts":{"voice":"VOICE_ANANYA"}}`),
      differs.text,
    );
    assert(
      /end {5}recorded: "caller said goodbye"\n {10}replayed: "done talking"/.test(differs.text),
      differs.text,
    );
    assert(/2 of 3 exchanges answered differently/.test(differs.text), differs.text);

    const unknown = await replayCli(["ses_nope", "--brain", same.url], env);
    assertEquals(unknown.code, 2, unknown.text);
  } finally {
    await service.close();
    await same.shutdown();
    await changed.shutdown();
  }
});
