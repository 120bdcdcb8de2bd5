// The control plane's SIP redirect server (RFC 3261 sections 8.3 and 21.3): a trunk's INVITE is
// answered with a final response only, a 3xx naming the worker that takes the call or a refusal,
// so no dialog and no media ever touch the control plane. It shares the SIP parser, UDP/TCP
// transports and server transactions with the worker (sip/); what an INVITE gets is the `decide`
// callback's answer (api/sip/phone_calls.ts).
import { logger } from "../../common/log.ts";
import { realClock, RFC_TIMERS, type SipClock, type SipTimers } from "../../sip/clock.ts";
import { tagOf } from "../../sip/headers.ts";
import {
  type Header,
  header,
  parseMessage,
  serialize,
  type SipRequest,
} from "../../sip/message.ts";
import { randomToken, responseTo } from "../../sip/response.ts";
import { InviteServerTransaction, NonInviteServerTransaction } from "../../sip/transaction.ts";
import { stampVia, transactionKey } from "../../sip/keys.ts";
import type { DatagramSocket, Peer } from "../../sip/udp.ts";
import type { StreamBounds, StreamListener, StreamSource } from "../../sip/tcp.ts";
import { listenUdpAndTcp, responsePeer } from "../../sip/listen.ts";
import { refusedStream } from "../../sip/stream.ts";

/** Where an INVITE came from: the transport's peer, what a trunk's allowlist is checked against. */
export interface InviteSource extends Peer {
  transport: "UDP" | "TCP";
}

/** The final response an INVITE gets. */
export interface InviteAnswer {
  status: number;
  reason?: string;
  headers?: Header[];
}

export type InviteDecision = (invite: SipRequest, source: InviteSource) => Promise<InviteAnswer>;

export interface RedirectOptions {
  host: string;
  /** 0 (the default): any free port. */
  port?: number;
  decide: InviteDecision;
  clock?: SipClock;
  timers?: SipTimers;
  /** Time and connection bounds on SIP over TCP (sip/tcp.ts's defaults). */
  tcpBounds?: StreamBounds;
}

const log = logger("sip-redirect");
const ALLOW = "INVITE, ACK, CANCEL, OPTIONS";

interface Channel {
  source: InviteSource;
  send(bytes: Uint8Array, request: SipRequest): void;
}

type Transaction = InviteServerTransaction | NonInviteServerTransaction;

export class SipRedirectServer {
  private socket?: DatagramSocket;
  private tcp?: StreamListener;
  private readonly transactions = new Map<string, Transaction>();
  /** INVITEs a CANCEL reached before their answer: answered 487 instead. */
  private readonly cancelled = new Set<InviteServerTransaction>();
  private readonly clock: SipClock;
  private readonly timers: SipTimers;
  private readonly deciding = new Set<Promise<void>>();
  /** Transaction timers not yet run: close() cancels them, so nothing is sent after it. */
  private readonly pending = new Set<{ cancel(): void }>();
  private closed = false;

  constructor(private readonly opts: RedirectOptions) {
    const base = opts.clock ?? realClock;
    this.clock = {
      after: (ms, fn) => {
        const handle = base.after(ms, () => {
          this.pending.delete(handle);
          fn();
        });
        this.pending.add(handle);
        return {
          cancel: () => {
            this.pending.delete(handle);
            handle.cancel();
          },
        };
      },
    };
    this.timers = opts.timers ?? RFC_TIMERS;
  }

  /** Binds UDP and TCP on one port number (any free one when port is 0); returns it. */
  async listen(): Promise<number> {
    const { udp, tcp } = await listenUdpAndTcp(
      this.opts.host,
      this.opts.port ?? 0,
      (bytes, from) =>
        this.handle(parseMessage(bytes), {
          source: { ...from, transport: "UDP" },
          send: (b, request) => this.sendUdp(b, request, from),
        }),
      {
        message: (bytes, s) => this.handle(parseMessage(bytes, true), this.stream(s)),
        broken: (reason, bytes, s) => this.handle(refusedStream(reason, bytes), this.stream(s)),
      },
      this.opts.tcpBounds,
    );
    [this.socket, this.tcp] = [udp, tcp];
    return udp.port;
  }

  get port(): number {
    if (!this.socket) throw new Error("SIP redirect server is not listening");
    return this.socket.port;
  }

  /** Transactions still remembered (answered ones stay for Timer H/I/J to absorb repeats). */
  get openTransactions(): number {
    return this.transactions.size;
  }

