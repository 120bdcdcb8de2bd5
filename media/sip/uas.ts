// A SIP user agent server on UDP (RFC 3261 sections 8.2, 12, 13.3, 15, 17.2): it answers calls
// for the numbers its lookup knows (180 then 200 with an SDP answer), takes CANCEL, BYE and
// OPTIONS, and refuses the rest with the RFC's codes. It answers the signalling only: RTP lands on
// a port per call that nothing plays into the call pipeline yet (docs/sip.md says what is left).
import { logger } from "../../common/log.ts";
import { realClock, RFC_TIMERS, type SipClock, type SipTimers } from "./clock.ts";
import { dialledUser, parseNameAddr, parseVia, tagOf } from "./headers.ts";
import {
  type Header,
  header,
  headerList,
  parseMessage,
  serialize,
  type SipRequest,
} from "./message.ts";
import { randomToken, responseTo } from "./response.ts";
import { type AnswerChoice, answerOffer } from "./sdp.ts";
import { openRtpPort, type RtpPort } from "./rtp_port.ts";
import { InviteServerTransaction, NonInviteServerTransaction } from "./transaction.ts";
import { bindUdp, type DatagramSocket, type Peer } from "./udp.ts";
import { listenTcp, type StreamListener, type StreamSource } from "./tcp.ts";

/** How a request came in and how its responses go back. */
interface Channel {
  transport: "UDP" | "TCP";
  from: Peer;
  send(bytes: Uint8Array, request: SipRequest): void;
}

/** What a dialled number leads to; the numbers resource (later work) will say which agent. */
export interface PhoneTarget {
  agentId: string;
}
export type NumberLookup = (
  dialled: string,
) => PhoneTarget | undefined | Promise<PhoneTarget | undefined>;

export type CallEndReason = "caller_hung_up" | "caller_cancelled" | "no_ack" | "shutdown";

export type CallEvent =
  | { type: "invited"; callId: string; dialled: string; caller?: string }
  | { type: "refused"; callId: string; status: number; reason: string }
  | { type: "answered"; callId: string; target: PhoneTarget; media: AnswerChoice }
  | { type: "confirmed"; callId: string }
  | { type: "ended"; callId: string; reason: CallEndReason };

export interface UasOptions {
  /** Address to bind and to announce in Contact and SDP. */
  host: string;
  /** 0 (the default) for any free port. */
  port?: number;
  lookup: NumberLookup;
  /** How long to ring (180) before answering; a CANCEL can arrive meanwhile. */
  ringingMs?: number;
  clock?: SipClock;
  timers?: SipTimers;
  onEvent?: (event: CallEvent) => void;
}

const log = logger("sip");
const ALLOW = "INVITE, ACK, CANCEL, BYE, OPTIONS";

interface PhoneCall {
  callId: string;
  localTag: string;
  invite: InviteServerTransaction;
  state: "ringing" | "answered" | "confirmed" | "ended";
  rtp?: RtpPort;
  answerTimer?: { cancel(): void };
  sdpVersion: number;
  sessionId: string;
}

type Transaction = InviteServerTransaction | NonInviteServerTransaction;

export class SipUas {
  private socket?: DatagramSocket;
  private tcp?: StreamListener;
  private readonly transactions = new Map<string, Transaction>();
  /** Calls by Call-ID and our tag (the UAS half of a dialog id, section 12). */
  private readonly calls = new Map<string, PhoneCall>();
  private readonly clock: SipClock;
  private readonly timers: SipTimers;

  constructor(private readonly opts: UasOptions) {
    this.clock = opts.clock ?? realClock;
    this.timers = opts.timers ?? RFC_TIMERS;
  }

  /** Binds UDP and TCP on one port number, as trunks expect (any free one when port is 0). */
  async listen(): Promise<number> {
    for (let attempt = 0;; attempt++) {
      const socket = await bindUdp(
        this.opts.host,
        this.opts.port ?? 0,
        (b, from) => this.receive(b, from),
      );
      try {
        this.tcp = listenTcp(this.opts.host, socket.port, {
          message: (bytes, source) => this.receiveStream(bytes, source),
          broken: (reason, bytes, source) => this.refuseStream(reason, bytes, source),
        });
        this.socket = socket;
        return socket.port;
      } catch (err) {
        await socket.close();
        // An ephemeral UDP port whose TCP twin is taken: try another.
        if (!(err instanceof Deno.errors.AddrInUse) || this.opts.port || attempt >= 8) throw err;
      }
    }
  }

  get port(): number {
    if (!this.socket) throw new Error("SIP UAS is not listening");
    return this.socket.port;
  }

  /** Calls held: ringing or answered. An ended call is forgotten at once. */
  get activeCalls(): number {
    return this.calls.size;
  }

