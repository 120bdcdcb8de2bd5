// Runs the Python SDK's unit tests (sdk/python/tests, Python's unittest) under `deno task test`,
// with Debian's Python 3 and its python3-websockets and python3-protobuf (tests/setup.ts installs
// them): not the pyenv or venv Python a PATH may put first.
import { assert } from "../../tests/helpers/assert.ts";

const PYTHON = "/usr/bin/python3";
const HERE = new URL(".", import.meta.url).pathname;

Deno.test("the Python SDK's unit tests pass under Debian's python3", async () => {
  const out = await new Deno.Command(PYTHON, {
    args: ["-m", "unittest", "discover", "-s", `${HERE}tests`, "-t", HERE],
    cwd: HERE,
    env: { PYTHONDONTWRITEBYTECODE: "1", PYTHONPATH: HERE },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const report = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
  assert(out.success, `python3 -m unittest failed:\n${report}`);
  const ran = Number(report.match(/^Ran (\d+) tests? in/m)?.[1] ?? 0);
  assert(ran > 0, `no Python test ran:\n${report}`);
  // A skipped test here is a missing package (protoc), which CI must have: fail, do not pass.
  assert(!/skipped=/.test(report), `Python tests were skipped:\n${report}`);
});
