// The person's call of a warm transfer (issue 35), placed by the worker's own UAC (uac.ts) from
// its SIP socket, to the target's sip: URI directly: its host (an address, or a name resolved
// here), port (5060) and transport (;transport=tcp, else UDP). A tel: URI or an E.164 number is
// refused: an answered call does not carry its trunk's outbound settings (they are sealed on the
// API, issue 34), so a number cannot be dialled from here yet (docs/decisions.md). Once answered
// the person's call is a SipLine held beside the caller's, so its BYE and re-INVITEs find it.
import type { SessionLog } from "../call/session_log.ts";
import type { RtpMedia } from "../phone/rtp_media.ts";
import type { Peer } from "../../sip/udp.ts";
import { reasonOfStatus, type TransferFailReason } from "../call/transfer.ts";
import { SipLine } from "./sip_line.ts";
import type { SipUas } from "./uas.ts";
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
}

/** A target the worker can ring itself. */
interface Reachable {
  user: string;
  host: string;
  port: number;
  transport: "UDP" | "TCP";
}

/** sip:user@host[:port][;params]: what the INVITE needs, or why it cannot be sent. */
export function reachable(target: string): Reachable | string {
  if (/^sips:/i.test(target)) {
    return "A warm transfer cannot call a sips: URI: the worker has no SIP over TLS.";
  }
  const m = /^sip:([^@;?]+)@(\[[0-9a-f:.]+\]|[^:;?]+)(?::(\d{1,5}))?((?:;[^?]*)?)$/i.exec(target);
  if (!m) {
    return "A warm transfer calls a sip: URI with a user and a host (sip:desk@pbx.example.com): " +
      "a number cannot be dialled for one yet, as the call's trunk settings are not on the " +
      "worker. Give the person's SIP address, or send the Transfer without a whisper.";
  }
  const port = m[3] ? Number(m[3]) : 5060;
  if (port < 1 || port > 65535) return `The port in ${target} is not a port.`;
  const tcp = /;transport=tcp\b/i.test(m[4]);
  return { user: m[1], host: m[2].replace(/^\[|\]$/g, ""), port, transport: tcp ? "TCP" : "UDP" };
}

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
  if (f.reason === "busy" || f.reason === "no_answer") return f.reason;
  if (f.reason === "rejected") return "declined";
  const status = /^(\d{3}) /.exec(f.sip);
  return status ? reasonOfStatus(Number(status[1])) : "failed";
}

export function legPlacer<H extends Held>(d: LegDeps<H>): LegPlacer {
  return {
    refusal: (target) => {
      const r = reachable(target);
      return typeof r === "string" ? r : undefined;
    },
    place(target, ringTimeoutMs) {
      let placed: PlacedCall | undefined;
      let abandoned = false;
      const outcome = new Promise<LegOutcome>((settle) => {
        const r = reachable(target) as Reachable;
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
            trunkHost: r.host.includes(":") ? `[${r.host}]:${r.port}` : `${r.host}:${r.port}`,
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
                  : `${target}: ${f.sip}`,
              );
            },
          });
          log.add("sip", "warm_dial", {
            target,
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
