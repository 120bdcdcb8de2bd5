// Phone calls over SIP on this worker (SIP_PORT): the UAS, admission by the session token the
// control plane's redirect put in the Request-URI (admission.ts), and for each answered call a
// SipLine over its RTP and a Call over it in the node's calls (media/call/node_calls.ts), so it
// is counted, drained and recorded as a web call is. The session log gets the SIP dialogue's key events.
import { getAgent } from "../../db/agents.ts";
import { logger } from "../../common/log.ts";
import { dialledUser, parseNameAddr } from "../../sip/headers.ts";
import { header, type SipRequest } from "../../sip/message.ts";
import { SipUas } from "./uas.ts";
import type { CallEvent } from "./uas_types.ts";
import { admitInvite, isRefusal, type SipAdmissionNode, takeSession } from "./admission.ts";
import { SipLine } from "./sip_line.ts";
import { greetingReady, heldDialogs, HeldMedia } from "./ringing_call.ts";
import { legPlacer } from "./warm_leg.ts";
import { sessionTrunkEdge } from "../../db/trunks.ts";
import { type Dialler, dialler, type HeldCall } from "./dial_call.ts";
import { RtpMedia } from "../phone/rtp_media.ts";
import type { PortRange } from "../../common/port_range.ts";
import type { Call } from "../call/call.ts";
import { type CallNode, startCall } from "../call/node_calls.ts";
import { SessionLog } from "../call/session_log.ts";
import { endRecords } from "../call/record_writer.ts";

const log = logger("sip");

export interface SipNode extends SipAdmissionNode, CallNode {}

export interface SipSettings {
  /** Address to bind SIP and RTP on. */
  host: string;
  /** SIP_PORT: UDP and TCP. */
  port: number;
  /** SIP_PUBLIC_ADDRESS: what Contact and SDP c= announce, when the bind address is not it. */
  publicAddress?: string;
  /** RTP_PORTS: the range calls' RTP ports come from (unset: any port the system gives). */
  rtpPorts?: PortRange;
  /** RTP_SYMMETRIC: latch on to media from any address after probation (media/phone/rtp_latch.ts). */
  rtpSymmetric?: boolean;
  /** RTP_TIMEOUT_SECONDS: no RTP this long ends the call `media_timeout` (default 30). */
  rtpTimeoutSeconds?: number;
  /** How long the answer may wait for the greeting (default RING_FOR_GREETING_MAX_MS, 3 s). */
  ringForGreetingMaxMs?: number;
}

/** An admitted INVITE until its call is answered (or given up), or a placed call once answered. */
type Pending = HeldCall;

/** The worker's SIP phones: the UAS's port, its close, and the calls it places (dial_call.ts). */
export interface SipPhones {
  readonly port: number;
  readonly uas: SipUas;
  readonly dialler: Dialler;
  close(): Promise<void>;
}

