// What the SIP redirect server answers an INVITE: the dialled number → its agent, the number's
// trunk → the source address or digest credentials (trunk_check.ts: 401/403, and an unknown
// number answered as a trunk whose password nobody has), then the session as sessions.connect
// makes it (phone_session.ts) and a 302 to that worker's SIP address with the token in the
// Request-URI. Every refusal comes before the one statement that writes, and that statement
// writes nothing when no node can take the call (503), when the trunk or the source has its
// limit of calls not yet started (503), or when the digest nonce was spent before (401 stale).
// Refusals are logged with source, port and reason, rate-limited (common/refusal_log.ts).
import { addressKey, parseIp } from "../../common/ipaddr.ts";
import { logger } from "../../common/log.ts";
import { RefusalLog } from "../../common/refusal_log.ts";
import { type PhoneNumberRoute, phoneRoute } from "../../db/phone_numbers.ts";
import type { TrunkCheck } from "../../db/trunks.ts";
import { dialledUser, parseNameAddr } from "../../sip/headers.ts";
import { header, type SipRequest } from "../../sip/message.ts";
import type { ApiDeps } from "../context.ts";
import { RateLimiter } from "../auth/rate_limit.ts";
import { DEFAULT_REALM } from "../admin/phone_input.ts";
import type { DigestNonces } from "./digest.ts";
import type { InviteAnswer, InviteDecision, InviteSource } from "./redirect.ts";
import { createPhoneSession } from "./phone_session.ts";
import { challenge, checkTrunk } from "./trunk_check.ts";

const log = logger("sip-redirect");

/** How long a trunk is told to wait when no worker can take a call (Retry-After, section 20.33). */
export const FULL_FLEET_RETRY_AFTER_SECONDS = 5;

/**
 * The dialled number as E.164: `+` and 8-15 digits; digits alone get the `+` (trunks differ on
 * whether they send it). Undefined when it is not a phone number.
 */
export function dialledNumber(request: SipRequest): string | undefined {
  const requestUser = dialledUser(request.uri);
  const to = parseNameAddr(header(request, "To") ?? "")?.uri;
  for (const user of [requestUser, to ? dialledUser(to) : undefined]) {
    const m = user === undefined ? null : /^\+?([0-9]{8,15})$/.exec(user);
    if (m) return `+${m[1]}`;
  }
  return undefined;
}

/** The URI host, bracketed when it is IPv6 (RFC 3261 section 19.1.1, RFC 5118). */
const uriHost = (address: string) => address.includes(":") ? `[${address}]` : address;

/** `Contact: <sip:{number}@{worker}:{port};session={token}>`, with `;transport=tcp` over TCP. */
export function workerContact(
  number: string,
  node: { sip_address: string; sip_port: number },
  token: string,
  transport: "UDP" | "TCP",
): string {
  const tcp = transport === "TCP" ? ";transport=tcp" : "";
  return `<sip:${number}@${uriHost(node.sip_address)}:${node.sip_port};session=${token}${tcp}>`;
}

/**
 * Refused INVITEs whose credentials failed (wrong password, a digest for another URI, a number
 * no trunk admits), per source address: 10 at once, then one every 6 s. An address past that is
 * answered 503 with Retry-After before anything is looked up, right password or not (Kamailio's
 * pike and htable lock-out, in one process's memory like the API's other rate limits: with N API
 * processes an address gets N times the guesses, still about 10 a minute each).
 */
export const DIGEST_FAILURES_BURST = 10;
export const DIGEST_FAILURES_PER_SECOND = 1 / 6;

/**
 * The decision for every INVITE the redirect server takes (see the file's head). A number with no
 * trunk takes anyone's INVITE, as a publishable key takes anyone's connect: so its INVITEs are
 * limited per source address with the same knobs (RATE_LIMIT_PER_ADDRESS_*), or one sender could
 * fill the fleet with reserved slots.
 */
