import { assertEquals } from "../tests/helpers/assert.ts";
import { threadNames } from "./thread_name.ts";

Deno.test("a Worker thread names itself and the process's thread list shows the name", async () => {
  const source = `
    import { nameThisThread } from ${
    JSON.stringify(new URL("./thread_name.ts", import.meta.url).href)
  };
    self.postMessage(nameThisThread("stt-test-0123456789"));`;
  const worker = new Worker(`data:text/javascript,${encodeURIComponent(source)}`, {
    type: "module",
  });
  try {
    const named = await new Promise((resolve) => worker.onmessage = (e) => resolve(e.data));
    assertEquals(named, true);
    // Linux keeps 15 bytes of it.
    assertEquals([...threadNames().values()].includes("stt-test-012345"), true);
  } finally {
    worker.terminate();
  }
});

Deno.test("the main thread keeps its name when no one renames it", () => {
  assertEquals(threadNames().get(Deno.pid), "deno");
});
