// The person's call of a warm transfer (issue 35), placed by the worker's own UAC (uac.ts) from
// its SIP socket: to a sip: URI directly (its host, an address or a name resolved here, port 5060
// and transport ;transport=tcp, else UDP); to a tel: URI or an E.164 number through the trunk the
// call came in (or went out) on, at its outbound_address and outbound_transport. The worker holds
// no TRUNK_CREDENTIALS_KEY, so a trunk with outbound credentials is refused before the caller is
// held, and one that challenges anyway fails "refused" (docs/decisions.md). Once answered the
// person's call is a SipLine held beside the caller's, so its BYE and re-INVITEs find it.
import type { SessionLog } from "../call/session_log.ts";
import type { RtpMedia } from "../phone/rtp_media.ts";
import type { Peer } from "../../sip/udp.ts";
import { reasonOfStatus, type TransferFailReason } from "../call/transfer.ts";
import { SipLine } from "./sip_line.ts";
import type { SipUas } from "./uas.ts";
import type { SessionTrunkEdge } from "../../db/trunks.ts";
import { E164 } from "../../common/dial.ts";
import { type DialFailure, PlacedCall } from "./uac.ts";
import type { LegOutcome, LegPlacer } from "./warm_transfer.ts";

/** A call as the SIP service holds it by Call-ID (dial_call.ts HeldCall), as far as used here. */
interface Held {
  from: string;
  line?: SipLine;
}

export interface LegDeps<H extends Held> {
  uas: SipUas;
  openMedia: (host: string) => Promise<RtpMedia>;
  /** The address calls' RTP binds to. */
  host: string;
  /** The SIP service's calls by Call-ID: the person's is added once answered. */
  held: Map<string, H>;
  /** The caller's call: its session (claims, log) and numbers. */
  caller: H & { log: SessionLog };
  /** The trunk the caller's call is on (sessions.phone_trunk_id), or undefined. */
  trunk: () => Promise<SessionTrunkEdge | undefined>;
}

/** A target the worker can ring itself. */
interface Reachable {
  user: string;
  host: string;
  port: number;
  transport: "UDP" | "TCP";
}

/** The E.164 number of a tel: URI or a bare number, else undefined (a sip: URI or nonsense). */
export function numberOf(target: string): string | undefined {
  const n = target.replace(/^tel:/i, "").replace(/[;?].*$/, "");
  return /^(tel:)?\+/i.test(target) && E164.test(n) ? n : undefined;
}

/**
 * `target` as the INVITE needs it: a number through `trunk` (the call's, undefined when on none),
 * a sip: URI directly; or why it cannot be called from here.
 */
export function route(target: string, trunk: SessionTrunkEdge | undefined): Reachable | string {
  if (!/^tel:|^\+/i.test(target)) return reachable(target);
  const number = numberOf(target);
  if (!number) return `${target} is not an E.164 number (+ and 8 to 15 digits).`;
  if (!trunk) {
    return "A warm transfer to a number rings it through the call's trunk, and this call came in " +
      "on no trunk: give the person's sip: URI instead.";
  }
  if (!trunk.outbound_address) {
    return `A warm transfer to a number rings it through the call's trunk, and trunk ` +
      `${trunk.trunk_id} has no outbound_address (trunks.update sets one).`;
  }
  if (trunk.credentials) {
    return `Trunk ${trunk.trunk_id} asks for outbound credentials, which the worker does not ` +
      "hold (TRUNK_CREDENTIALS_KEY stays on the API): give the person's sip: URI instead.";
  }
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(trunk.outbound_address);
  if (!m) return `Trunk ${trunk.trunk_id}'s outbound_address is not host:port.`;
  const transport = trunk.outbound_transport === "tcp" ? "TCP" : "UDP";
  return { user: number, host: m[1], port: Number(m[2]), transport };
}

/** sip:user@host[:port][;params]: what the INVITE needs, or why it cannot be sent. */
export function reachable(target: string): Reachable | string {
  if (/^sips:/i.test(target)) {
    return "A warm transfer cannot call a sips: URI: the worker has no SIP over TLS.";
  }
  const m = /^sip:([^@;?]+)@(\[[0-9a-f:.]+\]|[^:;?]+)(?::(\d{1,5}))?((?:;[^?]*)?)$/i.exec(target);
  if (!m) {
    return "A warm transfer calls a sip: URI with a user and a host (sip:desk@pbx.example.com), " +
      "a tel: URI or an E.164 number.";
  }
  const port = m[3] ? Number(m[3]) : 5060;
  if (port < 1 || port > 65535) return `The port in ${target} is not a port.`;
  const tcp = /;transport=tcp\b/i.test(m[4]);
  return { user: m[1], host: m[2].replace(/^\[|\]$/g, ""), port, transport: tcp ? "TCP" : "UDP" };
}

