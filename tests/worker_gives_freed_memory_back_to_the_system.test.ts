// A worker gives the memory its calls freed back to the system on its own, every
// MEMORY_RELEASE_SECONDS: without it, glibc kept what calls freed resident and a worker's RSS
// ratcheted up ~2.5-6 MB a minute under calls (bench/media/README.md, soak). The worker runs as
// the service runs it (media/main.ts in its own process); its /metrics count the releases.
import { assert } from "./helpers/assert.ts";
import { startTestApi } from "./helpers/api_server.ts";
import { startWorkerProcess, type WorkerProcess } from "./helpers/process.ts";
import { sample } from "../common/metrics/testing.ts";

const ADMIN = "adm_freed_memory_0123456789";

async function releases(worker: WorkerProcess): Promise<number> {
  const res = await fetch(`${worker.url}/metrics`, {
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  return sample(await res.text(), "voice_process_memory_releases_total") ?? NaN;
}

Deno.test("a worker gives freed memory back to the system every MEMORY_RELEASE_SECONDS", async () => {
  const api = await startTestApi({}, { node: false });
  let worker: WorkerProcess | undefined;
  try {
    worker = await startWorkerProcess(api.db.url, "node-freed-memory", {
      ADMIN_TOKEN: ADMIN,
      MEMORY_RELEASE_SECONDS: "1",
    });
    const first = await releases(worker);
    const until = Date.now() + 15_000;
    let now = first;
    while (!(now >= first + 2) && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 250));
      now = await releases(worker);
    }
    assert(now >= first + 2, `releases counted: ${first}, then ${now} (expected one a second)`);
  } finally {
    await worker?.stop();
    await api.close();
  }
});
