import assert from "node:assert/strict";
import { makeTenant, PAGE_ORIGIN, startTestApi } from "../tests/helpers/api_server.ts";
import { freePort } from "../tests/helpers/process.ts";
import { startCallService } from "../tests/helpers/call_harness.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";
import { speechWav } from "../tests/helpers/audio.ts";
import { parseCallArgs, runCall, USAGE } from "./call.ts";

/** runCall with its output captured. */
async function call(args: string[], env: Record<string, string> = {}) {
  const out: string[] = [], err: string[] = [];
  const code = await runCall(args, env, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

const ID = ["--key", "sk_test", "--agent", "agt_1"];

Deno.test("turns keep command-line order: script lines in place, --say and --wav between", async () => {
  const dir = await Deno.makeTempDir({ prefix: "call-cli-" });
  try {
    await Deno.writeTextFile(`${dir}/a.txt`, "# two turns\nfirst line\n\nsecond line\n");
    const parsed = await parseCallArgs(
      [
        "--say",
        "zero",
        `${dir}/a.txt`,
        "--wav",
        "x.wav",
        "--type",
        "typed",
        "--say",
        "last",
        ...ID,
      ],
      {},
    );
    assert.equal(parsed.kind, "run");
    if (parsed.kind !== "run") return;
    assert.deepEqual(parsed.command.turns, [
      { kind: "text", text: "zero" },
      { kind: "text", text: "first line" },
      { kind: "text", text: "second line" },
      { kind: "wav", path: "x.wav" },
      { kind: "typed", text: "typed" },
      { kind: "text", text: "last" },
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the API is --api-url or API_URL as in admin and replay; --api and VOICE_API_URL still work", async () => {
  const api = async (args: string[], env: Record<string, string>) => {
    const parsed = await parseCallArgs([...ID, ...args], env);
    assert.equal(parsed.kind, "run");
    return parsed.kind === "run" ? parsed.command.options.api : undefined;
  };
  assert.equal(await api(["--api-url", "http://a.test"], {}), "http://a.test");
  assert.equal(await api([], { API_URL: "http://b.test" }), "http://b.test");
  assert.equal(await api(["--api", "http://c.test"], {}), "http://c.test");
  assert.equal(await api([], { VOICE_API_URL: "http://d.test" }), "http://d.test");
  // The flag over the environment, the current name over the older one.
  assert.equal(
    await api(["--api-url", "http://a.test"], { API_URL: "http://b.test" }),
    "http://a.test",
  );
  assert.equal(
    await api([], { API_URL: "http://b.test", VOICE_API_URL: "http://d.test" }),
    "http://b.test",
  );
});

Deno.test("flags fall back to VOICE_API_URL, VOICE_KEY and VOICE_AGENT, with the defaults", async () => {
  const env = {
    VOICE_API_URL: "http://10.0.0.1:9000",
    VOICE_KEY: "pk_env",
    VOICE_AGENT: "agt_env",
  };
  const fromEnv = await parseCallArgs([], env);
  assert.equal(fromEnv.kind, "run");
  if (fromEnv.kind !== "run") return;
  assert.equal(fromEnv.command.options.api, "http://10.0.0.1:9000");
  assert.equal(fromEnv.command.options.key, "pk_env");
  assert.equal(fromEnv.command.options.agent, "agt_env");
  assert.equal(fromEnv.command.options.timeoutMs, 20_000);
  assert.equal(fromEnv.command.voice, "VOICE_ARJUN");
  assert.equal(fromEnv.command.language, "LANGUAGE_EN");
  assert.equal(fromEnv.command.json, false);

  const flags = await parseCallArgs([
    "--api",
    "https://voice.example.test",
    "--key",
    "sk_flag",
    "--agent",
    "agt_flag",
    "--origin",
    "https://shop.example.test",
    "--config",
    '{"stt":{"language":"LANGUAGE_HI"},"tts":{"language":"LANGUAGE_HI"}}',
    "--init",
    '{"order":42}',
    "--timeout",
    "2.5",
    "--json",
  ], env);
  assert.equal(flags.kind, "run");
  if (flags.kind !== "run") return;
  const o = flags.command.options;
  assert.deepEqual(
    [o.api, o.key, o.agent, o.origin, o.timeoutMs],
    ["https://voice.example.test", "sk_flag", "agt_flag", "https://shop.example.test", 2500],
  );
  assert.deepEqual(o.init, { order: 42 });
  assert.equal(flags.command.language, "LANGUAGE_HI", "the caller speaks the recognition language");
  assert.equal(flags.command.json, true);
});

Deno.test("--loss and --jitter give the call an impaired link; without them it has none", async () => {
  const plain = await parseCallArgs([...ID], {});
  assert.ok(plain.kind === "run" && plain.command.options.impairment === undefined);
  const lossy = await parseCallArgs([...ID, "--loss", "5,3", "--jitter", "30"], {});
  assert.ok(lossy.kind === "run");
  assert.deepEqual(lossy.command.options.impairment, {
    loss: 0.05,
    burst: 3,
    jitterMs: 30,
    reorder: 0,
    seed: 1,
  });
  const reordered = await parseCallArgs([...ID, "--reorder", "2"], {});
  assert.ok(reordered.kind === "run");
  assert.deepEqual(reordered.command.options.impairment, {
    loss: 0,
    burst: 1,
    jitterMs: 0,
    reorder: 0.02,
    seed: 1,
  });
});

Deno.test("usage mistakes exit 2 with the reason and the usage text", async () => {
  const cases: [string[], RegExp][] = [
    [["--agent", "a"], /no key/],
    [["--key", "k"], /no agent/],
    [[...ID, "--timeout", "0"], /--timeout must be a positive/],
    [[...ID, "--config", "{nope"], /--config is not JSON/],
    [[...ID, "--init", "[1]"], /--init must be a JSON object/],
    [[...ID, "--api", "ftp://x"], /--api-url must be an http/],
    [[...ID, "--bogus"], /Unknown option '--bogus'/],
    [[...ID, "/nonexistent/script.txt"], /cannot read script/],
    [[...ID, "--say", "  "], /--say needs some text/],
    [[...ID, "--loss", "120"], /--loss: loss must be a percentage/],
    [[...ID, "--loss", "5,0"], /--loss: burst must be/],
    [[...ID, "--jitter", "5000"], /--jitter must be 0 to 2000 ms/],
    [[...ID, "--reorder", "x"], /--reorder must be a percentage/],
  ];
  for (const [args, reason] of cases) {
    const r = await call(args);
    assert.equal(r.code, 2, args.join(" "));
    assert.match(r.err, reason);
    assert.ok(r.err.includes("Exit status:"), "the usage text follows");
    assert.equal(r.out, "");
  }
  const help = await call(["--help"]);
  assert.equal(help.code, 0);
  assert.equal(help.out, USAGE);
});

Deno.test("a WAV that cannot be read is a usage error, found before dialling", async () => {
  const r = await call([...ID, "--api", `http://127.0.0.1:${freePort()}`, "--wav", "/nope.wav"]);
  assert.equal(r.code, 2);
  assert.match(r.err, /nope\.wav/);
  assert.equal(r.out, "", "nothing was dialled");
});

Deno.test("an API that cannot be reached exits 2 naming the URL", async () => {
  const api = `http://127.0.0.1:${freePort()}`;
  const r = await call([...ID, "--api", api]);
  assert.equal(r.code, 2);
  assert.match(r.out, new RegExp(`FAILED \\(unreachable\\): cannot reach the API at ${api}`));
});

Deno.test("a refused sessions.connect exits 2 with the service's error code and message", async () => {
  const api = await startTestApi();
  try {
    const tenant = await makeTenant(api);
    const base = ["--api", api.url, "--agent", tenant.agent_id];

    const badKey = await call([...base, "--key", "sk_not_a_real_key"]);
    assert.equal(badKey.code, 2);
    assert.match(badKey.out, /FAILED \(connect refused\): HTTP 401 invalid_api_key: /);

    const noOrigin = await call([...base, "--key", tenant.pk]);
    assert.equal(noOrigin.code, 2);
    assert.match(noOrigin.out, /HTTP 403 origin_not_allowed/);
    assert.match(noOrigin.err, /needs --origin/);

    const badConfig = await call([
      ...base,
      "--key",
      tenant.sk,
      "--config",
      '{"tts":{"voice":"VOICE_NOBODY"}}',
      "--json",
    ]);
    assert.equal(badConfig.code, 2);
    const report = JSON.parse(badConfig.out);
    assert.equal(report.exit_code, 2);
    assert.equal(report.session_id, null);
    assert.equal(report.failure.kind, "connect refused");
    assert.ok(["unsupported_config", "invalid_request"].includes(report.failure.code));
    assert.ok(!badConfig.out.includes(tenant.sk), "the key is never printed");

    // With the origin on the allowlist the pk_ key is accepted; the node registered here has
    // nothing listening at its offer URL, so the offer is what fails.
    const withOrigin = await call([...base, "--key", tenant.pk, "--origin", PAGE_ORIGIN]);
    assert.equal(withOrigin.code, 2);
    assert.match(withOrigin.out, /^session: \S+\nFAILED \(offer refused\): /);
  } finally {
    await api.close();
  }
});

Deno.test("`deno run -A cli/call.ts` completes a call with the example brain and exits 0", async () => {
  const service = await startCallService(createExampleBrain());
  try {
    const wav = await speechWav("what is the weather like today", 0.3, 16000);
    const args = ["--say", "hello there how are you", "--wav", wav, "--timeout", "30"];
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "cli/call.ts", ...args],
      cwd: new URL("..", import.meta.url).pathname,
      env: {
        NO_COLOR: "1",
        VOICE_API_URL: service.api.url,
        VOICE_KEY: service.tenant.sk,
        VOICE_AGENT: service.tenant.agent_id,
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    const err = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, `${text}\n${err}`);
    const lines = text.split("\n");
    // Which voice says the text turns, then the call.
    assert.equal(lines[0], "caller voice: festival (text2wave)");
    assert.match(lines[1], /^session: \S+/);
    assert.ok(
      lines.some((l) =>
        /^said vs heard \(turn 1\): "hello there how are you" \/ ".*": WER \d\.\d\d$/.test(l)
      ),
      text,
    );
    assert.ok(
      lines.includes("bot: Hello! I am the example brain. Say something and I will repeat it."),
    );
    assert.ok(lines.includes("caller: hello there how are you"), text);
    assert.ok(lines.some((l) => /^caller: \[.+\.wav, \d+\.\d s\]$/.test(l)), text);
    assert.equal(lines.filter((l) => l.startsWith("heard as: ")).length, 2, text);
    assert.equal(lines.filter((l) => l.startsWith("bot: You said: ")).length, 2, text);
    assert.ok(lines.some((l) => l.startsWith("actions: ")), text);
    assert.ok(
      lines.some((l) => /^latency \(turn 1, from end of speech\): transcript \d+ ms/.test(l)),
      text,
    );
    assert.ok(
      lines.some((l) => /^latency \(turn 2, from end of speech\): transcript \d+ ms/.test(l)),
      text,
    );
    assert.ok(
      lines.some((l) =>
        /^end of speech → first bot audio at the caller: p50 \d+ ms, p99 \d+ ms over 2 turns; first turn \d+ ms, later turns p50 \d+ ms$/
          .test(l)
      ),
      text,
    );
    assert.equal(lines.filter(Boolean).at(-1), "passed: greeting and 2 turns");
  } finally {
    await service.close();
  }
});
