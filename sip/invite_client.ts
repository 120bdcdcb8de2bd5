// The INVITE client transaction (RFC 3261 section 17.1.1, with RFC 6026's Accepted state): the
// worker's INVITE when it places a call. Over UDP the INVITE is retransmitted on Timer A (T1,
// doubling) until a response; Timer B (64·T1) gives up if none comes. A non-2xx final response is
// ACKed here (17.1.1.3) and its retransmissions ACKed again until Timer D; a 2xx goes to the
// transaction user, which ACKs it itself (13.2.2.4), and so do the 2xx's retransmissions until
// Timer M (64·T1).
import { RFC_TIMERS, type SipClock, type SipTimers } from "./clock.ts";
import { type Header, header, headerList, serialize, type SipRequest } from "./message.ts";
import type { SipResponse } from "./message.ts";

export interface InviteClientOptions {
  clock: SipClock;
  timers?: SipTimers;
  reliable: boolean;
  /** The INVITE, as sent (its top Via's branch names the transaction). */
  request: SipRequest;
  /** Puts bytes on the wire toward the next hop. */
  send(bytes: Uint8Array): void;
  /** Every response, first ones and retransmitted 2xx alike (never a retransmitted non-2xx). */
  onResponse(response: SipResponse): void;
  /** Timer B: no response at all in 64·T1 (the RFC's 408 to the transaction user). */
  onTimeout(): void;
  /** The transaction is over: its key may be forgotten. */
  onEnd(): void;
}

export class InviteClientTransaction {
  state: "calling" | "proceeding" | "completed" | "accepted" | "terminated" = "calling";
  /** INVITEs put on the wire, retransmissions included. */
  sent = 0;
  private readonly bytes: Uint8Array;
  private ackBytes?: Uint8Array;
  private timers: { cancel(): void }[] = [];
  private readonly t: SipTimers;

  constructor(private readonly opts: InviteClientOptions) {
    this.t = opts.timers ?? RFC_TIMERS;
    this.bytes = serialize(opts.request);
    this.transmit();
    if (!opts.reliable) this.armA(this.t.t1);
    this.timers.push(opts.clock.after(64 * this.t.t1, () => {
      if (this.state !== "calling") return;
      this.opts.onTimeout();
      this.stop();
    }));
  }

  private transmit(): void {
    this.sent++;
    this.opts.send(this.bytes);
  }

  /** Timer A: T1, 2T1, 4T1... while no response has come (section 17.1.1.2). */
  private armA(interval: number): void {
    this.timers.push(this.opts.clock.after(interval, () => {
      if (this.state !== "calling") return;
      this.transmit();
      this.armA(2 * interval);
    }));
  }

  /** A response whose branch and method match this transaction. */
  receive(response: SipResponse): void {
    const s = response.status;
    if (this.state === "terminated") return;
    if (this.state === "completed") {
      // A retransmitted final response: our ACK was lost (section 17.1.1.2).
      if (s >= 300 && this.ackBytes) this.opts.send(this.ackBytes);
      return;
    }
    if (this.state === "accepted") {
      if (s >= 200 && s < 300) this.opts.onResponse(response);
      return;
    }
    if (s < 200) {
      this.state = "proceeding";
      return this.opts.onResponse(response);
    }
    this.cancelTimers();
    if (s < 300) {
      this.state = "accepted";
      this.timers.push(this.opts.clock.after(64 * this.t.t1, () => this.stop()));
      return this.opts.onResponse(response);
    }
    this.state = "completed";
    this.ackBytes = serialize(ackOfNonSuccess(this.opts.request, response));
    this.opts.send(this.ackBytes);
    // Timer D: at least 32 s over UDP for retransmitted responses, zero over TCP.
    const d = this.opts.reliable ? 0 : Math.max(32_000, 64 * this.t.t1);
    this.timers.push(this.opts.clock.after(d, () => this.stop()));
    this.opts.onResponse(response);
  }

  private cancelTimers(): void {
    for (const t of this.timers.splice(0)) t.cancel();
  }

  /** Ends the transaction now (also when the worker's SIP closes). */
  stop(): void {
    if (this.state === "terminated") return;
    this.state = "terminated";
    this.cancelTimers();
    this.opts.onEnd();
  }
}

/** Section 17.1.1.3: the ACK of a non-2xx final response, in the INVITE's transaction. */
export function ackOfNonSuccess(invite: SipRequest, response: SipResponse): SipRequest {
  const cseq = header(invite, "CSeq")!.trim().split(/\s+/)[0];
  const headers: Header[] = [
    { name: "Via", value: headerList(invite, "Via")[0] },
    { name: "Max-Forwards", value: "70" },
    { name: "From", value: header(invite, "From")! },
    { name: "To", value: header(response, "To")! },
    { name: "Call-ID", value: header(invite, "Call-ID")! },
    { name: "CSeq", value: `${cseq} ACK` },
    ...invite.headers.filter((h) => h.name === "Route"),
    { name: "Content-Length", value: "0" },
  ];
  return { kind: "request", method: "ACK", uri: invite.uri, headers, body: new Uint8Array() };
}

/** Section 9.1: the CANCEL of an INVITE: its Request-URI, Call-ID, From, To, top Via, Route. */
export function cancelOf(invite: SipRequest): SipRequest {
  const cseq = header(invite, "CSeq")!.trim().split(/\s+/)[0];
  const headers: Header[] = [
    { name: "Via", value: headerList(invite, "Via")[0] },
    { name: "Max-Forwards", value: "70" },
    { name: "From", value: header(invite, "From")! },
    { name: "To", value: header(invite, "To")! },
    { name: "Call-ID", value: header(invite, "Call-ID")! },
    { name: "CSeq", value: `${cseq} CANCEL` },
    ...invite.headers.filter((h) => h.name === "Route"),
    { name: "Content-Length", value: "0" },
  ];
  return { kind: "request", method: "CANCEL", uri: invite.uri, headers, body: new Uint8Array() };
}
