// Run by `deno task test` before the tests: the system parts the tests use (espeak-ng, festival
// and sox make speech fixtures; pocketsphinx is the worker's recogniser; Debian's Chromium runs the
// browser tests; kubectl checks the Kubernetes manifests; Debian's python3 with websockets,
// protobuf and protoc runs the Python brain SDK). Installs what is missing when it can (root with
// apt), otherwise says exactly what to run. An entry starting with "/" is a file, not a command.
const NEEDED: [commandOrFile: string, pkg: string][] = [
  ["espeak-ng", "espeak-ng"],
  ["text2wave", "festival"],
  ["sox", "sox"],
  ["chromium", "chromium"],
  ["pocketsphinx_continuous", "pocketsphinx"],
  ["/usr/share/pocketsphinx/model/en-us/en-us.lm.bin", "pocketsphinx-en-us"],
  ["/usr/include/pocketsphinx/pocketsphinx.h", "libpocketsphinx-dev"],
  // deploy/k8s/manifests.test.ts runs `kubectl create --dry-run=client` on the manifests.
  ["kubectl", "kubernetes-client"],
  // The Python brain SDK (sdk/python) runs on Debian's Python and its packages; its test
  // regenerates the protobuf classes with protoc to check the checked-in ones.
  ["/usr/bin/python3", "python3"],
  ["/usr/lib/python3/dist-packages/websockets/__init__.py", "python3-websockets"],
  ["/usr/lib/python3/dist-packages/google/protobuf/__init__.py", "python3-protobuf"],
  ["protoc", "protobuf-compiler"],
  // The SIP tests (tests/sip_calls_with_a_real_sipp_peer.test.ts) call a real peer: SIPp.
  ["sipp", "sip-tester"],
  // A real softphone as caller and callee (tests/*baresip*.test.ts).
  ["baresip", "baresip"],
  // The worker's echo canceller on phone lines (media/caller_audio/echo_canceller.ts, FFI).
  ["/usr/lib/x86_64-linux-gnu/libspeexdsp.so.1", "libspeexdsp1"],
];

function has(command: string): boolean {
  if (command.startsWith("/")) {
    try {
      return Deno.statSync(command).isFile;
    } catch {
      return false;
    }
  }
  const paths = (Deno.env.get("PATH") ?? "").split(":");
  return paths.some((dir) => {
    try {
      return Deno.statSync(`${dir}/${command}`).isFile;
    } catch {
      return false;
    }
  });
}

async function run(cmd: string, args: string[]): Promise<boolean> {
  const out = await new Deno.Command(cmd, {
    args,
    env: { DEBIAN_FRONTEND: "noninteractive" },
    stdout: "null",
    stderr: "inherit",
  }).output();
  return out.success;
}

if (import.meta.main) {
  const missing = NEEDED.filter(([command]) => !has(command)).map(([, pkg]) => pkg);
  if (missing.length) {
    const line = `apt-get update && apt-get install -y ${missing.join(" ")}`;
    const root = Deno.uid?.() === 0;
    if (!root || !has("apt-get")) {
      console.error(`The tests need: ${missing.join(", ")}. Run as root: ${line}`);
      Deno.exit(1);
    }
    console.log(`installing ${missing.join(", ")} (${line})`);
    if (
      !await run("apt-get", ["update", "-qq"]) ||
      !await run("apt-get", ["install", "-y", "-qq", ...missing])
    ) {
      console.error(`Installing failed. Run as root: ${line}`);
      Deno.exit(1);
    }
  }
}