/** Starts the UAS; `onPhoneCall` is told of each phone call as it starts (the node's metrics). */
export async function startSipPhones(
  node: SipNode,
  settings: SipSettings,
  onPhoneCall?: (call: Call) => void,
): Promise<SipPhones> {
  const pending = new Map<string, Pending>();
  const openMedia = (host: string) =>
    RtpMedia.open({
      host,
      ports: settings.rtpPorts,
      symmetric: settings.rtpSymmetric,
      mediaTimeoutMs: settings.rtpTimeoutSeconds && settings.rtpTimeoutSeconds * 1000,
    });
  const uas: SipUas = new SipUas({
    host: settings.host,
    port: settings.port,
    publicAddress: settings.publicAddress,
    // The 200 follows the 180 once the call is prepared (ringing, below), not after a set time.
    ringingMs: 0,
    openMedia,
    lookup: async (dialled, invite) => {
      const admitted = await admitInvite(node, invite.uri);
      if (isRefusal(admitted)) return admitted;
      pending.set(header(invite, "Call-ID")!, { claims: admitted, ...numbers(dialled, invite) });
      return { agentId: admitted.sub };
    },
    accept: async (callId) => {
      const p = pending.get(callId);
      if (!p) return { refuse: 500, reason: "Server Internal Error (admission lost)" };
      const refusal = await takeSession(node, p.claims);
      if (refusal) {
        pending.delete(callId);
        return refusal;
      }
      p.brainUrl = (await getAgent(node.sql, p.claims.sub))?.brain_url ?? "";
      p.log = new SessionLog(node.sql, p.claims.sid);
      p.log.add("sip", "invite", { from: p.from, to: p.to, call_id: callId });
      return undefined;
    },
    ringing: (e) => ringing(e),
    onEvent: (e) => onEvent(e),
  });

  const onEvent = (e: CallEvent) => {
    const p = pending.get(e.callId);
    if (!p) return;
    switch (e.type) {
      case "refused":
        return void pending.delete(e.callId);
      case "answered":
        return answered(e, p);
      case "confirmed":
        return p.log?.add("sip", "confirmed", {});
      case "media":
        return p.line?.mediaChanged(e.media);
      case "dtmf":
        return p.line?.dtmfHeard(e.digit);
      case "ended":
        pending.delete(e.callId);
        if (p.line) return p.line.farEnded(e.reason);
        // Cancelled after its token was spent, before the answer: the session ends unanswered.
        if (p.log) void cancelled(p, e.reason);
    }
  };

  /** Media held until the answer, of the calls started while they ring (ringing_call.ts). */
  const held = new Map<string, HeldMedia>();

  /** The call starts while it rings: the brain greets and the greeting is synthesized meanwhile. */
  const ringing = (e: Omit<Extract<CallEvent, { type: "answered" }>, "type">) => {
    const p = pending.get(e.callId);
    if (!p?.log) return Promise.resolve();
    const media = new HeldMedia(e.rtp as RtpMedia);
    held.set(e.callId, media);
    const line = new SipLine(
      heldDialogs(uas, media),
      e.callId,
      p.from,
      p.to,
      media,
      e.media,
      (kind, data) => p.log!.add("sip", kind, data),
      e.signalling,
    );
    p.line = line;
    line.warmLegs = legPlacer({
      uas,
      openMedia,
      host: settings.host,
      held: pending,
      caller: { ...p, log: p.log },
      trunk: () => sessionTrunkEdge(node.sql, p.claims.sid),
    });
    const call = startCall(
      node,
      line,
      { claims: p.claims, brainUrl: p.brainUrl ?? "", log: p.log },
      () => {
        held.delete(e.callId);
        // A bridged warm transfer outlives its session: its dialog stays until either hangs up.
        if (!line.bridged) pending.delete(e.callId);
      },
    );
    onPhoneCall?.(call);
    return greetingReady(call, settings.ringForGreetingMaxMs);
  };

  const answered = (e: Extract<CallEvent, { type: "answered" }>, p: Pending) => {
    p.log!.add("sip", "answered", {
      codec: e.media.codec,
      dtmf_payload_type: e.media.dtmfPayloadType ?? null,
      remote: `${e.media.remoteAddress}:${e.media.remotePort}`,
    });
    held.get(e.callId)?.answer();
  };

  const cancelled = async (p: Pending, reason: string) => {
    p.log!.add("sip", "ended", { reason });
    const record = endRecords.write({
      sql: node.sql,
      sessionId: p.claims.sid,
      status: "ended",
      reason: reason === "caller_cancelled" ? "caller_hung_up" : reason,
      outcome: {},
      log: p.log!,
      endedAt: performance.now(),
    });
    await record.firstTry;
  };

  const port = await uas.listen();
  log.info("SIP listening", { host: settings.host, port, public: settings.publicAddress ?? null });
  const calls = dialler({ node, uas, held: pending, openMedia, host: settings.host, onPhoneCall });
  return {
    port,
    uas,
    dialler: calls,
    // Calls still ringing are cancelled while the socket is open, then the UAS closes.
    close: async () => {
      await calls.close();
      await uas.close();
    },
  };
}

/**
 * The address Contact and SDP c= announce: SIP_PUBLIC_ADDRESS; else HOST unless it is a wildcard;
 * else the first ICE_ADDRESSES entry, the address the operator says callers reach this node on.
 */
export function sipAnnouncedAddress(
  s: { sipPublicAddress?: string; host: string; iceAddresses: string[] },
): string {
  if (s.sipPublicAddress) return s.sipPublicAddress;
  if (s.host !== "0.0.0.0" && s.host !== "::") return s.host;
  return s.iceAddresses[0] ?? "127.0.0.1";
}

/** The caller's and the dialled number as the INVITE gives them. */
function numbers(dialled: string, invite: SipRequest): { from: string; to: string } {
  const fromUri = parseNameAddr(header(invite, "From") ?? "")?.uri;
  const caller = fromUri ? dialledUser(fromUri) : undefined;
  // A withheld number (RFC 3323: anonymous@anonymous.invalid) is "" for the brain.
  return { from: caller && caller !== "anonymous" ? caller : "", to: dialled };
}