  /**
   * Stops listening once the INVITEs being decided have their answer; the transactions' timers
   * (retransmissions to a trunk that never ACKed, Timers H, I, J) stop with it.
   */
  async close(): Promise<void> {
    await Promise.allSettled([...this.deciding]);
    this.closed = true;
    for (const timer of [...this.pending]) timer.cancel();
    this.transactions.clear();
    await this.socket?.close();
    await this.tcp?.close();
  }

  private stream(s: StreamSource): Channel {
    return { source: { ...s.peer, transport: "TCP" }, send: (b) => s.reply(b) };
  }

  private handle(parsed: ReturnType<typeof parseMessage>, channel: Channel): void {
    if (!parsed.ok) {
      const p = parsed.partial;
      if (p?.kind !== "request" || p.method === "ACK" || !header(p, "Via")) return;
      stampVia(p, channel.source);
      const bad = responseTo(p, parsed.status ?? 400, {
        reason: parsed.status ? undefined : `Bad Request (${parsed.reason})`,
        toTag: randomToken(),
      });
      channel.send(serialize(bad), p);
      return;
    }
    const request = parsed.message;
    if (request.kind !== "request") return; // a redirect server sends no requests
    stampVia(request, channel.source);
    const key = transactionKey(request);
    const existing = this.transactions.get(key);
    if (request.method === "ACK") {
      // The ACK of our 3xx/4xx/5xx belongs to the INVITE transaction, which absorbs it (17.2.1).
      if (existing instanceof InviteServerTransaction) existing.receive(request);
      return;
    }
    if (existing) return existing.receive(request);
    if (request.method === "INVITE") this.invite(request, key, channel);
    else this.nonInvite(request, key, channel);
  }

  private invite(request: SipRequest, key: string, channel: Channel): void {
    const tx = new InviteServerTransaction(request, this.txOptions(request, key, channel));
    this.transactions.set(key, tx);
    // 100 at once (section 17.2.1): the lookup and the reservation take a database round trip.
    tx.respond(responseTo(request, 100));
    // A redirect server holds no dialogs: a request inside one is not ours (section 12.2.2).
    if (tagOf(header(request, "To")) !== undefined) {
      return tx.respond(responseTo(request, 481, { toTag: randomToken() }));
    }
    const deciding = this.opts.decide(request, channel.source).then(
      (answer) => answer,
      (err): InviteAnswer => {
        log.error("INVITE decision failed", {
          call_id: header(request, "Call-ID"),
          error: String(err),
        });
        return { status: 500 };
      },
    ).then((answer) => {
      if (tx.answered) return;
      if (this.cancelled.delete(tx)) answer = { status: 487 };
      tx.respond(responseTo(request, answer.status, {
        toTag: randomToken(),
        reason: answer.reason,
        headers: answer.headers,
      }));
    });
    this.deciding.add(deciding);
    deciding.finally(() => this.deciding.delete(deciding));
  }

  private nonInvite(request: SipRequest, key: string, channel: Channel): void {
    const tx = new NonInviteServerTransaction(request, this.txOptions(request, key, channel));
    this.transactions.set(key, tx);
    const allow: Header = { name: "Allow", value: ALLOW };
    switch (request.method) {
      case "OPTIONS":
        return tx.respond(responseTo(request, 200, { toTag: randomToken(), headers: [allow] }));
      case "CANCEL": {
        // Section 9.2: 200 to the CANCEL; the INVITE, if still unanswered, gets 487.
        const invite = this.transactions.get(transactionKey(request, "INVITE"));
        if (!(invite instanceof InviteServerTransaction)) {
          return tx.respond(responseTo(request, 481, { toTag: randomToken() }));
        }
        tx.respond(responseTo(request, 200, { toTag: randomToken() }));
        if (!invite.answered) this.cancelled.add(invite);
        return;
      }
      case "BYE":
        return tx.respond(responseTo(request, 481, { toTag: randomToken() }));
      default:
        return tx.respond(responseTo(request, 405, { toTag: randomToken(), headers: [allow] }));
    }
  }

  private txOptions(request: SipRequest, key: string, channel: Channel) {
    return {
      clock: this.clock,
      timers: this.timers,
      reliable: channel.source.transport === "TCP",
      send: (bytes: Uint8Array) => channel.send(bytes, request),
      onEnd: () => this.transactions.delete(key),
    };
  }

  private sendUdp(bytes: Uint8Array, request: SipRequest, from: Peer): void {
    if (this.closed) return;
    this.socket?.send(bytes, responsePeer(request, from));
  }
}
