// Sealed values open only with the key and for the owner they were sealed for.
import { assert, assertEquals } from "../tests/helpers/assert.ts";
import { importSealingKey, newSealingKeyText, open, seal, SealedOpenError } from "./sealed.ts";

async function rejects(
  fn: () => Promise<unknown>,
  type: abstract new (message: string) => Error = Error,
): Promise<Error> {
  try {
    await fn();
  } catch (err) {
    assert(err instanceof type, `expected ${type.name}, got ${err}`);
    return err;
  }
  throw new Error(`expected ${type.name} to be thrown`);
}

Deno.test("a sealed password opens with its key and owner, and holds no plaintext", async () => {
  const key = await importSealingKey(newSealingKeyText());
  const sealed = await seal(key, "carrier-pass-42", "trk_a");
  assert(!sealed.includes("carrier-pass-42"));
  assert(!atob(sealed).includes("carrier-pass-42"));
  assertEquals(await open(key, sealed, "trk_a"), "carrier-pass-42");
  // A fresh iv each time: the same password seals to different bytes.
  assert(await seal(key, "carrier-pass-42", "trk_a") !== sealed);
});

Deno.test("a wrong key, another owner, or altered bytes fail loudly", async () => {
  const key = await importSealingKey(newSealingKeyText());
  const other = await importSealingKey(newSealingKeyText());
  const sealed = await seal(key, "carrier-pass-42", "trk_a");
  const wrongKey = await rejects(() => open(other, sealed, "trk_a"), SealedOpenError);
  assert(wrongKey.message.includes("TRUNK_CREDENTIALS_KEY"), wrongKey.message);
  await rejects(() => open(key, sealed, "trk_b"), SealedOpenError);
  const bytes = Uint8Array.from(atob(sealed), (c) => c.charCodeAt(0));
  bytes[bytes.length - 1] ^= 1;
  await rejects(
    () => open(key, btoa(String.fromCharCode(...bytes)), "trk_a"),
    SealedOpenError,
  );
  await rejects(() => open(key, "not base64!", "trk_a"), SealedOpenError);
});

Deno.test("a key that is not base64 of 32 bytes is refused naming the variable", async () => {
  for (const raw of ["", "abc", btoa("x".repeat(31)), btoa("x".repeat(33))]) {
    const err = await rejects(() => importSealingKey(raw));
    assert(err.message.includes("TRUNK_CREDENTIALS_KEY"));
  }
});
