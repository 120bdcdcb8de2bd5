// What the worker needs from the operating system, checked before `deno task run` starts it:
// pocketsphinx and its English model (Debian packages). Installed when we can (root with
// apt-get), otherwise the exact command is printed.
import { POCKETSPHINX_APT_PACKAGES } from "../media/stt/pocketsphinx_ffi.ts";

const FILES = [
  "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin",
  "/usr/share/pocketsphinx/model/en-us/en-us/mdef",
];

function present(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

function libraryPresent(): boolean {
  try {
    Deno.dlopen("libpocketsphinx.so.3", {}).close();
    return true;
  } catch {
    return false;
  }
}

/** Returns true when everything is there (after installing it if it was not). */
export async function ensureSystemParts(log: (line: string) => void): Promise<boolean> {
  if (FILES.every(present) && libraryPresent()) return true;
  const line = `apt-get update && apt-get install -y ${POCKETSPHINX_APT_PACKAGES}`;
  const root = Deno.uid?.() === 0;
  if (!root) {
    log(`Speech recognition needs pocketsphinx. Run as root:\n  ${line}\nthen start again.`);
    return false;
  }
  log(`installing pocketsphinx (${line}) ...`);
  for (
    const args of [["update", "-qq"], [
      "install",
      "-y",
      "-qq",
      ...POCKETSPHINX_APT_PACKAGES.split(" "),
    ]]
  ) {
    const out = await new Deno.Command("apt-get", {
      args,
      env: { DEBIAN_FRONTEND: "noninteractive" },
      stdout: "null",
      stderr: "inherit",
    }).output().catch(() => ({ success: false }));
    if (!out.success) {
      log(`Installing failed. Run as root:\n  ${line}`);
      return false;
    }
  }
  return FILES.every(present) && libraryPresent();
}
