import { assert, assertEquals, assertMatch } from "../tests/helpers/assert.ts";
import { logger, setLogFormat, setQuiet } from "./log.ts";

/** What `fn` printed, line by line, per stream. */
function capture(fn: () => void): { out: string[]; err: string[] } {
  const out: string[] = [], err: string[] = [];
  const { log, error } = console;
  console.log = (s: string) => out.push(s);
  console.error = (s: string) => err.push(s);
  try {
    setQuiet(false);
    fn();
  } finally {
    console.log = log;
    console.error = error;
    setLogFormat("text");
  }
  return { out, err };
}

Deno.test("text is the default: time level [component] message key=value", () => {
  const { out } = capture(() => logger("api").info("call started", { session_id: "ses_1" }));
  assertEquals(out.length, 1);
  assertMatch(out[0], /^\d{4}-\d\d-\d\dT[\d:.]+Z info \[api\] call started session_id=ses_1$/);
});

Deno.test("json: every line is one object with time, level, component, msg and the fields", () => {
  const { out, err } = capture(() => {
    setLogFormat("json");
    const log = logger("call");
    log.info("call ended", { session_id: "ses_1", status: "ended", seconds: 12.5, ok: true });
    log.warn("no fields");
    log.error("boom", { cause: 'a "quoted"\nmessage', gone: undefined, none: null });
  });
  assertEquals(out.length, 2);
  assertEquals(err.length, 1);
  const first = JSON.parse(out[0]);
  assertEquals(Object.keys(first), [
    "time",
    "level",
    "component",
    "msg",
    "session_id",
    "status",
    "seconds",
    "ok",
  ]);
  assert(!Number.isNaN(Date.parse(first.time)), first.time);
  assertEquals(first.level, "info");
  assertEquals(first.component, "call");
  assertEquals(first.msg, "call ended");
  assertEquals(first.session_id, "ses_1");
  assertEquals(first.seconds, 12.5);
  assertEquals(first.ok, true);
  assertEquals(JSON.parse(out[1]).level, "warn");
  const error = JSON.parse(err[0]);
  assertEquals(error.level, "error");
  assertEquals(error.cause, 'a "quoted"\nmessage');
  assertEquals(error.none, null);
  assert(!("gone" in error), "an undefined field is left out");
  for (const line of [...out, ...err]) assert(!line.includes("\n"), "one line per event");
});

Deno.test("json: a field named like a fixed key does not overwrite it", () => {
  const { out } = capture(() => {
    setLogFormat("json");
    logger("api").info("real message", { msg: "from a field", level: "x", n: Number.NaN });
  });
  const o = JSON.parse(out[0]);
  assertEquals(o.msg, "real message");
  assertEquals(o.level, "info");
  assertEquals(o.field_msg, "from a field");
  assertEquals(o.field_level, "x");
  assertEquals(o.n, "NaN");
});

Deno.test("switching back to text gives text lines again", () => {
  const { out } = capture(() => {
    setLogFormat("json");
    setLogFormat("text");
    logger("node").info("registered", { node_id: "n1" });
  });
  assertMatch(out[0], / info \[node\] registered node_id=n1$/);
});
