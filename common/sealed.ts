// Secrets the service must present later (a trunk's outbound digest password), kept encrypted:
// AES-256-GCM under TRUNK_CREDENTIALS_KEY, never in the database. Stored as base64 of
// iv (12 bytes) || ciphertext || tag. The additional data binds a sealed value to what owns it
// (the trunk's id), so a value copied onto another row does not open there.

export const TRUNK_CREDENTIALS_KEY = "TRUNK_CREDENTIALS_KEY";

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value did not open: wrong key, another owner's value, or altered bytes. */
export class SealedOpenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SealedOpenError";
  }
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/** The key from its base64 text (32 bytes); a bad one names the variable it came from. */
export async function importSealingKey(
  raw: string,
  variable = TRUNK_CREDENTIALS_KEY,
): Promise<CryptoKey> {
  const bytes = fromBase64(raw.trim());
  if (!bytes || bytes.length !== 32) {
    throw new Error(
      `${variable} must be base64 of 32 random bytes (e.g. \`openssl rand -base64 32\`)`,
    );
  }
  return await crypto.subtle.importKey("raw", bytes, "AES-GCM", false, ["encrypt", "decrypt"]);
}

/** A new key's base64 text (what `deno task run` keeps in its data folder). */
export function newSealingKeyText(): string {
  return toBase64(crypto.getRandomValues(new Uint8Array(32)));
}

export async function seal(key: CryptoKey, plaintext: string, owner: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(owner) },
      key,
      new TextEncoder().encode(plaintext),
    ),
  );
  const out = new Uint8Array(IV_BYTES + sealed.length);
  out.set(iv);
  out.set(sealed, IV_BYTES);
  return toBase64(out);
}

/** The plaintext; throws SealedOpenError (never returning garbage) when it does not open. */
export async function open(key: CryptoKey, stored: string, owner: string): Promise<string> {
  const bytes = fromBase64(stored);
  if (!bytes || bytes.length < IV_BYTES + TAG_BYTES) {
    throw new SealedOpenError(`the sealed value of ${owner} is not one this service wrote`);
  }
  try {
    const plain = await crypto.subtle.decrypt(
      {
        name: "AES-GCM",
        iv: bytes.slice(0, IV_BYTES),
        additionalData: new TextEncoder().encode(owner),
      },
      key,
      bytes.slice(IV_BYTES),
    );
    return new TextDecoder().decode(plain);
  } catch {
    throw new SealedOpenError(
      `the sealed value of ${owner} does not open with this ${TRUNK_CREDENTIALS_KEY} ` +
        "(another key sealed it, or it was moved from another trunk)",
    );
  }
}