/** host:port as a Request-URI writes it. */
const peerHost = (r: Reachable) =>
  r.host.includes(":") ? `[${r.host}]:${r.port}` : `${r.host}:${r.port}`;

/** The address of `host`: itself when it is one, else its first A (then AAAA) record. */
async function resolve(host: string): Promise<string> {
  if (/^[0-9.]+$/.test(host) || host.includes(":")) return host;
  const a = await Deno.resolveDns(host, "A").catch(() => [] as string[]);
  if (a[0]) return a[0];
  const aaaa = await Deno.resolveDns(host, "AAAA").catch(() => [] as string[]);
  if (aaaa[0]) return aaaa[0];
  throw new Error(`${host} has no address`);
}

/** A DialFailure as TransferFailed.reason: the status when there is one, else the dial's word. */
function reasonOf(f: DialFailure): TransferFailReason {
  // A challenge the worker cannot answer: the trunk refuses the call, the person never rang.
  if (/^40[17] /.test(f.sip)) return "refused";
  if (f.reason === "busy" || f.reason === "no_answer") return f.reason;
  if (f.reason === "rejected") return "declined";
  const status = /^(\d{3}) /.exec(f.sip);
  return status ? reasonOfStatus(Number(status[1])) : "failed";
}

export function legPlacer<H extends Held>(d: LegDeps<H>): LegPlacer {
  // The trunk is read only for a number, so a sip: target needs no database.
  const routeOf = async (target: string) => {
    if (!/^tel:|^\+/i.test(target)) return reachable(target);
    try {
      return route(target, await d.trunk());
    } catch (err) {
      return `The call's trunk could not be read: ${(err as Error).message}`;
    }
  };
  /** Each target refusal() passed, as routed then: place() follows it. */
  const reached = new Map<string, Reachable>();
  return {
    refusal: async (target) => {
      const r = await routeOf(target);
      if (typeof r === "string") return r;
      reached.set(target, r);
    },
    place(target, ringTimeoutMs) {
      let placed: PlacedCall | undefined;
      let abandoned = false;
      const outcome = new Promise<LegOutcome>((settle) => {
        const r = reached.get(target)!;
        const log = d.caller.log;
        const fail = (reason: TransferFailReason, detail: string) =>
          settle({ ok: false, reason, detail });
        void (async () => {
          let peer: Peer, rtp: RtpMedia;
          try {
            peer = { address: await resolve(r.host), port: r.port };
            rtp = await d.openMedia(d.host);
          } catch (err) {
            return fail("failed", `${target} could not be called: ${(err as Error).message}`);
          }
          if (abandoned) {
            await rtp.close();
            return fail("failed", "The caller hung up before the person's call was placed.");
          }
          placed = new PlacedCall(d.uas.placing(), {
            to: r.user,
            // The person sees the caller's number, as a call handed on shows it.
            from: d.caller.from,
            trunk: peer,
            transport: r.transport,
            trunkHost: peerHost(r),
            ringTimeoutMs,
            rtp,
          }, {
            ringing: () => log.add("sip", "warm_ringing", {}),
            answered: ({ callId, media, signalling }) => {
              log.add("sip", "warm_answered", {
                codec: media.codec,
                remote: `${media.remoteAddress}:${media.remotePort}`,
              });
              const line = new SipLine(
                d.uas,
                callId,
                d.caller.from,
                r.user,
                rtp,
                media,
                (kind) => log.add("sip", "warm_leg", { event: kind }),
                signalling,
                "outbound",
              );
              d.held.set(callId, { ...d.caller, line });
              line.onEnded.on(() => d.held.delete(callId));
              settle({ ok: true, line, callId });
            },
            failed: (f) => {
              log.add("sip", "warm_failed", { reason: f.reason, sip: f.sip });
              void rtp.close();
              const reason = reasonOf(f);
              fail(
                reason,
                reason === "no_answer"
                  ? `${target} did not answer within ${ringTimeoutMs} ms (${f.sip})`
                  : reason === "refused"
                  ? `${target}: ${f.sip}: the trunk asks for credentials the worker does not hold`
                  : `${target}: ${f.sip}`,
              );
            },
          });
          log.add("sip", "warm_dial", {
            target,
            uri: `sip:${r.user}@${peerHost(r)}`,
            call_id: placed.callId,
            ring_timeout_ms: ringTimeoutMs,
          });
          placed.start();
        })();
      });
      return {
        outcome,
        abandon: () => {
          abandoned = true;
          placed?.abandon();
        },
      };
    },
  };
}
