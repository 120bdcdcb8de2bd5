import assert from "node:assert/strict";
import { denoCommand, type Launch, shellWord } from "./deno_command.ts";

const NPX_BIN = "/home/u/.npm/_npx/3f2a/node_modules/.bin";
const NPX_DENO = "/home/u/.npm/_npx/3f2a/node_modules/deno/deno";

/** A machine whose files are `files` (path -> real path). */
function launch(
  env: Record<string, string>,
  execPath: string,
  files: Record<string, string>,
): Launch {
  return { env, execPath, version: "2.9.6", resolve: (p) => files[p] };
}

Deno.test("after the npx quick start, with no deno on the caller's PATH, commands start with npx", () => {
  // npx and `deno task` put their own bin folders (which hold deno) on the process's PATH.
  const env = {
    PATH: `/work/clone/node_modules/.bin:${NPX_BIN}:/usr/local/bin:/usr/bin:/bin`,
    npm_lifecycle_event: "npx",
    npm_command: "exec",
  };
  const files = { [NPX_DENO]: NPX_DENO, [`${NPX_BIN}/deno`]: NPX_DENO };
  assert.equal(denoCommand(launch(env, NPX_DENO, files)), "npx -y deno@2.9.6");
});

Deno.test("a deno on the caller's PATH that is this executable is written as deno", () => {
  const files = {
    "/usr/lib/node_modules/deno/deno": "/usr/lib/node_modules/deno/deno",
    "/usr/bin/deno": "/usr/lib/node_modules/deno/deno", // npm install -g's symlink
  };
  const env = { PATH: "/usr/local/bin:/usr/bin:/bin", npm_lifecycle_event: "npx" };
  assert.equal(denoCommand(launch(env, "/usr/lib/node_modules/deno/deno", files)), "deno");
});

Deno.test("without deno on PATH and without npx, commands name this executable in full", () => {
  const exe = "/opt/my tools/deno";
  const files = { [exe]: exe };
  assert.equal(denoCommand(launch({ PATH: "/usr/bin:/bin" }, exe, files)), "'/opt/my tools/deno'");
});

Deno.test("another deno first on the caller's PATH is not the one printed", () => {
  const exe = "/home/u/.deno/bin/deno";
  const files = { [exe]: exe, "/usr/bin/deno": "/usr/lib/deno-1.46/deno" };
  assert.equal(denoCommand(launch({ PATH: "/usr/bin:/bin" }, exe, files)), exe);
});

Deno.test("shell words: safe ones bare, others single-quoted with quotes escaped", () => {
  assert.equal(shellWord("/usr/bin/deno"), "/usr/bin/deno");
  assert.equal(shellWord("it's here"), `'it'\\''s here'`);
});

Deno.test("a global deno that npx put on the process's PATH but the caller's PATH lacks is not deno", () => {
  // npm exec's own folders come first and end with its node-gyp-bin; the caller's PATH follows.
  const exe = "/usr/lib/node_modules/deno/deno";
  const files = { [exe]: exe, "/usr/bin/deno": exe };
  const env = {
    PATH: "/work/clone/node_modules/.bin:/usr/bin:/tmp/node_modules/.bin:" +
      "/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin:/home/u/bin:/bin",
    npm_lifecycle_event: "npx",
    npm_command: "exec",
  };
  assert.equal(denoCommand(launch(env, exe, files)), "npx -y deno@2.9.6");
});
