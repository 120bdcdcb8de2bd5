// The worker placing a call over a SIP trunk (RFC 3261 sections 8.1, 13.2, 17.1.1; issue 34):
// one INVITE with an SDP offer (PCMU, PCMA, telephone-event) from the worker's own SIP socket, a
// 401/407 digest challenge answered once, 180/183 as ringing (183's early media is never the
// callee), the 2xx ACKed and its dialog held beside the answered calls (in_dialog.ts), CANCEL at
// the ring timeout, and every other ending named as common/dial.ts names it. Over TCP the INVITE
// and the dialog's requests go on the worker's connection to the trunk (sip/tcp_client.ts), with
// no Timer A; a connection that fails or drops before the final response fails the dial.
import type { SipClock, SipTimers } from "../../sip/clock.ts";
import { type Header, header, headerList, type SipRequest } from "../../sip/message.ts";
import type { SipResponse } from "../../sip/message.ts";
import { randomToken } from "../../sip/response.ts";
import { cancelOf, InviteClientTransaction } from "../../sip/invite_client.ts";
import { NonInviteClientTransaction } from "../../sip/client_transaction.ts";
import { chooseChallenge, digestAuthorization } from "../../sip/digest_client.ts";
import { serialize } from "../../sip/message.ts";
import type { Peer } from "../../sip/udp.ts";
import { tagOf } from "../../sip/headers.ts";
import type { DialEndReason } from "../../common/dial.ts";
import { type AnswerChoice, answerOffer, offerSdp } from "./sdp.ts";
import { type DialogIds, placedDialogIds, type SipDialog } from "./dialog.ts";
import type { UasCall } from "./uas_call.ts";
import type { RtpPort } from "./rtp_port.ts";

/** What the worker's SIP service (uas.ts `placing()`) lends a call it places. */
export interface UacHost {
  clock: SipClock;
  timers: SipTimers;
  /** Our address and SIP port as the trunk reaches them (Via, Contact, From, SDP c=). */
  where(): { host: string; port: number };
  /** A datagram from the worker's SIP socket, or bytes on its TCP connection to `to`. */
  send(bytes: Uint8Array, to: Peer, transport: Transport): void;
  /** The worker's TCP connection to `to` (opened if none is): resolves `closed` with why. */
  connection(to: Peer): { closed: Promise<string> };
  /** Responses whose branch and method are `key` go to `tx`; returns the undo. */
  track(key: string, tx: { receive(r: SipResponse): void }): () => void;
  /** The call is answered: its dialog is held with the answered calls' (in_dialog.ts). */
  answered(call: UasCall, ids: DialogIds, send: (bytes: Uint8Array) => void): SipDialog;
  /** Our BYE in a held dialog, and the dialog is forgotten. */
  hangUp(callId: string): Promise<unknown>;
}

export type Transport = "UDP" | "TCP";

export interface PlaceCallOptions {
  /** E.164 numbers: whom we call and the number we call from. */
  to: string;
  from: string;
  trunk: Peer;
  /** How the trunk is reached (the trunk's outbound_transport). */
  transport: Transport;
  /** The trunk's host as written (the Request-URI's and To's host part). */
  trunkHost: string;
  username?: string;
  password?: string;
  ringTimeoutMs: number;
  /** The call's RTP port, named in the offer. */
  rtp: RtpPort;
}

/** How a placed call ended before it was answered, with the SIP that said so (for the log). */
export interface DialFailure {
  /** The dial's outcome, or `worker_shutdown` when the worker went away while it rang. */
  reason: DialEndReason | "worker_shutdown";
  status: "ended" | "failed";
  /** "486 Busy Here", "timeout" (Timer B), "cancelled" (ring timeout)... */
  sip: string;
}

export interface PlacedCallEvents {
  /** The first 180 or 183: the callee's phone is ringing (or playing early media). */
  ringing(): void;
  /** A 2xx with an answer we can use, ACKed: the callee is on the line. */
  answered(a: { callId: string; media: AnswerChoice; signalling: string }): void;
  /** Never answered; the RTP port is the caller's to close. */
  failed(f: DialFailure): void;
}

/** Final statuses → how the dial ends (common/dial.ts); 401/407 and 487 are decided apart. */
function failureOf(status: number, afterAuth: boolean): Omit<DialFailure, "sip"> {
  if (status === 486 || status === 600) return { reason: "busy", status: "ended" };
  if (status === 480 || status === 408) return { reason: "no_answer", status: "ended" };
  // A 403 after our credentials is the trunk refusing them, not the callee refusing the call.
  if (status === 603 || (status === 403 && !afterAuth)) {
    return { reason: "rejected", status: "ended" };
  }
  return { reason: "dial_failed", status: "failed" };
}

/** One outbound call's INVITE dialogue, until it is answered or has failed. */
export class PlacedCall {
  readonly callId: string;
  private readonly fromTag = randomToken();
  private cseq = 0;
  private invite!: SipRequest;
  private tx?: InviteClientTransaction;
  private authorised = false;
  private rang = false;
  private provisional = false;
  private cancelWanted = false;
  private cancelled = false;
  private settled = false;
  private ringTimer?: { cancel(): void };
  private dialog?: SipDialog;
  private ackBytes?: Uint8Array;