  async close(): Promise<void> {
    for (const call of [...this.calls.values()]) await this.endCall(call, "shutdown");
    await this.socket?.close();
    await this.tcp?.close();
  }

  /** One datagram from `from`: parsed, matched to a transaction or dialog, answered. */
  receive(bytes: Uint8Array, from: Peer): void {
    this.handle(parseMessage(bytes), {
      transport: "UDP",
      from,
      send: (b, request) => this.sendUdp(b, request, from),
    });
  }

  private receiveStream(bytes: Uint8Array, source: StreamSource): void {
    this.handle(parseMessage(bytes, true), this.streamChannel(source));
  }

  /** A TCP stream that cannot be framed: a 400 if the head says where, then the connection closes. */
  private refuseStream(reason: string, bytes: Uint8Array, source: StreamSource): void {
    const parsed = parseMessage(bytes, true);
    this.handle(
      parsed.ok ? { ok: false, reason, partial: parsed.message } : parsed,
      this.streamChannel(source),
    );
  }

  private streamChannel(source: StreamSource): Channel {
    return { transport: "TCP", from: source.peer, send: (b) => source.reply(b) };
  }

  private handle(parsed: ReturnType<typeof parseMessage>, channel: Channel): void {
    const from = channel.from;
    if (!parsed.ok) {
      // A request we can still address gets 400 naming the fault (section 8.2); ACKs and
      // responses are never answered, and without a Via there is nowhere to answer.
      const p = parsed.partial;
      if (p?.kind !== "request" || p.method === "ACK" || !header(p, "Via")) return;
      stampVia(p, from);
      const bad = responseTo(p, 400, {
        reason: `Bad Request (${parsed.reason})`,
        toTag: randomToken(),
      });
      channel.send(serialize(bad), p);
      return;
    }
    const request = parsed.message;
    if (request.kind !== "request") return; // this UAS sends no requests yet
    stampVia(request, from);
    const key = transactionKey(request);
    if (request.method === "ACK") return this.ack(request, key);
    const existing = this.transactions.get(key);
    if (existing) return existing.receive(request);
    if (request.method === "INVITE") {
      this.invite(request, key, channel).catch((err) => this.failed(request, key, err));
    } else {
      try {
        this.nonInvite(request, key, channel);
      } catch (err) {
        this.failed(request, key, err);
      }
    }
  }

  /** A fault of ours while handling a request: 500 if it is still unanswered, and keep serving. */
  private failed(request: SipRequest, key: string, err: unknown): void {
    log.error("SIP request failed", {
      method: request.method,
      call_id: header(request, "Call-ID"),
      error: String(err),
    });
    const tx = this.transactions.get(key);
    const open = tx instanceof InviteServerTransaction
      ? !tx.answered
      : tx?.state === "trying" || tx?.state === "proceeding";
    if (tx && open) tx.respond(responseTo(request, 500, { toTag: randomToken() }));
  }

  private ack(request: SipRequest, key: string): void {
    const tx = this.transactions.get(key);
    if (tx instanceof InviteServerTransaction) return tx.receive(request);
    // The ACK of a 2xx is its own transaction and belongs to the dialog (section 13.3.1.4).
    const call = this.calls.get(dialogKey(request));
    if (!call || call.state !== "answered") return;
    call.state = "confirmed";
    call.invite.acknowledged();
    this.emit({ type: "confirmed", callId: call.callId });
  }

  private nonInvite(request: SipRequest, key: string, channel: Channel): void {
    const tx = new NonInviteServerTransaction(request, this.txOptions(request, key, channel));
    this.transactions.set(key, tx);
    const unsupported = request.method !== "CANCEL" ? headerList(request, "Require") : [];
    if (unsupported.length > 0) {
      return tx.respond(responseTo(request, 420, {
        toTag: randomToken(),
        headers: [{ name: "Unsupported", value: unsupported.join(", ") }],
      }));
    }
    switch (request.method) {
      case "OPTIONS":
        return tx.respond(responseTo(request, 200, {
          toTag: randomToken(),
          headers: [...this.capabilities(), { name: "Accept", value: "application/sdp" }],
        }));
      case "CANCEL":
        return this.cancel(request, tx);
      case "BYE": {
        const call = this.calls.get(dialogKey(request));
        if (!call || call.state === "ended") return tx.respond(responseTo(request, 481));
        tx.respond(responseTo(request, 200));
        void this.endCall(call, "caller_hung_up");
        return;
      }
      default:
        return tx.respond(
          responseTo(request, 405, { toTag: randomToken(), headers: this.capabilities() }),
        );
    }
  }

