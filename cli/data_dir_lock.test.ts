// The data folder lock across two real processes: refused while another process holds it (the
// message names the folder and the holder's pid, and the folder is left as it was), and free
// again as soon as the holder is killed, without any clean-up (the OS drops a flock with its
// process).
import { assert, assertEquals } from "../tests/helpers/assert.ts";
import { DataDirInUse, LOCK_FILE, lockDataDir } from "./data_dir_lock.ts";

const MODULE = new URL("./data_dir_lock.ts", import.meta.url).href;

/** A process that takes the lock, says so, and waits to be killed. */
async function holder(dataDir: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import { lockDataDir } from ${JSON.stringify(MODULE)};
       await lockDataDir(${JSON.stringify(dataDir)});
       console.log("locked");
       setInterval(() => {}, 1000);`,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.getReader();
  const { value } = await reader.read();
  assertEquals(new TextDecoder().decode(value).trim(), "locked");
  reader.releaseLock();
  return child;
}

Deno.test("a data folder locked by another process is refused, and freed when that process is killed", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "lock-" });
  const child = await holder(dataDir);
  try {
    await Deno.writeTextFile(`${dataDir}/demo-key.json`, "theirs\n");
    const refused = await lockDataDir(dataDir).then(() => undefined, (err) => err);
    assert(refused instanceof DataDirInUse, `not refused: ${refused}`);
    assertEquals(refused.holder, String(child.pid));
    assert(refused.message.includes(dataDir), refused.message);
    assert(refused.message.includes(`process ${child.pid}`), refused.message);
    // Refused: nothing of the holder's was changed, its pid included.
    assertEquals(await Deno.readTextFile(`${dataDir}/demo-key.json`), "theirs\n");
    assertEquals((await Deno.readTextFile(`${dataDir}/${LOCK_FILE}`)).trim(), String(child.pid));
  } finally {
    child.kill("SIGKILL");
    await child.status;
    await child.stdout.cancel().catch(() => {});
  }
  // Killed without a chance to clean up: the lock went with it.
  const lock = await lockDataDir(dataDir);
  assertEquals((await Deno.readTextFile(`${dataDir}/${LOCK_FILE}`)).trim(), String(Deno.pid));
  lock.release();
  await Deno.remove(dataDir, { recursive: true });
});