  constructor(
    private readonly host: UacHost,
    private readonly opts: PlaceCallOptions,
    private readonly events: PlacedCallEvents,
  ) {
    this.callId = `${randomToken(12)}@${host.where().host}`;
  }

  /** Sends the INVITE; the ring timeout runs from here. */
  start(): void {
    this.send([]);
    this.ringTimer = this.host.clock.after(this.opts.ringTimeoutMs, () => this.ringTimedOut());
  }

  /**
   * The worker is going away before the call is answered: CANCEL if it may be sent (9.1), and the
   * dial ends now, `worker_shutdown`. False when the call was already answered or over.
   */
  abandon(): boolean {
    if (this.settled) return false;
    this.cancelWanted = true;
    if (this.provisional) this.sendCancel();
    this.fail({ reason: "worker_shutdown", status: "ended", sip: "shutdown" });
    return true;
  }

  private get local() {
    const { host, port } = this.host.where();
    return { host: host.includes(":") ? `[${host}]` : host, port };
  }

  /** Bytes toward the trunk, on the call's transport. */
  private wire(bytes: Uint8Array): void {
    this.host.send(bytes, this.opts.trunk, this.opts.transport);
  }

  private get reliable(): boolean {
    return this.opts.transport === "TCP";
  }

  /**
   * Section 18.1.1: a TCP connection that fails to open or closes before the INVITE's final
   * response fails the dial; once answered, a drop is left to the call (as on an inbound call).
   */
  private watchConnection(tx: InviteClientTransaction): void {
    if (!this.reliable) return;
    void this.host.connection(this.opts.trunk).closed.then((why) => {
      if (this.settled || tx !== this.tx || tx.state !== "calling" && tx.state !== "proceeding") {
        return;
      }
      tx.stop();
      this.fail({ reason: "dial_failed", status: "failed", sip: `TCP connection: ${why}` });
    });
  }

  /** A new INVITE transaction: a new branch and CSeq, the same Call-ID and From tag. */
  private send(extra: Header[]): void {
    const { host, port } = this.local;
    const tcp = this.reliable;
    const branch = `z9hG4bK${randomToken()}`;
    const uri = `sip:${this.opts.to}@${this.opts.trunkHost}`;
    const sdp = offerSdp({
      address: this.host.where().host,
      port: this.opts.rtp.port,
      sessionId: String(Date.now()),
      version: 1,
    });
    const headers: Header[] = [
      // rport is for UDP's NAT (RFC 3581); over TCP responses come back on the connection.
      {
        name: "Via",
        value: `SIP/2.0/${this.opts.transport} ${host}:${port};branch=${branch}${
          tcp ? "" : ";rport"
        }`,
      },
      { name: "Max-Forwards", value: "70" },
      { name: "From", value: `<sip:${this.opts.from}@${host}>;tag=${this.fromTag}` },
      { name: "To", value: `<${uri}>` },
      { name: "Call-ID", value: this.callId },
      { name: "CSeq", value: `${++this.cseq} INVITE` },
      { name: "Contact", value: `<sip:${host}:${port}${tcp ? ";transport=tcp" : ""}>` },
      { name: "Allow", value: "INVITE, ACK, CANCEL, BYE, OPTIONS, NOTIFY, INFO, UPDATE" },
      ...extra,
      { name: "Content-Type", value: "application/sdp" },
    ];
    this.invite = { kind: "request", method: "INVITE", uri, headers, body: encode(sdp) };
    const tx: InviteClientTransaction = new InviteClientTransaction({
      clock: this.host.clock,
      timers: this.host.timers,
      reliable: tcp,
      request: this.invite,
      send: (bytes) => this.wire(bytes),
      onResponse: (r) => this.response(r, tx),
      onTimeout: () => this.fail({ reason: "dial_failed", status: "failed", sip: "timeout" }),
      onEnd: () => untrack(),
    });
    // A challenged INVITE's transaction stays tracked until Timer D, to ACK a retransmitted 401.
    const untrack = this.host.track(`${branch}|INVITE`, tx);
    this.tx = tx;
    this.watchConnection(tx);
  }

  private response(r: SipResponse, tx: InviteClientTransaction): void {
    if (tx !== this.tx) return; // the challenged INVITE's late retransmissions
    const s = r.status;
    if (s < 200) {
      this.provisional = true;
      if ((s === 180 || s === 183) && !this.rang && !this.settled) {
        this.rang = true;
        this.events.ringing();
      }
      // Section 9.1: a CANCEL waits for a provisional response.
      if (this.cancelWanted) this.sendCancel();
      return;
    }
    if (s < 300) return this.ok(r);
    if (this.settled) return;
    const sip = `${s} ${r.reason}`;
    if ((s === 401 || s === 407) && !this.authorised && !this.cancelWanted) {
      if (this.authorise(r)) return;
    }
    if (this.cancelWanted) {
      return this.fail({ reason: "no_answer", status: "ended", sip: `cancelled (${sip})` });
    }
    this.fail({ ...failureOf(s, this.authorised), sip });
  }

