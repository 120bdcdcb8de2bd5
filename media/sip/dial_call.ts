// An outbound call on this worker (issue 34): the RTP port opened before the token is spent (a full
// range refuses the dial with nothing written), then the INVITE (uac.ts), the session's dial state
// written as the dialogue goes (db/dial.ts), and on the callee's answer a SipLine and a Call over
// it in the node's calls, as an answered inbound call has. A call never answered ends its session
// with the outcome common/dial.ts names (busy, no_answer, rejected, dial_failed).
import { setDialState } from "../../db/dial.ts";
import type { DialState, MachineDetection } from "../../common/dial.ts";
import type { SessionClaims } from "../../common/token.ts";
import { logger } from "../../common/log.ts";
import type { Peer } from "../../sip/udp.ts";
import type { RtpMedia } from "../phone/rtp_media.ts";
import type { Call } from "../call/call.ts";
import { type AdmittedSession, type CallNode, startCall } from "../call/node_calls.ts";
import type { SessionLog } from "../call/session_log.ts";
import { endRecords } from "../call/record_writer.ts";
import { SipLine } from "./sip_line.ts";
import type { SipUas } from "./uas.ts";
import { type DialFailure, PlacedCall } from "./uac.ts";
import { legPlacer } from "./warm_leg.ts";
import { sessionTrunkEdge } from "../../db/trunks.ts";

const log = logger("sip");

/** A phone call the SIP service holds by Call-ID, inbound or placed: its session and line. */
export interface HeldCall {
  claims: SessionClaims;
  from: string;
  to: string;
  brainUrl?: string;
  log?: SessionLog;
  line?: SipLine;
}

/** A checked WorkerDial (common/dial.ts), the trunk's address resolved to where packets go. */
export interface DialRequest {
  to: string;
  from: string;
  trunkId: string;
  trunk: Peer;
  /** The trunk's outbound_transport: UDP from the SIP socket, or the worker's TCP connection. */
  transport: "udp" | "tcp";
  /** The trunk's host as the operator wrote it (Request-URI, To). */
  trunkHost: string;
  username?: string;
  password?: string;
  ringTimeoutSeconds: number;
  machineDetection: MachineDetection;
}

/** A dial whose media is ready: started once the token is spent, or released if it is not. */
export interface PreparedDial {
  start(session: AdmittedSession): void;
  release(): Promise<void>;
}

/** The worker's outbound calls, as the dial route sees them. */
export interface Dialler {
  prepare(dial: DialRequest): Promise<PreparedDial>;
  /** SIP is closing: calls still ringing are cancelled and end `worker_shutdown`. */
  close(): Promise<void>;
}

/** A placed call until it is answered or over: how to give it up and wait for its writes. */
interface Ringing {
  abandon(): boolean;
  written(): Promise<unknown>;
}

export interface DiallerDeps {
  node: CallNode;
  uas: SipUas;
  held: Map<string, HeldCall>;
  openMedia: (host: string) => Promise<RtpMedia>;
  host: string;
  onPhoneCall?: (call: Call) => void;
}

export function dialler(d: DiallerDeps): Dialler {
  const ringing = new Set<Ringing>();
  return {
    async prepare(dial) {
      const rtp = await d.openMedia(d.host);
      return {
        release: () => rtp.close(),
        start: (session) => {
          const call: Ringing = place(d, dial, rtp, session, () => ringing.delete(call));
          ringing.add(call);
        },
      };
    },
    async close() {
      const left = [...ringing].filter((c) => c.abandon());
      await Promise.all(left.map((c) => c.written()));
    },
  };
}

function place(
  d: DiallerDeps,
  dial: DialRequest,
  rtp: RtpMedia,
  session: AdmittedSession,
  settled: () => void,
): Ringing {
  const sessionId = session.claims.sid;
  const sessionLog = session.log;
  // Writes in the order they happen: a ringing never lands before its dialing, nor the end first.
  let writes: Promise<unknown> = Promise.resolve();
  const write = (what: string, fn: () => Promise<unknown>) => {
    writes = writes.then(fn).catch((err) =>
      log.error("outbound call write failed", { session_id: sessionId, what, error: String(err) })
    );
  };
  const state = (s: DialState) => write(s, () => setDialState(d.node.sql, sessionId, s));
  const held: HeldCall = { ...session, from: dial.from, to: dial.to };

  const placed = new PlacedCall(d.uas.placing(), {
    to: dial.to,
    from: dial.from,
    trunk: dial.trunk,
    transport: dial.transport === "tcp" ? "TCP" : "UDP",
    trunkHost: dial.trunkHost,
    username: dial.username,
    password: dial.password,
    ringTimeoutMs: dial.ringTimeoutSeconds * 1000,
    rtp,
  }, {
    ringing: () => {
      sessionLog.add("sip", "ringing", {});
      state("ringing");
    },
    answered: ({ callId, media, signalling }) => {
      settled();
      state("answered");
      sessionLog.add("sip", "answered", {
        codec: media.codec,
        dtmf_payload_type: media.dtmfPayloadType ?? null,
        remote: `${media.remoteAddress}:${media.remotePort}`,
      });
      const line = new SipLine(
        d.uas,
        callId,
        dial.from,
        dial.to,
        rtp,
        media,
        (kind, data) => sessionLog.add("sip", kind, data),
        signalling,
        "outbound",
        dial.machineDetection,
      );
      held.line = line;
      line.warmLegs = legPlacer({
        ...d,
        caller: { ...held, log: sessionLog },
        trunk: () => sessionTrunkEdge(d.node.sql, sessionId),
      });
      d.held.set(callId, held);
      // After the dial state's write: the call's own writes (active, the end) come after it.
      write("call", () => {
        // A bridged warm transfer outlives its session: its dialog stays until either hangs up.
        const call = startCall(d.node, line, session, () => line.bridged || d.held.delete(callId));
        d.onPhoneCall?.(call);
        return Promise.resolve();
      });
    },
    failed: (f: DialFailure) => {
      settled();
      sessionLog.add("sip", "dial_ended", { reason: f.reason, sip: f.sip });
      // `sip` names the status line, or why the TCP connection to the trunk failed or closed.
      log.info("outbound call not answered", {
        session_id: sessionId,
        reason: f.reason,
        sip: f.sip,
      });
      write("end", async () => {
        await rtp.close();
        await endRecords.write({
          sql: d.node.sql,
          sessionId,
          status: f.status,
          reason: f.reason,
          outcome: {},
          log: sessionLog,
          endedAt: performance.now(),
        }).firstTry;
      });
    },
  });
  sessionLog.add("sip", "dial", {
    to: dial.to,
    from: dial.from,
    trunk_id: dial.trunkId,
    ring_timeout_seconds: dial.ringTimeoutSeconds,
    machine_detection: dial.machineDetection,
    call_id: placed.callId,
  });
  state("dialing");
  placed.start();
  return { abandon: () => placed.abandon(), written: () => writes };
}
