// A SIP user agent server on UDP and TCP (RFC 3261 sections 8.2, 13.3, 15, 17.2): it matches each
// message to its transaction, answers the calls its lookup admits (180 then 200 with an SDP
// answer), takes CANCEL and OPTIONS, and refuses the rest with the RFC's codes. A call it takes is
// held by in_dialog.ts, which answers the requests inside its dialog and sends the worker's own
// (BYE, REFER). Media goes to the port openMedia gives.
import { logger } from "../../common/log.ts";
import { realClock, RFC_TIMERS, type SipClock, type SipTimers } from "../../sip/clock.ts";
import type { CallEvent, PhoneTarget, SipRefusal, UasOptions } from "./uas_types.ts";
import { dialledUser, parseNameAddr, tagOf } from "../../sip/headers.ts";
import {
  type Header,
  header,
  headerList,
  parseMessage,
  serialize,
  type SipRequest,
  type SipResponse,
} from "../../sip/message.ts";
import { contactFor, randomToken, responseTo } from "../../sip/response.ts";
import { tooShort, unsupported } from "./session_timer.ts";
import { acceptsSdp, answerOffer } from "./sdp.ts";
import { openRtpPort, type RtpPort } from "./rtp_port.ts";
import { InviteServerTransaction, NonInviteServerTransaction } from "../../sip/transaction.ts";
import type { ClientOutcome } from "../../sip/client_transaction.ts";
import { clientKey, stampVia, transactionKey } from "../../sip/keys.ts";
import type { UacHost } from "./uac.ts";
import type { DatagramSocket, Peer } from "../../sip/udp.ts";
import type { StreamHandlers, StreamListener, StreamSource } from "../../sip/tcp.ts";
import { TcpClient } from "../../sip/tcp_client.ts";
import { refusedStream } from "../../sip/stream.ts";
import { listenUdpAndTcp, responsePeer } from "../../sip/listen.ts";
import type { Channel, UasCall } from "./uas_call.ts";
import type { TransferOutcome } from "./dialog.ts";
import { InDialog } from "./in_dialog.ts";
import { RefusalLog } from "./refusal_log.ts";

export type * from "./uas_types.ts";

const log = logger("sip");
const ALLOW = "INVITE, ACK, CANCEL, BYE, OPTIONS, NOTIFY, INFO, UPDATE";

type Transaction = InviteServerTransaction | NonInviteServerTransaction;

export class SipUas {
  private socket?: DatagramSocket;
  private tcp?: StreamListener;
  /** Connections the worker opens toward trunks it places calls through (RFC 3261 18.1.1). */
  private readonly tcpOut: TcpClient;
  private readonly transactions = new Map<string, Transaction>();
  private readonly clock: SipClock;
  private readonly timers: SipTimers;
  private readonly inDialog: InDialog;
  private readonly refusals: RefusalLog;
  /** Client transactions of the calls the worker places (uac.ts), by branch and method. */
  private readonly placedClients = new Map<string, { receive(r: SipResponse): void }>();

  constructor(private readonly opts: UasOptions) {
    this.clock = opts.clock ?? realClock;
    this.timers = opts.timers ?? RFC_TIMERS;
    this.refusals = opts.refusals ?? new RefusalLog(log);
    this.tcpOut = new TcpClient(this.streamHandlers);
    this.inDialog = new InDialog({
      clock: this.clock,
      timers: this.timers,
      where: () => ({ host: this.announced, port: this.port }),
      emit: (event) => this.emit(event),
      ok: (request, call, sdp) => this.ok(request, call, sdp),
      local: (call) => this.local(call),
      refused: (request, channel, status, reason) =>
        this.refusals.refused({
          ...channel,
          source: channel.from,
          method: request.method,
          status,
          reason,
        }),
    });
  }

  /** Binds UDP and TCP on one port number, as trunks expect (any free one when port is 0). */
  async listen(): Promise<number> {
    const { udp, tcp } = await listenUdpAndTcp(
      this.opts.host,
      this.opts.port ?? 0,
      (b, from) => this.receive(b, from),
      this.streamHandlers,
    );
    [this.socket, this.tcp] = [udp, tcp];
    return udp.port;
  }

  /** What arrives on a TCP connection, accepted or opened by us: the same handling. */
  private get streamHandlers(): StreamHandlers {
    return {
      message: (bytes, source) => this.receiveStream(bytes, source),
      broken: (reason, bytes, source) => this.refuseStream(reason, bytes, source),
    };
  }

