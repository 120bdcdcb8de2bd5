// Whether an INVITE may use a number's trunk: its source address on the trunk's allowlist, or
// digest credentials (RFC 3261 section 22, RFC 7616) for the trunk's realm, answering a nonce we
// issued to this source address, for this very Request-URI. Every way of not matching a trunk
// (no such number, a source not on the list, no credentials) is answered alike: a challenge in
// the trunk's realm, or DEFAULT_REALM where there is no digest trunk; then any credentials that
// do not verify get the same 403. So an INVITE without the password cannot tell a number that
// exists from one that does not (docs/security.md "Phone calls").
import { inCidr, parseCidr, parseIp } from "../../common/ipaddr.ts";
import type { TrunkCheck } from "../../db/trunks.ts";
import { dialledUser } from "../../sip/headers.ts";
import type { SipRequest } from "../../sip/message.ts";
import { DEFAULT_REALM } from "../admin/phone_input.ts";
import { challenges, type DigestNonces, parseAuthorization, responseMatches } from "./digest.ts";
import type { InviteAnswer, InviteSource } from "./redirect.ts";

export type TrunkVerdict =
  /** The INVITE may go on; `nonce` is the digest nonce it spent, if it used one. */
  | { ok: true; nonce?: string }
  /**
   * Refused with `answer`; `failed` when credentials were offered and did not verify (what the
   * per-source lockout counts), `reason` for the log (never the credentials).
   */
  | { ok: false; answer: InviteAnswer; reason: string; failed: boolean; username?: string };

function sourceAllowed(source: InviteSource, cidrs: string[]): boolean {
  const ip = parseIp(source.address);
  if (!ip) return false;
  return cidrs.some((c) => {
    const cidr = parseCidr(c);
    return cidr !== undefined && inCidr(ip, cidr);
  });
}

/** The 401 every unauthorised INVITE gets: one challenge per algorithm, a nonce for `source`. */
export function challenge(
  realm: string,
  nonces: DigestNonces,
  source: InviteSource,
  stale = false,
): InviteAnswer {
  return {
    status: 401,
    reason: "Unauthorized",
    headers: challenges(realm, nonces.issue(source.address), stale).map((value) => ({
      name: "WWW-Authenticate",
      value,
    })),
  };
}

/**
 * Whether the digest's uri names what the request asks for: the same URI, or one dialling the
 * same user (a UAC may write the URI with other parameters or another host form; the number is
 * what the credentials authorise).
 */
function sameTarget(digestUri: string, requestUri: string): boolean {
  if (digestUri === requestUri) return true;
  const user = dialledUser(requestUri);
  return user !== undefined && dialledUser(digestUri) === user;
}

const REFUSED: InviteAnswer = { status: 403, reason: "Forbidden (credentials refused)" };

/**
 * The check for `trunk`; null `trunk` is an INVITE no trunk can admit (an unknown or disabled
 * number), answered as a digest trunk of DEFAULT_REALM whose password nobody has would be.
 */
export function checkTrunk(
  request: SipRequest,
  source: InviteSource,
  trunk: TrunkCheck | null,
  nonces: DigestNonces,
): TrunkVerdict {
  if (trunk && sourceAllowed(source, trunk.allowed_sources)) return { ok: true };
  const auth = trunk?.auth;
  const realm = auth?.realm ?? DEFAULT_REALM;
  const why = !trunk ? "no such number" : !auth ? "source not allowed" : undefined;
  // Credentials for our realm (a UAC may carry others' for proxies on the way).
  const offered = request.headers.filter((h) => h.name === "Authorization")
    .map((h) => parseAuthorization(h.value))
    .find((d) => d?.realm === realm);
  if (!offered) {
    return {
      ok: false,
      answer: challenge(realm, nonces, source),
      reason: why ?? "challenged",
      failed: false,
    };
  }
  const username = offered.username.slice(0, 64);
  const nonce = nonces.check(offered.nonce, source.address);
  if (nonce === "invalid") {
    return {
      ok: false,
      answer: challenge(realm, nonces, source),
      reason: why ?? "nonce not ours or not issued to this address",
      failed: false,
      username,
    };
  }
  const refused = (reason: string): TrunkVerdict => ({
    ok: false,
    answer: REFUSED,
    reason,
    failed: true,
    username,
  });
  if (!auth) return refused(why!);
  // RFC 7616 section 3.4.6: the response covers the URI it names; it must be this request's,
  // or an answer captured for one number would open calls to another.
  if (!sameTarget(offered.uri, request.uri)) return refused("digest uri is not the Request-URI");
  if (!responseMatches(offered, request.method, auth)) return refused("wrong credentials");
  // Right credentials on an expired nonce: asked again with stale=true (RFC 7616 section 3.3),
  // so the client answers the new nonce without asking its user.
  if (nonce === "stale") {
    return {
      ok: false,
      answer: challenge(realm, nonces, source, true),
      reason: "stale nonce",
      failed: false,
      username,
    };
  }
  return { ok: true, nonce: offered.nonce };
}
