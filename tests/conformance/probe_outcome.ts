// What both conformance suites ask of a provider's probe: how it ended, and a place nobody answers.
import { freePort } from "../helpers/process.ts";

/** The fault a probe failed with; "accepted" when it did not fail. */
export async function outcome(work: () => Promise<unknown>): Promise<string> {
  try {
    await work();
    return "accepted";
  } catch (err) {
    return (err as { fault?: string }).fault ?? `no fault: ${(err as Error).message}`;
  }
}

/** A URL of `url`'s scheme and host where nothing listens. */
export function nowhere(url: string): string {
  const u = new URL(url);
  u.port = String(freePort());
  return u.toString().replace(/\/$/, "");
}
