// What the SIP redirect server answers an INVITE: the dialled number → its agent (404 when
// unknown or disabled), the number's trunk → the source address or digest credentials (401/403),
// then the session as sessions.connect makes it (phone_session.ts) and a 302 to that worker's SIP
// address with the token in the Request-URI. Every refusal comes before the one statement that
// writes, and that statement writes nothing when no node can take the call (503).
import { inCidr, parseCidr, parseIp } from "../../common/ipaddr.ts";
import { logger } from "../../common/log.ts";
import { type PhoneNumberRoute, phoneRoute } from "../../db/phone_numbers.ts";
import type { TrunkCheck } from "../../db/trunks.ts";
import { dialledUser, parseNameAddr } from "../../media/sip/headers.ts";
import { header, type SipRequest } from "../../media/sip/message.ts";
import type { ApiDeps } from "../context.ts";
import { challenges, DigestNonces, parseAuthorization, responseMatches } from "./digest.ts";
import type { InviteAnswer, InviteDecision, InviteSource } from "./redirect.ts";
import { createPhoneSession } from "./phone_session.ts";

const log = logger("sip-redirect");

/** How long a trunk is told to wait when no worker can take a call (Retry-After, section 20.33). */
export const FULL_FLEET_RETRY_AFTER_SECONDS = 5;

/**
 * The dialled number as E.164: `+` and 8-15 digits; digits alone get the `+` (trunks differ on
 * whether they send it). Undefined when it is not a phone number.
 */
export function dialledNumber(request: SipRequest): string | undefined {
  const fromUri = dialledUser(request.uri);
  const to = parseNameAddr(header(request, "To") ?? "")?.uri;
  for (const user of [fromUri, to ? dialledUser(to) : undefined]) {
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

function sourceAllowed(source: InviteSource, cidrs: string[]): boolean {
  const ip = parseIp(source.address);
  if (!ip) return false;
  return cidrs.some((c) => {
    const cidr = parseCidr(c);
    return cidr !== undefined && inCidr(ip, cidr);
  });
}

/**
 * The trunk's check: undefined when the INVITE may go on, else the refusal (401 with fresh
 * challenges, stale=true on an expired nonce; 403 for wrong credentials or a source not allowed).
 */
function checkTrunk(
  request: SipRequest,
  source: InviteSource,
  trunk: TrunkCheck,
  nonces: DigestNonces,
): InviteAnswer | undefined {
  if (sourceAllowed(source, trunk.allowed_sources)) return undefined;
  const auth = trunk.auth;
  if (!auth) return { status: 403, reason: "Forbidden (source address not allowed)" };
  const challenge = (stale: boolean): InviteAnswer => ({
    status: 401,
    headers: challenges(auth.realm, nonces.issue(), stale).map((value) => ({
      name: "WWW-Authenticate",
      value,
    })),
  });
  // Credentials for our realm (a UAC may carry others' for proxies on the way).
  const offered = request.headers.filter((h) => h.name === "Authorization")
    .map((h) => parseAuthorization(h.value))
    .find((d) => d?.realm === auth.realm);
  if (!offered) return challenge(false);
  const nonce = nonces.check(offered.nonce);
  if (nonce === "invalid") return challenge(false);
  if (!responseMatches(offered, request.method, auth)) {
    return { status: 403, reason: "Forbidden (credentials refused)" };
  }
  // Right credentials on an expired nonce: asked again with stale=true (RFC 7616 section 3.3),
  // so the client answers the new nonce without asking its user.
  if (nonce === "stale") return challenge(true);
  return undefined;
}

/** The decision for every INVITE the redirect server takes (see the file's head). */
export function phoneCallDecision(deps: ApiDeps, nonces: DigestNonces): InviteDecision {
  return async (request, source) => {
    const number = dialledNumber(request);
    if (!number) return { status: 404, reason: "Not Found (no phone number in the Request-URI)" };
    const found = await phoneRoute(deps.sql, number);
    if (!found) return { status: 404, reason: "Not Found (no agent for this number)" };
    if (found.trunk) {
      const refused = checkTrunk(request, source, found.trunk, nonces);
      if (refused) {
        log.info("INVITE refused", { number, status: refused.status, source: source.address });
        return refused;
      }
    }
    return await redirect(deps, request, source, found.route);
  };
}

const unavailable = (reason: string): InviteAnswer => ({
  status: 503,
  reason: `Service Unavailable (${reason})`,
  headers: [{ name: "Retry-After", value: String(FULL_FLEET_RETRY_AFTER_SECONDS) }],
});

/** The session as connect makes it (phone_session.ts), then the 302 to the node that took it. */
async function redirect(
  deps: ApiDeps,
  request: SipRequest,
  source: InviteSource,
  route: PhoneNumberRoute,
): Promise<InviteAnswer> {
  const caller = dialledUser(parseNameAddr(header(request, "From") ?? "")?.uri ?? "");
  const made = await createPhoneSession(deps, route, { caller, sip: true });
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
