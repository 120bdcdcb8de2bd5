// SIP digest authentication on the server side (RFC 3261 section 22, RFC 2617 and RFC 7616 for
// the computation, RFC 8760 for SHA-256 in SIP). Written here rather than taken from npm: the
// packages found are client-side (they answer challenges) or tie the nonce to server state; this
// needs the server half, with a stateless nonce, in ~150 lines over node:crypto.
//
// The nonce carries its own expiry and an HMAC over it and over the address it was issued to, so
// any API process sharing the secret can verify it without nonce state, and a nonce is good only
// from the address that was challenged (Kamailio's auth_checks source-IP check): a nonce fetched
// from one address cannot be spent, or make refusals counted, from another. A nonce is spent
// once: the redirect writes it with the session it admits (db admission_keys, phone_calls.ts), so
// a captured Authorization, copied into another INVITE, opens nothing (RFC 7616 section 5.7's
// one-time nonces).
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { digestParams } from "../../sip/digest_client.ts";

export type DigestAlgorithm = "MD5" | "SHA-256";

/** Credentials as stored: the password's HA1 in both algorithms, never the password. */
export interface DigestCredentials {
  username: string;
  realm: string;
  ha1_md5: string;
  ha1_sha256: string;
}

const HASH: Record<DigestAlgorithm, string> = { "MD5": "md5", "SHA-256": "sha256" };
const h = (algorithm: DigestAlgorithm, text: string) =>
  createHash(HASH[algorithm]).update(text, "utf8").digest("hex");

/** HA1 = H(username:realm:password) in both algorithms (RFC 7616 section 3.4.2). */
export function digestCredentials(
  username: string,
  realm: string,
  password: string,
): DigestCredentials {
  const a1 = `${username}:${realm}:${password}`;
  return { username, realm, ha1_md5: h("MD5", a1), ha1_sha256: h("SHA-256", a1) };
}

const b64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

export type NonceState = "fresh" | "stale" | "invalid";

/** Stateless nonces: `expiry.random.mac`, the mac an HMAC-SHA-256 of the rest. */
export class DigestNonces {
  constructor(
    private readonly secret: string,
    readonly lifetimeSeconds = 300,
    private readonly now: () => number = Date.now,
  ) {}

  private mac(body: string, address: string): string {
    return b64url(
      createHmac("sha256", this.secret).update(`sip-nonce|${body}|${address}`).digest(),
    ).slice(0, 27);
  }

  /** A nonce for a challenge sent to `address` (the source address, without its port). */
  issue(address = ""): string {
    const expires = Math.floor(this.now() / 1000) + this.lifetimeSeconds;
    const body = `${expires.toString(36)}.${b64url(crypto.getRandomValues(new Uint8Array(9)))}`;
    return `${body}.${this.mac(body, address)}`;
  }

  /**
   * `stale`: ours, but expired (the client retries with a new nonce, RFC 7616 section 3.3);
   * `invalid`: not ours, or issued to another address.
   */
  check(nonce: string, address = ""): NonceState {
    const m = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]{12})\.([A-Za-z0-9_-]{27})$/.exec(nonce);
    if (!m) return "invalid";
    const expected = new TextEncoder().encode(this.mac(`${m[1]}.${m[2]}`, address));
    const given = new TextEncoder().encode(m[3]);
    if (!timingSafeEqual(expected, given)) return "invalid";
    return parseInt(m[1], 36) * 1000 > this.now() ? "fresh" : "stale";
  }
}

/**
 * The WWW-Authenticate values of a 401: one per algorithm (RFC 8760 section 2.4), MD5 first. A UAC
 * that knows SHA-256 finds it and may prefer it; one that reads only the first challenge (SIPp
 * 3.6 does, and refuses any but MD5: tests/sip_redirect_server_*) still gets one it can answer.
 */
export function challenges(realm: string, nonce: string, stale = false): string[] {
  return (["MD5", "SHA-256"] as const).map((algorithm) =>
    `Digest realm="${realm}", nonce="${nonce}", algorithm=${algorithm}, qop="auth"` +
    (stale ? ", stale=true" : "")
  );
}

export interface DigestResponse {
  username: string;
  realm: string;
  nonce: string;
  uri: string;
  response: string;
  algorithm: string;
  qop?: string;
  nc?: string;
  cnonce?: string;
}

/** `Digest name=value, name="quoted", ...` (RFC 7616 section 3.4); undefined when not digest. */
export function parseAuthorization(value: string): DigestResponse | undefined {
  const params = digestParams(value);
  if (!params) return undefined;
  const get = (k: string) => params.get(k);
  const [username, realm, nonce, uri, response] = ["username", "realm", "nonce", "uri", "response"]
    .map(get);
  if (!username || realm === undefined || !nonce || !uri || !response) return undefined;
  return {
    username,
    realm,
    nonce,
    uri,
    response,
    algorithm: get("algorithm") ?? "MD5",
    qop: get("qop"),
    nc: get("nc"),
    cnonce: get("cnonce"),
  };
}

/**
 * Whether `d` is the right response for `method` with these credentials (RFC 7616 section 3.4.1:
 * qop=auth, or RFC 2069's form without qop). The -sess algorithms and auth-int are refused.
 */
export function responseMatches(
  d: DigestResponse,
  method: string,
  credentials: DigestCredentials,
): boolean {
  const algorithm = d.algorithm.toUpperCase() === "SHA-256"
    ? "SHA-256"
    : d.algorithm.toUpperCase() === "MD5"
    ? "MD5"
    : undefined;
  if (!algorithm) return false;
  if (d.username !== credentials.username || d.realm !== credentials.realm) return false;
  const ha1 = algorithm === "MD5" ? credentials.ha1_md5 : credentials.ha1_sha256;
  const ha2 = h(algorithm, `${method}:${d.uri}`);
  let expected: string;
  if (d.qop === undefined) expected = h(algorithm, `${ha1}:${d.nonce}:${ha2}`);
  else if (d.qop.toLowerCase() === "auth" && d.nc && d.cnonce) {
    expected = h(algorithm, `${ha1}:${d.nonce}:${d.nc}:${d.cnonce}:auth:${ha2}`);
  } else return false;
  const given = new TextEncoder().encode(d.response.toLowerCase());
  const want = new TextEncoder().encode(expected);
  return given.length === want.length && timingSafeEqual(given, want);
}
