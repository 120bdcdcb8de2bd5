/**
 * `p`'s result, or a rejection with `signal`'s reason as soon as it aborts, whichever comes
 * first. For a wait whose source is told of the abort but may not end the wait itself: a read
 * already waiting on a fetch body has been seen to stay pending after the request's signal
 * aborted (CI: a 5 s provider stall with a 200 ms read timeout ended after 5 s).
 */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    p.catch(() => {}); // its later rejection, if any, is no one's to handle
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
