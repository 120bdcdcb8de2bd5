// The probe every provider leg owes its breaker (media/engines/breaker.ts), checked the same way
// by both conformance suites: accepted with the key and doing no work, a wrong key an `auth`
// fault, nobody there a `connection` fault.
import { assert, assertEquals } from "../helpers/assert.ts";
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
function nowhere(url: string): string {
  const u = new URL(url);
  u.port = String(freePort());
  return u.toString().replace(/\/$/, "");
}

interface Probed {
  probe?(): Promise<void>;
  close(): Promise<void>;
}

/**
 * `fake` accepts `key`; `engine` makes the leg at a URL with a key; `checkNoWork` fails when the
 * fake saw any audio made or sent.
 */
export async function checkProbe(
  fake: { url: string; close(): Promise<void> },
  engine: (url: string, apiKey: string) => Probed,
  key: string,
  checkNoWork: () => void,
): Promise<void> {
  try {
    const right = engine(fake.url, key);
    const wrong = engine(fake.url, `wrong-${key}`);
    assert(right.probe && wrong.probe, "a provider engine has a probe");
    assertEquals(await outcome(() => right.probe!()), "accepted");
    assertEquals(await outcome(() => wrong.probe!()), "auth");
    checkNoWork();
    await right.close();
    await wrong.close();
  } finally {
    await fake.close();
  }
  const away = engine(nowhere(fake.url), key);
  assertEquals(await outcome(() => away.probe!()), "connection");
  await away.close();
}
