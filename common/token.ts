// The session token: an EdDSA (Ed25519) JWT naming one session and one worker node.
// EdDSA because Deno's P-256 is an order of magnitude slower (stack-notes §9).
import * as jose from "jose";
import { newId } from "./ids.ts";

// jose's own key type: with @types/node in the graph its CryptoKey is node's, not the DOM's.
type JoseKey = Awaited<ReturnType<typeof jose.importJWK>>;

const ALG = "EdDSA";
const ISSUER = "voice-api";

export interface SessionClaims {
  /** Session id. */
  sid: string;
  /** Chosen worker node id. */
  aud: string;
  /** Agent id. */
  sub: string;
  /** Workspace id. */
  ten: string;
  /** The normalized agent input. */
  input: unknown;
  jti: string;
  exp: number;
  iat: number;
}

export interface MintedToken {
  token: string;
  jti: string;
  expiresAt: Date;
}

/** Makes a new private JWK for TOKEN_SIGNING_KEY. */
export async function generateSigningJwk(): Promise<string> {
  const { privateKey } = await jose.generateKeyPair(ALG, { crv: "Ed25519", extractable: true });
  const jwk = await jose.exportJWK(privateKey);
  return JSON.stringify({ ...jwk, alg: ALG, kid: newId("tok").slice(4, 16) });
}

function publicPart(jwk: jose.JWK): jose.JWK {
  const { d: _d, ...pub } = jwk;
  return pub;
}

export class TokenSigner {
  private constructor(private key: JoseKey, private kid: string) {}

  static async fromJwk(json: string): Promise<TokenSigner> {
    const jwk = JSON.parse(json) as jose.JWK;
    if (!jwk.d) throw new Error("TOKEN_SIGNING_KEY must be a private Ed25519 JWK");
    return new TokenSigner(await jose.importJWK(jwk, ALG), jwk.kid ?? "default");
  }

  /** Signs a token whose id and expiry the caller fixed (they are stored on the session). */
  async mint(
    claims: { sid: string; aud: string; sub: string; ten: string; input: unknown },
    timing: { jti: string; expiresAt: Date },
    now = Date.now(),
  ): Promise<MintedToken> {
    const jti = timing.jti;
    const iat = Math.floor(now / 1000);
    const exp = Math.floor(timing.expiresAt.getTime() / 1000);
    const token = await new jose.SignJWT({ sid: claims.sid, ten: claims.ten, input: claims.input })
      .setProtectedHeader({ alg: ALG, kid: this.kid })
      .setIssuer(ISSUER)
      .setSubject(claims.sub)
      .setAudience(claims.aud)
      .setJti(jti)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(this.key);
    return { token, jti, expiresAt: new Date(exp * 1000) };
  }
}

export type TokenRefusal = "invalid_token" | "token_expired" | "wrong_node";

export class TokenError extends Error {
  constructor(readonly reason: TokenRefusal, message: string) {
    super(message);
  }
}

export class TokenVerifier {
  private constructor(private key: JoseKey) {}

  static async fromJwk(json: string): Promise<TokenVerifier> {
    return new TokenVerifier(await jose.importJWK(publicPart(JSON.parse(json)), ALG));
  }

  /**
   * Checks signature, issuer, expiry and that the token was minted for `nodeId`.
   * `ignoreExpiry` is for a call already running on its token (a renegotiation or a
   * `restart_pc` after the token's minutes are up): the signature still has to hold.
   */
  async verify(
    token: string,
    nodeId: string,
    options: { ignoreExpiry?: boolean } = {},
  ): Promise<SessionClaims> {
    let payload: jose.JWTPayload;
    try {
      let currentDate: Date | undefined;
      if (options.ignoreExpiry) {
        const exp = jose.decodeJwt(token).exp;
        if (typeof exp === "number") currentDate = new Date((exp - 1) * 1000);
      }
      ({ payload } = await jose.jwtVerify(token, this.key, {
        issuer: ISSUER,
        algorithms: [ALG],
        currentDate,
      }));
    } catch (err) {
      if (err instanceof jose.errors.JWTExpired) {
        throw new TokenError("token_expired", "The session token has expired.");
      }
      throw new TokenError("invalid_token", "The session token is not valid.");
    }
    const aud = Array.isArray(payload.aud) ? payload.aud[0] : payload.aud;
    if (aud !== nodeId) {
      throw new TokenError("wrong_node", "The session token was issued for another worker node.");
    }
    if (typeof payload.sid !== "string" || typeof payload.jti !== "string") {
      throw new TokenError("invalid_token", "The session token is not valid.");
    }
    return payload as unknown as SessionClaims;
  }
}
