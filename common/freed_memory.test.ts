import { assert } from "../tests/helpers/assert.ts";
import {
  canReleaseFreedMemory,
  releaseFreedMemory,
  releaseFreedMemoryEvery,
  releases,
} from "./freed_memory.ts";

const rssMb = () =>
  Number(Deno.readTextFileSync("/proc/self/status").match(/^VmRSS:\s+(\d+)/m)![1]) / 1024;

Deno.test("memory freed in the middle of a heap is resident until released, then given back", () => {
  if (!canReleaseFreedMemory()) return; // not glibc: nothing to release
  const libc = Deno.dlopen("libc.so.6", {
    malloc: { parameters: ["usize"], result: "pointer" },
    free: { parameters: ["pointer"], result: "void" },
  });
  try {
    // 100 MB in 64 kB chunks (below glibc's mmap threshold: heap memory, as array buffers and
    // decoders are), written so they are resident; the last one stays allocated above the
    // others, so glibc cannot hand the freed ones back by lowering the top of the heap.
    const chunks = Array.from({ length: 1600 }, () => {
      const p = libc.symbols.malloc(64n * 1024n)!;
      new Uint8Array(Deno.UnsafePointerView.getArrayBuffer(p, 64 * 1024)).fill(1);
      return p;
    });
    const pin = chunks.pop()!;
    for (const p of chunks) libc.symbols.free(p);
    const freedButResident = rssMb();
    releaseFreedMemory();
    const released = rssMb();
    libc.symbols.free(pin);
    assert(
      freedButResident - released > 50,
      `RSS ${freedButResident.toFixed(0)} MB after freeing 100 MB, ${
        released.toFixed(0)
      } MB after releasing: expected most of the 100 MB back`,
    );
  } finally {
    libc.close();
  }
});

Deno.test("a worker's periodic release runs on its own and stops when told", async () => {
  if (!canReleaseFreedMemory()) return;
  const before = releases.count;
  const stop = releaseFreedMemoryEvery(20);
  await new Promise((r) => setTimeout(r, 150));
  stop();
  const ran = releases.count - before;
  assert(ran >= 2, `released ${ran} times in 150 ms at every 20 ms`);
  await new Promise((r) => setTimeout(r, 100));
  assert(releases.count - before === ran, "released again after stop()");
});
