// UAS server transactions (RFC 3261 section 17.2, with RFC 6026's Accepted state): they answer
// retransmitted requests from memory, retransmit final responses over UDP until acknowledged and
// end on the RFC's timers. Time comes from a SipClock so tests can turn it by hand.
import { RFC_TIMERS, type SipClock, type SipTimers } from "./clock.ts";
import { serialize, type SipRequest, type SipResponse } from "./message.ts";

export type InviteState = "proceeding" | "accepted" | "completed" | "confirmed" | "terminated";
export type NonInviteState = "trying" | "proceeding" | "completed" | "terminated";

/** Why a transaction ended: `no_ack` is Timer H (non-2xx) or Timer L (2xx) running out. */
export type EndReason = "done" | "no_ack";

export interface TransactionOptions {
  clock: SipClock;
  /** Sends bytes to the request's response address (section 18.2.2). */
  send: (bytes: Uint8Array) => void;
  /** TCP: no retransmissions, Timers I and J are zero. */
  reliable: boolean;
  timers?: SipTimers;
  onEnd?: (reason: EndReason) => void;
}

type Timer = { cancel(): void };

abstract class ServerTransaction<S extends string> {
  abstract state: S | "terminated";
  protected last?: Uint8Array;
  protected timers: Timer[] = [];
  protected readonly t: SipTimers;
  /** Responses put on the wire, retransmissions included (what the tests count). */
  sent = 0;

  constructor(readonly request: SipRequest, protected readonly opts: TransactionOptions) {
    this.t = opts.timers ?? RFC_TIMERS;
  }

  protected transmit(bytes: Uint8Array): void {
    this.sent++;
    this.opts.send(bytes);
  }

  protected after(ms: number, fn: () => void): void {
    this.timers.push(this.opts.clock.after(ms, fn));
  }

  protected stopTimers(): void {
    for (const t of this.timers) t.cancel();
    this.timers = [];
  }

  /**
   * The UAS is closing: no more retransmissions or timers, and no onEnd (nothing is left to tell).
   * Without it a closed worker kept resending an unacknowledged final response for 32 s.
   */
  stop(): void {
    this.stopTimers();
    this.state = "terminated";
  }

  /** Ends once, on the RFC's terms: timers stop and onEnd hears why. */
  protected end(reason: EndReason): void {
    if (this.state === "terminated") return;
    this.state = "terminated";
    this.stopTimers();
    this.opts.onEnd?.(reason);
  }

  /** Retransmits `bytes` at T1, 2T1, 4T1... capped at T2 (Timer G, and section 13.3.1.4 for 2xx). */
  protected retransmit(bytes: Uint8Array, interval: number, still: () => boolean): void {
    this.after(interval, () => {
      if (!still()) return;
      this.transmit(bytes);
      this.retransmit(bytes, Math.min(interval * 2, this.t.t2), still);
    });
  }
}

export class InviteServerTransaction extends ServerTransaction<InviteState> {
  state: InviteState = "proceeding";

  respond(response: SipResponse): void {
    if (this.state !== "proceeding") throw new Error(`INVITE transaction is ${this.state}`);
    const bytes = serialize(response);
    this.last = bytes;
    this.transmit(bytes);
    if (response.status < 200) return;
    this.state = response.status < 300 ? "accepted" : "completed";
    const waiting = this.state;
    if (!this.opts.reliable || waiting === "accepted") {
      this.retransmit(bytes, this.t.t1, () => this.state === waiting);
    }
    // Timer H (non-2xx) and Timer L (2xx) are both 64*T1.
    this.after(64 * this.t.t1, () => {
      if (this.state === waiting) this.end("no_ack");
    });
  }

  /** A retransmitted INVITE or the ACK of a non-2xx (same branch). */
  receive(request: SipRequest): void {
    if (request.method === "ACK") {
      if (this.state !== "completed") return;
      this.state = "confirmed";
      this.stopTimers();
      // Timer I: absorbs ACK retransmissions for T4 over UDP.
      if (this.opts.reliable) this.end("done");
      else this.after(this.t.t4, () => this.end("done"));
      return;
    }
    // Proceeding and Completed answer a retransmitted INVITE with the last response; Accepted
    // absorbs it (RFC 6026 section 8.5), its 2xx being retransmitted on its own timer.
    if ((this.state === "proceeding" || this.state === "completed") && this.last) {
      this.transmit(this.last);
    }
  }

  /** The ACK of the 2xx arrived (matched by the dialog, since it has its own branch). */
  acknowledged(): void {
    if (this.state !== "accepted") return;
    this.end("done");
  }

  /** Whether a final response went out: CANCEL only acts before it (section 9.2). */
  get answered(): boolean {
    return this.state !== "proceeding";
  }
}

export class NonInviteServerTransaction extends ServerTransaction<NonInviteState> {
  state: NonInviteState = "trying";

  respond(response: SipResponse): void {
    if (this.state === "completed" || this.state === "terminated") {
      throw new Error(`transaction is ${this.state}`);
    }
    const bytes = serialize(response);
    this.last = bytes;
    this.transmit(bytes);
    if (response.status < 200) {
      this.state = "proceeding";
      return;
    }
    this.state = "completed";
    // Timer J: keeps answering retransmissions from memory for 64*T1 over UDP.
    if (this.opts.reliable) this.end("done");
    else this.after(64 * this.t.t1, () => this.end("done"));
  }

  /** A retransmission of the request: answered with the last response, if any. */
  receive(_request: SipRequest): void {
    if ((this.state === "proceeding" || this.state === "completed") && this.last) {
      this.transmit(this.last);
    }
  }
}
