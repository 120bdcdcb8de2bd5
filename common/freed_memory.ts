// Gives the memory this process freed back to the system (glibc's malloc_trim). glibc keeps
// freed chunks in its arenas for reuse and returns only a free top of a heap; a chunk still in use
// above the free ones pins them. A worker frees a lot in the middle of its heaps: array buffers
// (every packet and audio frame; V8 allocates their bytes with malloc) on the main thread, and a
// ~21 MB recognition decoder each time an idle one is dropped (pocketsphinx_decoding.ts), so its
// resident size ratcheted up ~2.5-6 MB a minute under calls while what was in use stayed flat
// (bench/media/README.md, soak). malloc_trim(0) walks every arena and hands back the whole free
// pages inside them (madvise), whichever thread calls it.
// Linux with glibc only; elsewhere (or without FFI permission) it does nothing.

let libc:
  | Deno.DynamicLibrary<{ malloc_trim: { parameters: ["usize"]; result: "i32" } }>
  | null
  | undefined;

function open() {
  if (libc !== undefined) return libc;
  try {
    libc = Deno.dlopen("libc.so.6", { malloc_trim: { parameters: ["usize"], result: "i32" } });
  } catch {
    libc = null; // not glibc Linux, or no FFI permission
  }
  return libc;
}

/**
 * Returns the free memory of every malloc arena to the system now. Blocks the calling thread (and
 * briefly any thread allocating from an arena being walked) for a few milliseconds. Returns
 * whether glibc released anything; false where it is not available.
 */
export function releaseFreedMemory(): boolean {
  const l = open();
  if (!l) return false;
  const t0 = performance.now();
  const released = l.symbols.malloc_trim(0n) === 1;
  releases.count++;
  releases.seconds += (performance.now() - t0) / 1000;
  return released;
}

/** This thread's releases so far and the time they blocked it (the worker's metrics read them). */
export const releases = { count: 0, seconds: 0 };

/** Whether releaseFreedMemory can work here (glibc reachable through FFI). */
export function canReleaseFreedMemory(): boolean {
  return open() !== null;
}

/**
 * Calls releaseFreedMemory every `everyMs` (unref'd: it never keeps a process alive). Returns a
 * function that stops it.
 */
export function releaseFreedMemoryEvery(everyMs: number): () => void {
  if (!canReleaseFreedMemory()) return () => {};
  const timer = setInterval(releaseFreedMemory, everyMs);
  Deno.unrefTimer(timer);
  return () => clearInterval(timer);
}
