import assert from "node:assert/strict";
import { contains, describeStep, parseScenario, ScenarioError } from "./scenario.ts";
import { junitXml } from "./junit.ts";

Deno.test("a YAML scenario reads into steps, WAV paths taken beside the file", () => {
  const s = parseScenario(
    `name: demo
config: { idle: { timeout_ms: 5000 } }
steps:
  - expect_reply: hello
  - say: what is the weather
  - wav: turn.wav
  - type: tell me a story
  - interrupt: { after_ms: 1500, say: stop }
  - wait: 200
  - expect_reply: { pattern: "you said", within_ms: 3000 }
  - expect_action: { type: transcript, data: { text: hi } }
  - expect_config: { tts: { voice: VOICE_ANANYA }, within_ms: 1000 }
  - expect_end: { status: ended, reason: goodbye }
`,
    { dir: "/scenarios" },
  );
  assert.equal(s.name, "demo");
  assert.deepEqual(s.config, { idle: { timeout_ms: 5000 } });
  assert.deepEqual(
    s.steps.map(describeStep),
    [
      "expect reply /hello/",
      'say "what is the weather"',
      "wav /scenarios/turn.wav",
      'type "tell me a story"',
      'interrupt 1500 ms into the reply: say "stop"',
      "wait 200 ms",
      "expect reply /you said/ within 3000 ms",
      'expect action transcript {"text":"hi"}',
      'expect config {"tts":{"voice":"VOICE_ANANYA"}} within 1000 ms',
      "expect end ended /goodbye/",
    ],
  );
  const reply = s.steps[0];
  assert.ok(reply.kind === "expect_reply" && reply.pattern.test("HELLO there"));
});

Deno.test("expect_reply waits for the bot to finish unless an interrupt follows it or it says otherwise", () => {
  const s = parseScenario(`steps:
  - expect_reply: hello
  - type: tell me a story
  - expect_reply: lighthouse
  - interrupt: { after_ms: 1500, say: stop }
  - expect_reply: { pattern: "you said", until: started }
  - type: bye
  - expect_reply: { pattern: goodbye, until: finished }
  - interrupt: { after_ms: 100, type: wait }
`);
  const until = s.steps.flatMap((x) => x.kind === "expect_reply" ? [x.until] : []);
  assert.deepEqual(until, ["finished", "started", "started", "finished"]);
  assert.equal(describeStep(s.steps[2]), "expect reply /lighthouse/ as it starts");
  assert.equal(describeStep(s.steps[0]), "expect reply /hello/");
  assert.throws(
    () => parseScenario("steps:\n  - expect_reply: { pattern: x, until: text }"),
    /step 1: until is "finished" \(the default\) or "started", not "text"/,
  );
});

Deno.test("a bad scenario is refused naming the step and what is wrong", () => {
  const bad: [string, RegExp][] = [
    ["steps: []", /at least one step/],
    ["steps:\n  - shout: hi", /step 1: unknown step "shout"/],
    ["steps:\n  - say: hi\n  - wait: -1", /step 2: wait must be a number of milliseconds/],
    ["steps:\n  - expect_reply: '('", /step 1: expect_reply is not a regular expression/],
    ["steps:\n  - interrupt: { after_ms: 5 }", /exactly one of say, wav, type/],
    ["steps:\n  - expect_action: { type: x, colour: red }", /unknown key "colour"/],
    ["steps:\n  - expect_config: { within_ms: 5 }", /names no setting/],
    ["steps:\n  - { say: a, type: b }", /a step is an object with one of/],
    ["voice: x\nsteps:\n  - say: a", /unknown scenario key "voice"/],
    ["[1, 2", /not YAML/],
  ];
  for (const [text, why] of bad) {
    assert.throws(
      () => parseScenario(text),
      (e: Error) => e instanceof ScenarioError && why.test(e.message),
      text,
    );
  }
  assert.throws(() => parseScenario("{", { json: true }), /not JSON/);
});

Deno.test("an expectation's data matches when the actual holds all of it", () => {
  assert.ok(contains({ a: 1, b: { c: "x", d: 2 } }, { b: { c: "x" } }));
  assert.ok(!contains({ a: 1 }, { a: "1" }));
  assert.ok(!contains({ a: [1, 2] }, { a: [1] }));
  assert.ok(contains("t1", "t1"));
});

Deno.test("the JUnit report fails the unmet step, skips the rest and escapes what it quotes", () => {
  const xml = junitXml({
    name: 'a <b> & "c"',
    session_id: "ses_1",
    exit_code: 1,
    failure: { kind: "timeout", message: 'expect reply /x/: the bot said "<no>"' },
    steps: [
      { name: 'say "hi"', ms: 1200, status: "passed" },
      {
        name: "expect reply /x/",
        ms: 3000,
        status: "failed",
        failure: 'expect reply /x/: the bot said "<no>"',
      },
      { name: "expect end", ms: 0, status: "skipped" },
    ],
  });
  assert.match(
    xml,
    /<testsuite name="a &lt;b&gt; &amp; &quot;c&quot;" tests="3" failures="1" skipped="1"/,
  );
  assert.match(xml, /name="1\. say &quot;hi&quot;" time="1\.200"\/>/);
  assert.match(
    xml,
    /<failure type="timeout" message="expect reply \/x\/: the bot said &quot;&lt;no&gt;&quot;">/,
  );
  assert.match(xml, /name="3\. expect end" time="0\.000">\n {6}<skipped\/>/);

  // A call that never started fails its first step.
  const setup = junitXml({
    name: "s",
    session_id: null,
    exit_code: 2,
    failure: { kind: "connect refused", message: "HTTP 401 unauthorized" },
    steps: [{ name: 'say "hi"', ms: 0, status: "skipped" }],
  });
  assert.match(setup, /failures="1" skipped="0"[\s\S]*<failure type="connect refused"/);
});