  get port(): number {
    if (!this.socket) throw new Error("SIP UAS is not listening");
    return this.socket.port;
  }

  /** Calls held: ringing or answered. An ended call is forgotten at once. */
  get activeCalls(): number {
    return this.inDialog.calls.size;
  }

  /** The worker hangs up an answered call: BYE, then the call is forgotten. */
  hangUp(callId: string): Promise<ClientOutcome | undefined> {
    return this.inDialog.hangUp(callId);
  }

  /** REFER in the call's dialog; resolves when the far end reports the transfer's outcome. */
  transfer(callId: string, referTo: string, outcomeMs?: number): Promise<TransferOutcome> {
    return this.inDialog.transfer(callId, referTo, outcomeMs);
  }

  /** The Refer-To with Replaces naming a held call's dialog (a warm transfer's join). */
  replacing(callId: string): string | undefined {
    return this.inDialog.replacing(callId);
  }

  /** What a call the worker places (uac.ts) borrows: this socket, its clock, its dialogs. */
  placing(): UacHost {
    return {
      clock: this.clock,
      timers: this.timers,
      where: () => ({ host: this.announced, port: this.port }),
      send: (bytes, to, transport) =>
        transport === "TCP" ? this.tcpOut.send(bytes, to) : this.socket?.send(bytes, to),
      connection: (to) => this.tcpOut.connection(to),
      track: (key, tx) => {
        this.placedClients.set(key, tx);
        return () => this.placedClients.delete(key);
      },
      answered: (call, ids, send) => this.inDialog.placed(call, ids, send),
      hangUp: (callId) => this.inDialog.hangUp(callId),
    };
  }

  async close(): Promise<void> {
    await this.inDialog.close();
    // After the dialogs: their ends answer what still rings, through these transactions.
    for (const tx of this.transactions.values()) tx.stop();
    this.transactions.clear();
    await this.socket?.close();
    await this.tcp?.close();
    await this.tcpOut.close();
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

  /** A TCP stream that cannot be framed: 400, 413 or 513 if the head says where; then it closes. */
  private refuseStream(reason: string, bytes: Uint8Array, source: StreamSource): void {
    this.handle(refusedStream(reason, bytes), this.streamChannel(source));
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
      const bad = responseTo(p, parsed.status ?? 400, {
        reason: parsed.status ? undefined : `Bad Request (${parsed.reason})`,
        toTag: randomToken(),
      });
      channel.send(serialize(bad), p);
      return;
    }
    const request = parsed.message;
    if (request.kind !== "request") {
      // A response to a call the worker placed goes to its INVITE or CANCEL (section 17.1.3).
      const placed = this.placedClients.get(clientKey(request));
      return placed ? placed.receive(request) : this.inDialog.response(request);
    }
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
    this.inDialog.ack(request);
  }