  /** Answers a 401 (WWW-Authenticate) or 407 (Proxy-Authenticate) once; false if it cannot. */
  private authorise(r: SipResponse): boolean {
    const { username, password } = this.opts;
    if (username === undefined || password === undefined) return false;
    const proxy = r.status === 407;
    // Each challenge is one header line: its own commas separate parameters, not challenges.
    const name = proxy ? "Proxy-Authenticate" : "WWW-Authenticate";
    const challenge = chooseChallenge(r.headers.filter((h) => h.name === name).map((h) => h.value));
    if (!challenge) return false;
    this.authorised = true;
    const value = digestAuthorization({
      challenge,
      username,
      password,
      method: "INVITE",
      uri: this.invite.uri,
    });
    this.send([{ name: proxy ? "Proxy-Authorization" : "Authorization", value }]);
    return true;
  }

  /** A 2xx: ACK it (again for a retransmission), then the call is answered or hung up. */
  private ok(r: SipResponse): void {
    if (this.ackBytes) return this.wire(this.ackBytes);
    const ids = placedDialogIds(this.invite, r);
    const call: UasCall = {
      channel: { transport: this.opts.transport, from: this.opts.trunk, send: () => {} },
      callId: this.callId,
      localTag: this.fromTag,
      remoteTag: tagOf(header(r, "To")),
      state: "confirmed",
      // Named in our answers to the callee's re-INVITEs; closing it is idempotent (RtpMedia).
      rtp: this.opts.rtp,
      sdpVersion: 1,
      sessionId: String(Date.now()),
    };
    // Toward the trunk: it is the worker's outbound proxy, whatever the Contact names.
    // Over TCP, on the open connection to the trunk, or a new one if it has closed (18.1.1).
    this.dialog = this.host.answered(call, ids, (b) => this.wire(b));
    this.ackBytes = this.dialog.ack(this.cseq);
    this.wire(this.ackBytes);
    const type = header(r, "Content-Type")?.split(";")[0].trim().toLowerCase();
    // Read with the offer's reader: the codec, their RTP address and port, telephone-event.
    const answer = type === "application/sdp" ? answerOffer(decode(r.body), READER) : undefined;
    if (this.settled || this.cancelWanted || !answer?.ok) {
      // Answered after we gave up (CANCEL crossed the 200), or with nothing we can speak: BYE,
      // and the dialog is forgotten.
      void this.host.hangUp(this.callId);
      if (this.settled) return;
      if (this.cancelWanted) {
        return this.fail({ reason: "no_answer", status: "ended", sip: "answered after CANCEL" });
      }
      return this.fail({
        reason: "dial_failed",
        status: "failed",
        sip: `${r.status} ${r.reason} (${answer && !answer.ok ? answer.reason : "no SDP answer"})`,
      });
    }
    this.settled = true;
    this.ringTimer?.cancel();
    // The answer's direction is theirs; mirrored, as answerOffer does, it is ours.
    this.events.answered({
      callId: this.callId,
      media: answer.choice,
      signalling: this.opts.trunk.address,
    });
  }

  private ringTimedOut(): void {
    if (this.settled || this.cancelWanted) return;
    this.cancelWanted = true;
    if (this.provisional) this.sendCancel();
    // No provisional yet: the CANCEL waits for one (section 9.1); Timer B ends it otherwise.
  }

  /** Section 9.1: CANCEL in its own transaction on the INVITE's branch; the INVITE then gets 487. */
  private sendCancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    const cancel = cancelOf(this.invite);
    const bytes = serialize(cancel);
    const branch = /branch=([^;\s,]+)/.exec(headerList(cancel, "Via")[0])![1];
    let untrack = () => {};
    const tx = new NonInviteClientTransaction({
      clock: this.host.clock,
      timers: this.host.timers,
      reliable: this.reliable,
      send: () => this.wire(bytes),
      onEnd: () => untrack(),
    });
    untrack = this.host.track(`${branch}|CANCEL`, tx);
    // A trunk that never answers the INVITE after our CANCEL: given up after 64·T1 (Timer C's
    // role, section 16.8), still the callee's silence.
    this.host.clock.after(64 * this.host.timers.t1, () => {
      if (this.settled) return;
      this.tx?.stop();
      this.fail({ reason: "no_answer", status: "ended", sip: "cancelled (no 487)" });
    });
  }

  private fail(f: DialFailure): void {
    if (this.settled) return;
    this.settled = true;
    this.ringTimer?.cancel();
    this.events.failed(f);
  }
}

const encode = (s: string) => new TextEncoder().encode(s);
const decode = (b: Uint8Array) => new TextDecoder().decode(b);
/** answerOffer's `local` when only its reading of the far end's SDP is wanted. */
const READER = { address: "0.0.0.0", port: 0, sessionId: "0", version: 0 };
