// A non-INVITE client transaction (RFC 3261 section 17.1.2): the worker's own BYE and REFER.
// Over UDP the request is retransmitted on Timer E (T1 doubling to T2; T2 once a provisional
// came) until a final response or Timer F (64·T1) gives up; Timer K (T4) then absorbs stray
// retransmitted responses. Over TCP nothing is retransmitted and Timer F still bounds the wait.
import { RFC_TIMERS, type SipClock, type SipTimers } from "./clock.ts";
import type { SipResponse } from "./message.ts";

export type ClientOutcome =
  | { kind: "response"; response: SipResponse }
  /** Timer F: no final response in 64·T1 (the RFC's 408 to the transaction user). */
  | { kind: "timeout" };

export interface ClientTransactionOptions {
  clock: SipClock;
  timers?: SipTimers;
  reliable: boolean;
  /** Puts the request on the wire (again, for a retransmission). */
  send: () => void;
  /** The transaction is over: its key may be forgotten. */
  onEnd: () => void;
}

export class NonInviteClientTransaction {
  state: "trying" | "proceeding" | "completed" | "terminated" = "trying";
  /** Requests put on the wire, retransmissions included (what the tests count). */
  sent = 0;
  /** Resolves with the final response, or a timeout. */
  readonly outcome: Promise<ClientOutcome>;
  private resolve!: (o: ClientOutcome) => void;
  private timers: { cancel(): void }[] = [];
  private readonly t: SipTimers;
  private interval: number;

  constructor(private readonly opts: ClientTransactionOptions) {
    this.t = opts.timers ?? RFC_TIMERS;
    this.interval = this.t.t1;
    this.outcome = new Promise((r) => (this.resolve = r));
    this.transmit();
    if (!opts.reliable) this.armE();
    this.timers.push(opts.clock.after(64 * this.t.t1, () => this.timeout()));
  }

  private transmit(): void {
    this.sent++;
    this.opts.send();
  }

  /** Timer E: T1, 2T1, 4T1... capped at T2; at T2 once proceeding (section 17.1.2.2). */
  private armE(): void {
    const e = this.opts.clock.after(this.interval, () => {
      if (this.state !== "trying" && this.state !== "proceeding") return;
      this.transmit();
      this.interval = this.state === "proceeding"
        ? this.t.t2
        : Math.min(2 * this.interval, this.t.t2);
      this.armE();
    });
    this.timers.push(e);
  }

  /** A response whose branch and method match this transaction. */
  receive(response: SipResponse): void {
    if (this.state === "completed" || this.state === "terminated") return;
    if (response.status < 200) {
      this.state = "proceeding";
      this.interval = this.t.t2;
      return;
    }
    this.state = "completed";
    this.resolve({ kind: "response", response });
    for (const t of this.timers.splice(0)) t.cancel();
    // Timer K: T4 over UDP, zero over TCP, for retransmitted responses to find us.
    this.timers.push(this.opts.clock.after(this.opts.reliable ? 0 : this.t.t4, () => this.stop()));
  }

  private timeout(): void {
    if (this.state === "completed" || this.state === "terminated") return;
    this.resolve({ kind: "timeout" });
    this.stop();
  }

  /** Ends the transaction now (also when the UAS closes). */
  stop(): void {
    if (this.state === "terminated") return;
    if (this.state !== "completed") this.resolve({ kind: "timeout" });
    this.state = "terminated";
    for (const t of this.timers.splice(0)) t.cancel();
    this.opts.onEnd();
  }
}
