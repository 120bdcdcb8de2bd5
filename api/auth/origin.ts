// The publishable-key origin allowlist. Fails closed: no Origin header, an empty allowlist or
// an origin not on it is refused.

/** The serialized origin (scheme://host[:port]) of an allowlist entry or header, lowercased. */
export function normalizeOrigin(value: string): string | undefined {
  try {
    const url = new URL(value);
    if (url.origin === "null") return undefined;
    return url.origin.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * A value as it may stand on a key's allowlist: exactly scheme://host[:port], no path and no
 * trailing slash; returned normalized, or undefined when it is not one.
 */
export function allowlistOrigin(value: string): string | undefined {
  const n = normalizeOrigin(value);
  if (!n || new URL(value).pathname !== "/" || value.endsWith("/")) return undefined;
  return n;
}

export function originAllowed(origin: string | undefined, allowlist: string[]): boolean {
  if (!origin || allowlist.length === 0) return false;
  const o = normalizeOrigin(origin);
  return o !== undefined && allowlist.some((a) => normalizeOrigin(a) === o);
}
