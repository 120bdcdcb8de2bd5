// The client half of HTTP digest as SIP uses it (RFC 3261 section 22.2, RFC 2617, RFC 7616, RFC
// 8760 for SHA-256 in SIP): read a 401's WWW-Authenticate or a 407's Proxy-Authenticate and answer
// it with Authorization or Proxy-Authorization for one request. The worker answers trunks'
// challenges with it when it places a call; the server half is the control plane's (api/sip/).
import { createHash } from "node:crypto";
import { splitList } from "./headers.ts";

export type DigestClientAlgorithm = "MD5" | "SHA-256";

export interface DigestChallenge {
  realm: string;
  nonce: string;
  algorithm: DigestClientAlgorithm;
  /** "auth" when the server offers it; undefined for RFC 2069 style (no qop). */
  qop?: "auth";
  opaque?: string;
}

const HASH: Record<DigestClientAlgorithm, string> = { "MD5": "md5", "SHA-256": "sha256" };
const h = (algorithm: DigestClientAlgorithm, text: string) =>
  createHash(HASH[algorithm]).update(text, "utf8").digest("hex");

/**
 * `Digest k=v, k="v"` → its parameters, names lower-cased, quotes and escapes removed (RFC 7616
 * section 3.4): a challenge's here, an Authorization's in the server half (api/sip/digest.ts).
 */
export function digestParams(value: string): Map<string, string> | undefined {
  const m = /^\s*Digest\s+(.*)$/is.exec(value);
  if (!m) return undefined;
  const params = new Map<string, string>();
  for (const part of splitList(m[1])) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    let v = part.slice(eq + 1).trim();
    if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) {
      v = v.slice(1, -1).replace(/\\(.)/g, "$1");
    }
    params.set(part.slice(0, eq).trim().toLowerCase(), v);
  }
  return params;
}

/** One challenge header, or undefined when it is not a digest we can answer (qop, algorithm). */
export function parseChallenge(value: string): DigestChallenge | undefined {
  const p = digestParams(value);
  const realm = p?.get("realm");
  const nonce = p?.get("nonce");
  if (!p || realm === undefined || !nonce) return undefined;
  const algorithm = (p.get("algorithm") ?? "MD5").toUpperCase();
  if (algorithm !== "MD5" && algorithm !== "SHA-256") return undefined;
  const qops = p.get("qop")?.split(",").map((q) => q.trim().toLowerCase());
  // auth-int would hash the body; a server that offers only it is not one we can answer.
  if (qops && !qops.includes("auth")) return undefined;
  return {
    realm,
    nonce,
    algorithm: algorithm as DigestClientAlgorithm,
    qop: qops ? "auth" : undefined,
    opaque: p.get("opaque"),
  };
}

/**
 * The challenge to answer among a response's headers: SHA-256 before MD5 when both are offered
 * (RFC 7616 section 3.7 has the client take the strongest it supports).
 */
export function chooseChallenge(values: string[]): DigestChallenge | undefined {
  const parsed = values.map(parseChallenge).filter((c): c is DigestChallenge => c !== undefined);
  return parsed.find((c) => c.algorithm === "SHA-256") ?? parsed[0];
}

export interface DigestAnswerInput {
  challenge: DigestChallenge;
  username: string;
  password: string;
  method: string;
  /** The Request-URI of the request being authorised (digest-uri). */
  uri: string;
  /** Client nonce; random unless given (the RFCs' worked examples give theirs). */
  cnonce?: string;
  /** Nonce count; 1 for the first request with this nonce. */
  nc?: number;
}

/** The response hash (RFC 7616 section 3.4.1; RFC 2617 section 3.2.2.1 without qop). */
export function digestResponse(i: DigestAnswerInput & { cnonce: string; nc: number }): string {
  const alg = i.challenge.algorithm;
  const ha1 = h(alg, `${i.username}:${i.challenge.realm}:${i.password}`);
  const ha2 = h(alg, `${i.method}:${i.uri}`);
  if (!i.challenge.qop) return h(alg, `${ha1}:${i.challenge.nonce}:${ha2}`);
  return h(alg, `${ha1}:${i.challenge.nonce}:${ncText(i.nc)}:${i.cnonce}:auth:${ha2}`);
}

const ncText = (nc: number) => nc.toString(16).padStart(8, "0");
const quoted = (v: string) => `"${v.replace(/(["\\])/g, "\\$1")}"`;

/** The Authorization (or Proxy-Authorization) header value answering `challenge`. */
export function digestAuthorization(i: DigestAnswerInput): string {
  const cnonce = i.cnonce ?? crypto.randomUUID().replaceAll("-", "");
  const nc = i.nc ?? 1;
  const c = i.challenge;
  const parts = [
    `username=${quoted(i.username)}`,
    `realm=${quoted(c.realm)}`,
    `nonce=${quoted(c.nonce)}`,
    `uri=${quoted(i.uri)}`,
    `response=${quoted(digestResponse({ ...i, cnonce, nc }))}`,
    `algorithm=${c.algorithm}`,
  ];
  if (c.qop) parts.push(`qop=auth`, `nc=${ncText(nc)}`, `cnonce=${quoted(cnonce)}`);
  if (c.opaque !== undefined) parts.push(`opaque=${quoted(c.opaque)}`);
  return `Digest ${parts.join(", ")}`;
}