  private nonInvite(request: SipRequest, key: string, channel: Channel): void {
    const tx = new NonInviteServerTransaction(request, this.txOptions(request, key, channel));
    this.transactions.set(key, tx);
    const required = request.method !== "CANCEL" ? unsupported(headerList(request, "Require")) : [];
    if (required.length > 0) {
      return tx.respond(responseTo(request, 420, {
        toTag: randomToken(),
        headers: [{ name: "Unsupported", value: required.join(", ") }],
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
      case "NOTIFY":
        return this.inDialog.notify(request, tx, channel);
      case "UPDATE":
        return this.inDialog.reOffer(request, tx, channel);
      case "INFO":
        return this.inDialog.info(request, tx, channel);
      case "BYE":
        return this.inDialog.bye(request, tx, channel);
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
    const call = [...this.inDialog.calls.values()].find((c) => c.invite === invite);
    // Before the lookup ends there is no call yet, so no tag: the 487 below gets the same one.
    const tag = call?.localTag ?? randomToken();
    tx.respond(responseTo(request, 200, { toTag: tag }));
    if (invite.answered) return;
    if (call) return void this.inDialog.end(call, "caller_cancelled");
    invite.respond(responseTo(invite.request, 487, { toTag: tag }));
    this.emit({ type: "ended", callId: header(request, "Call-ID")!, reason: "caller_cancelled" });
  }

  private async invite(request: SipRequest, key: string, channel: Channel): Promise<void> {
    const callId = header(request, "Call-ID")!;
    const tx = new InviteServerTransaction(request, this.txOptions(request, key, channel, callId));
    this.transactions.set(key, tx);
    // 100 at once (section 17.2.1): the lookup may take longer than the caller's 200 ms.
    tx.respond(responseTo(request, 100));
    if (tagOf(header(request, "To")) !== undefined) {
      return this.inDialog.reOffer(request, tx, channel);
    }

    const refuse = (status: number, reason?: string, headers: Header[] = []) => {
      const response = responseTo(request, status, { toTag: randomToken(), reason, headers });
      tx.respond(response);
      this.refusals.refused({
        ...channel,
        source: channel.from,
        method: "INVITE",
        status,
        reason: response.reason,
      });
      this.emit({ type: "refused", callId, status, reason: response.reason });
    };
    const required = unsupported(headerList(request, "Require"));
    if (required.length > 0) {
      return refuse(420, undefined, [{ name: "Unsupported", value: required.join(", ") }]);
    }
    const minSe = tooShort(request);
    if (minSe) return refuse(422, undefined, minSe);
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
    // Our answer is SDP: a caller that accepts none is refused (section 21.4.7; RFC 4475 sdp01).
    if (!acceptsSdp(headerList(request, "Accept"))) return refuse(406);

    let found: PhoneTarget | SipRefusal | undefined;
    try {
      found = await this.opts.lookup(dialled, request);
    } catch {
      return tx.answered ? undefined : refuse(500, "Server Internal Error (number lookup failed)");
    }
    if (tx.answered) return; // cancelled while looking up
    if (!found) return refuse(404, "Not Found (no agent for this number)");
    if ("refuse" in found) return refuse(found.refuse, found.reason, found.headers);
    const target = found;

    let rtp: RtpPort;
    try {
      rtp = await (this.opts.openMedia ?? openRtpPort)(this.opts.host);
    } catch {
      // Every RTP port of the range is taken: the trunk may try another worker, or again soon.
      const retry = [{ name: "Retry-After", value: "5" }];
      return tx.answered ? undefined : refuse(503, "Service Unavailable (no RTP port free)", retry);
    }
    const call: UasCall = {
      channel,
      callId,
      localTag: randomToken(),
      remoteTag: tagOf(header(request, "From")),
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
    const refusal = await this.opts.accept?.(callId, target).catch(() => ({
      refuse: 500,
      reason: "Server Internal Error (the call could not be taken)",
    }));
    if (refusal || tx.answered) {
      await rtp.close();
      return refusal && !tx.answered ? refuse(refusal.refuse, refusal.reason) : undefined;
    }
    this.inDialog.hold(call);
    tx.respond(
      responseTo(request, 180, { toTag: call.localTag, headers: [this.contact(request)] }),
    );
    const signalling = channel.from.address;
    const prepared = this.opts.ringing?.({ callId, target, media: answer.choice, rtp, signalling })
      .catch(() => {});
    call.answerTimer = this.clock.after(this.opts.ringingMs ?? 0, async () => {
      await prepared; // the call prepared while it rang (ringing_call.ts), bounded there
      if (call.state !== "ringing" || tx.answered) return;
      this.inDialog.answer(request, call);
      tx.respond(this.ok(request, call, answer.sdp));
      this.emit({ type: "answered", callId, target, media: answer.choice, rtp, signalling });
    });
  }

  private get announced(): string {
    return this.opts.publicAddress ?? this.opts.host;
  }

  /** A 2xx in the call's dialog, with the SDP answer when there is one. */
  private ok(request: SipRequest, call: UasCall, sdp?: string) {
    const headers = [
      this.contact(request),
      ...this.capabilities(),
      ...call.session?.headers() ?? [],
    ];
    if (sdp) headers.push({ name: "Content-Type", value: "application/sdp" });
    const body = new TextEncoder().encode(sdp ?? "");
    return responseTo(request, 200, { toTag: call.localTag, headers, body });
  }

  private txOptions(request: SipRequest, key: string, channel: Channel, callId?: string) {
    return {
      clock: this.clock,
      timers: this.timers,
      reliable: channel.transport === "TCP",
      send: (bytes: Uint8Array) => channel.send(bytes, request),
      onEnd: (reason: "done" | "no_ack") => {
        this.transactions.delete(key);
        if (reason === "no_ack" && callId !== undefined) this.inDialog.noAck(callId);
      },
    };
  }

  private sendUdp(bytes: Uint8Array, request: SipRequest, from: Peer): void {
    this.socket?.send(bytes, responsePeer(request, from));
  }

  private local(call: UasCall) {
    return {
      address: this.announced,
      port: call.rtp?.port ?? 0,
      sessionId: call.sessionId,
      version: call.sdpVersion,
    };
  }

  private contact(request: SipRequest): Header {
    return contactFor(this.announced, this.port, request);
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
