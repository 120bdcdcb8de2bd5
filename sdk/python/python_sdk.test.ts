// Runs the Python SDK's unit tests (sdk/python/tests, Python's unittest) under `deno task test`,
// with Debian's Python 3 and its python3-websockets and python3-protobuf (tests/setup.ts installs
// them): not the pyenv or venv Python a PATH may put first. Then again on each current PyPI
// release of websockets and protobuf whose wheel this machine has (tests/helpers/python_releases.ts).
import { assert } from "../../tests/helpers/assert.ts";
import { describe, releaseRuns, withReleases } from "../../tests/helpers/python_releases.ts";

const PYTHON = "/usr/bin/python3";
const HERE = new URL(".", import.meta.url).pathname;

async function unitTests(pythonPath: string): Promise<void> {
  const out = await new Deno.Command(PYTHON, {
    // -W error: a deprecated websockets or protobuf API the SDK still calls fails the run.
    args: [
      "-W",
      "error::DeprecationWarning",
      "-m",
      "unittest",
      "discover",
      "-s",
      `${HERE}tests`,
      "-t",
      HERE,
    ],
    cwd: HERE,
    env: { PYTHONDONTWRITEBYTECODE: "1", PYTHONPATH: pythonPath },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const report = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
  assert(out.success, `python3 -m unittest failed:\n${report}`);
  const ran = Number(report.match(/^Ran (\d+) tests? in/m)?.[1] ?? 0);
  assert(ran > 0, `no Python test ran:\n${report}`);
  // A skipped test here is a missing package (protoc), which CI must have: fail, do not pass.
  assert(!/skipped=/.test(report), `Python tests were skipped:\n${report}`);
}

Deno.test("the Python SDK's unit tests pass under Debian's python3", async () => {
  await unitTests(HERE);
});

// The same tests on the current releases whose wheels are on disk (none: nothing to run here).
for (const releases of releaseRuns()) {
  Deno.test(`the Python SDK's unit tests pass on ${describe(releases)}`, () =>
    withReleases(releases, (packages) => unitTests(`${packages}:${HERE}`)));
}