  /** Section 9.2: the CANCEL gets 200 (with the INVITE's To tag); the INVITE, if unanswered, 487. */
  private cancel(request: SipRequest, tx: NonInviteServerTransaction): void {
    const invite = this.transactions.get(transactionKey(request, "INVITE"));
    if (!(invite instanceof InviteServerTransaction)) return tx.respond(responseTo(request, 481));
    const call = [...this.calls.values()].find((c) => c.invite === invite);
    // Before the lookup ends there is no call yet, so no tag: the 487 below gets the same one.
    const tag = call?.localTag ?? randomToken();
    tx.respond(responseTo(request, 200, { toTag: tag }));
    if (invite.answered) return;
    if (call) return void this.endCall(call, "caller_cancelled");
    invite.respond(responseTo(invite.request, 487, { toTag: tag }));
    this.emit({ type: "ended", callId: header(request, "Call-ID")!, reason: "caller_cancelled" });
  }

  private async invite(request: SipRequest, key: string, channel: Channel): Promise<void> {
    const callId = header(request, "Call-ID")!;
    const tx = new InviteServerTransaction(request, this.txOptions(request, key, channel, callId));
    this.transactions.set(key, tx);
    // 100 at once (section 17.2.1): the lookup may take longer than the caller's 200 ms.
    tx.respond(responseTo(request, 100));
    if (tagOf(header(request, "To")) !== undefined) return this.reInvite(request, tx);

    const refuse = (status: number, reason?: string, headers: Header[] = []) => {
      const response = responseTo(request, status, { toTag: randomToken(), reason, headers });
      tx.respond(response);
      this.emit({ type: "refused", callId, status, reason: response.reason });
    };
    const required = headerList(request, "Require");
    if (required.length > 0) {
      return refuse(420, undefined, [{ name: "Unsupported", value: required.join(", ") }]);
    }
    const dialled = dialledUser(request.uri);
    if (dialled === undefined) return refuse(404, "Not Found (no number in the Request-URI)");
    const caller = parseNameAddr(header(request, "From") ?? "")?.uri;
    this.emit({
      type: "invited",
      callId,
      dialled,
      caller: caller ? dialledUser(caller) : undefined,
    });
    const contentType = header(request, "Content-Type")?.split(";")[0].trim().toLowerCase();
    if (request.body.length === 0) {
      return refuse(488, "Not Acceptable Here (INVITE without an SDP offer)");
    }
    if (contentType !== "application/sdp") {
      return refuse(415, undefined, [{ name: "Accept", value: "application/sdp" }]);
    }

    let target: PhoneTarget | undefined;
    try {
      target = await this.opts.lookup(dialled);
    } catch {
      return tx.answered ? undefined : refuse(500, "Server Internal Error (number lookup failed)");
    }
    if (tx.answered) return; // cancelled while looking up
    if (!target) return refuse(404, "Not Found (no agent for this number)");

    const rtp = await openRtpPort(this.opts.host);
    const call: PhoneCall = {
      callId,
      localTag: randomToken(),
      invite: tx,
      state: "ringing",
      rtp,
      sdpVersion: 1,
      sessionId: String(Date.now()),
    };
    if (tx.answered) return void rtp.close();
    const answer = answerOffer(new TextDecoder().decode(request.body), this.local(call));
    if (!answer.ok) {
      await rtp.close();
      return refuse(488, undefined, [{
        name: "Warning",
        value: `304 ${this.opts.host} "${answer.reason}"`,
      }]);
    }
    this.calls.set(`${callId};${call.localTag}`, call);
    tx.respond(
      responseTo(request, 180, { toTag: call.localTag, headers: [this.contact(request)] }),
    );
    call.answerTimer = this.clock.after(this.opts.ringingMs ?? 0, () => {
      if (call.state !== "ringing" || tx.answered) return;
      call.state = "answered";
      tx.respond(this.ok(request, call, answer.sdp));
      this.emit({ type: "answered", callId, target: target!, media: answer.choice });
    });
  }

  /** A re-INVITE in a dialog (hold, codec change): answered from the new offer. */
  private reInvite(request: SipRequest, tx: InviteServerTransaction): void {
    const call = this.calls.get(dialogKey(request));
    if (!call || call.state === "ended") return tx.respond(responseTo(request, 481));
    call.sdpVersion++;
    const answer = answerOffer(new TextDecoder().decode(request.body), this.local(call));
    if (!answer.ok) return tx.respond(responseTo(request, 488));
    call.invite = tx;
    call.state = "answered";
    tx.respond(this.ok(request, call, answer.sdp));
  }

  private ok(request: SipRequest, call: PhoneCall, sdp: string) {
    return responseTo(request, 200, {
      toTag: call.localTag,
      headers: [this.contact(request), ...this.capabilities(), {
        name: "Content-Type",
        value: "application/sdp",
      }],
      body: new TextEncoder().encode(sdp),
    });
  }