export function phoneCallDecision(deps: ApiDeps, nonces: DigestNonces): InviteDecision {
  const perAddress = new RateLimiter(
    deps.settings.rateLimitPerAddressPerSecond,
    deps.settings.rateLimitPerAddressBurst,
  );
  const failures = new RateLimiter(DIGEST_FAILURES_PER_SECOND, DIGEST_FAILURES_BURST);
  const refusals = new RefusalLog(log);
  return async (request, source) => {
    const ip = parseIp(source.address);
    const address = ip ? addressKey(ip) : source.address;
    const refuse = (answer: InviteAnswer, reason: string, username?: string) => {
      refusals.refused("INVITE refused", source.address, reason, {
        port: source.port,
        transport: source.transport,
        status: answer.status,
        number: dialledNumber(request),
        username,
      });
      return answer;
    };
    const locked = failures.waiting(address);
    if (locked > 0) {
      return refuse(
        unavailable("too many refused requests from this address", locked),
        "locked out after refused credentials",
      );
    }
    const number = dialledNumber(request);
    if (!number) {
      failures.take(address);
      return refuse(
        { status: 404, reason: "Not Found (no phone number in the Request-URI)" },
        "no phone number",
      );
    }
    const found = await phoneRoute(deps.sql, number);
    let once: string | undefined;
    if (!found || found.trunk) {
      const verdict = checkTrunk(request, source, found?.trunk ?? null, nonces);
      if (!verdict.ok) {
        if (verdict.failed) failures.take(address);
        return refuse(verdict.answer, verdict.reason, verdict.username);
      }
      once = verdict.nonce;
    } else {
      const wait = perAddress.take(address);
      if (wait > 0) {
        return refuse(unavailable("too many calls from this address", wait), "rate limited");
      }
    }
    const answer = await redirect(deps, nonces, request, source, found!, address, once);
    if (answer.status !== 302) {
      refuse(answer, answer.reason ?? "refused");
    }
    return answer;
  };
}

/** 503 naming why, with when to try again (by default, when a full fleet may have room). */
const unavailable = (
  reason: string,
  retryAfterSeconds = FULL_FLEET_RETRY_AFTER_SECONDS,
): InviteAnswer => ({
  status: 503,
  reason: `Service Unavailable (${reason})`,
  headers: [{ name: "Retry-After", value: String(retryAfterSeconds) }],
});

/** The session as connect makes it (phone_session.ts), then the 302 to the node that took it. */
async function redirect(
  deps: ApiDeps,
  nonces: DigestNonces,
  request: SipRequest,
  source: InviteSource,
  found: { route: PhoneNumberRoute; trunk: TrunkCheck | null },
  address: string,
  nonce: string | undefined,
): Promise<InviteAnswer> {
  const route = found.route;
  const caller = dialledUser(parseNameAddr(header(request, "From") ?? "")?.uri ?? "");
  const made = await createPhoneSession(deps, route, {
    caller,
    sip: true,
    // The nonce is spent with the session: a copy of this Authorization opens nothing more.
    once: nonce ? { keys: [`sip-nonce:${nonce}`], seconds: nonces.lifetimeSeconds } : undefined,
    trunk: found.trunk
      ? { id: found.trunk.trunk_id, pending: deps.settings.pendingSessionsPerTrunk }
      : undefined,
    source: { key: `sip:${address}`, pending: deps.settings.pendingSessionsPerSource },
  });
  if (made.kind === "replayed") {
    // A nonce already spent: asked again with a new one (stale=true), as for an expired one, so a
    // client that reuses a nonce (nc=2) retries at once; a copied header gets no further.
    return challenge(found.trunk?.auth?.realm ?? DEFAULT_REALM, nonces, source, true);
  }
  if (made.kind === "pending_limit") {
    return unavailable(
      `too many calls not yet started from this ${made.limit}`,
      made.retryAfterSeconds,
    );
  }
  if (made.kind === "unavailable") {
    log.warn("no worker for a phone call", { number: route.number, agent_id: route.agent_id });
    return unavailable(made.reason);
  }
  log.info("phone call redirected", {
    session_id: made.session_id,
    agent_id: made.agent_id,
    node_id: made.node.node_id,
    number: route.number,
  });
  const node = { sip_address: made.node.sip_address!, sip_port: made.node.sip_port! };
  return {
    status: 302,
    reason: "Moved Temporarily",
    headers: [{
      name: "Contact",
      value: workerContact(route.number, node, made.token, source.transport),
    }],
  };
}