  private async endCall(call: PhoneCall, reason: CallEndReason): Promise<void> {
    if (call.state === "ended") return;
    call.state = "ended";
    // Forgotten at once: a retransmitted BYE is answered by its transaction, not the dialog.
    this.calls.delete(`${call.callId};${call.localTag}`);
    call.answerTimer?.cancel();
    // Still ringing: the INVITE gets its final answer (section 15.1.2), 503 if we are going away.
    if (!call.invite.answered) {
      const status = reason === "shutdown" ? 503 : 487;
      call.invite.respond(responseTo(call.invite.request, status, { toTag: call.localTag }));
    }
    call.invite.acknowledged(); // a BYE before the ACK stops the 2xx retransmissions too
    await call.rtp?.close();
    this.emit({ type: "ended", callId: call.callId, reason });
  }

  private txOptions(request: SipRequest, key: string, channel: Channel, callId?: string) {
    return {
      clock: this.clock,
      timers: this.timers,
      reliable: channel.transport === "TCP",
      send: (bytes: Uint8Array) => channel.send(bytes, request),
      onEnd: (reason: "done" | "no_ack") => {
        this.transactions.delete(key);
        if (reason !== "no_ack" || callId === undefined) return;
        // Timer L with no ACK: section 13.3.1.4 says end the session (the BYE is later work).
        const call = [...this.calls.values()].find((c) =>
          c.callId === callId && c.state === "answered"
        );
        if (call) void this.endCall(call, "no_ack");
      },
    };
  }

  /** Section 18.2.2: responses go where the request came from, at the Via's port unless rport. */
  private sendUdp(bytes: Uint8Array, request: SipRequest, from: Peer): void {
    const via = parseVia(headerList(request, "Via")[0] ?? "");
    const port = via?.params.has("rport") ? from.port : via?.port ?? 5060;
    this.socket?.send(bytes, { address: from.address, port });
  }

  private local(call: PhoneCall) {
    return {
      address: this.opts.host,
      port: call.rtp?.port ?? 0,
      sessionId: call.sessionId,
      version: call.sdpVersion,
    };
  }

  /** Our Contact, on the transport the dialog started on (section 12.1.1). */
  private contact(request: SipRequest): Header {
    const host = this.opts.host.includes(":") ? `[${this.opts.host}]` : this.opts.host;
    const tcp = parseVia(headerList(request, "Via")[0] ?? "")?.transport === "TCP";
    return { name: "Contact", value: `<sip:${host}:${this.port}${tcp ? ";transport=tcp" : ""}>` };
  }

  private capabilities(): Header[] {
    return [{ name: "Allow", value: ALLOW }];
  }

  /** The listener is the caller's code: its fault is logged, and the SIP dialogue goes on. */
  private emit(event: CallEvent): void {
    try {
      this.opts.onEvent?.(event);
    } catch (err) {
      log.error("SIP call event listener failed", { event: event.type, error: String(err) });
    }
  }
}

/**
 * Section 17.2.3: branch, sent-by and method (ACK counts as the INVITE it acknowledges). A branch
 * without the RFC 3261 cookie falls back to the RFC 2543 fields.
 */
export function transactionKey(request: SipRequest, method = request.method): string {
  const top = headerList(request, "Via")[0] ?? "";
  const via = parseVia(top);
  const branch = via?.params.get("branch") ?? "";
  const m = method === "ACK" ? "INVITE" : method;
  if (branch.startsWith("z9hG4bK")) return `${branch}|${via?.host}:${via?.port ?? 5060}|${m}`;
  const cseq = header(request, "CSeq")?.split(/\s+/)[0];
  return `2543|${header(request, "Call-ID")}|${tagOf(header(request, "From"))}|${cseq}|${top}|${m}`;
}

function dialogKey(request: SipRequest): string {
  return `${header(request, "Call-ID")};${tagOf(header(request, "To"))}`;
}

/** Section 18.2.1: the top Via learns the source address (received) and port (rport, RFC 3581). */
export function stampVia(request: SipRequest, from: Peer): void {
  const index = request.headers.findIndex((h) => h.name === "Via");
  if (index < 0) return;
  const [top, ...rest] = headerList({ ...request, headers: [request.headers[index]] }, "Via");
  const via = parseVia(top ?? "");
  if (!via) return;
  let stamped = top;
  if (via.host !== from.address) stamped += `;received=${from.address}`;
  if (via.params.has("rport")) stamped = stamped.replace(/;rport(?=;|$)/i, `;rport=${from.port}`);
  request.headers[index] = { name: "Via", value: [stamped, ...rest].join(", ") };
}
