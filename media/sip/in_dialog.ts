// A call's dialog once the UAS holds it (RFC 3261 section 12): the calls by dialog id, the requests
// that arrive inside a dialog (the ACK of our 2xx, BYE, INFO, NOTIFY, re-INVITE or UPDATE with a
// new offer), the worker's own (BYE to hang up, REFER to transfer, both over dialog.ts) and how a
// call ends. A dialog is its Call-ID and both tags: a request whose To tag is ours but whose From
// tag is not the caller's is no request of this call and gets 481 (section 12.2.2), however well
// it guessed the rest. uas.ts makes the calls (INVITE, CANCEL) and hands each one here.
import type { SipClock, SipTimers } from "../../sip/clock.ts";
import type { ClientOutcome, NonInviteClientTransaction } from "../../sip/client_transaction.ts";
import { tagOf } from "../../sip/headers.ts";
import { header, type SipRequest, type SipResponse } from "../../sip/message.ts";
import { responseTo } from "../../sip/response.ts";
import { answerOffer } from "./sdp.ts";
import { InviteServerTransaction, type NonInviteServerTransaction } from "../../sip/transaction.ts";
import { answerInfo } from "./dtmf_info.ts";
import { clientKey, dialogKey } from "../../sip/keys.ts";
import { answeredDialogIds, type DialogIds, SipDialog, type TransferOutcome } from "./dialog.ts";
import { SessionTimer } from "./session_timer.ts";
import type { CallEndReason, CallEvent } from "./uas_types.ts";
import type { Channel, UasCall } from "./uas_call.ts";

type Transaction = InviteServerTransaction | NonInviteServerTransaction;

/** What the UAS lends the in-dialog handling. */
export interface DialogHost {
  clock: SipClock;
  timers: SipTimers;
  /** Our address and SIP port as the far end reaches them (Via, Contact of our requests). */
  where(): { host: string; port: number };
  emit(event: CallEvent): void;
  /** A 2xx in the call's dialog, with the SDP answer when there is one. */
  ok(request: SipRequest, call: UasCall, sdp?: string): SipResponse;
  local(call: UasCall): { address: string; port: number; sessionId: string; version: number };
  /** A request that names a call but not its dialog: logged (rate-limited) as a refusal. */
  refused(request: SipRequest, channel: Channel, status: number, reason: string): void;
}

export class InDialog {
  /** Calls by Call-ID and our tag (the UAS half of a dialog id, section 12): ringing or up. */
  readonly calls = new Map<string, UasCall>();
  /** Our own requests' transactions, by branch and method. */
  private readonly clientTransactions = new Map<string, NonInviteClientTransaction>();

  constructor(private readonly host: DialogHost) {}

  /** A call the UAS has taken and is ringing: from now on its dialog's requests find it. */
  hold(call: UasCall): void {
    this.calls.set(`${call.callId};${call.localTag}`, call);
  }

  /** The call is answered: its dialog is made, and the session timer runs (RFC 4028). */
  answer(invite: SipRequest, call: UasCall): void {
    call.state = "answered";
    const channel = call.channel;
    const { host, port } = this.host.where();
    call.dialog = new SipDialog({
      ids: answeredDialogIds(invite, call.localTag),
      host,
      port,
      transport: channel.transport,
      // Toward where the INVITE came from: a trunk behind NAT is reachable there (RFC 3581).
      send: (bytes) => channel.send(bytes, invite),
      clock: this.host.clock,
      timers: this.host.timers,
      track: (key, tx) => {
        this.clientTransactions.set(key, tx);
        return () => this.clientTransactions.delete(key);
      },
    });
    call.session = SessionTimer.start(
      invite,
      this.host.clock,
      () => this.hangUpCall(call, "session_expired"),
    );
  }

  /**
   * A call the worker placed (uac.ts) is answered: held as an answered call is, its dialog built
   * from our INVITE and the 2xx, its requests sent by `send` (toward the trunk). From now on the
   * far end's BYE, INFO and re-INVITE find it, and hangUp and transfer work on it.
   */
  placed(call: UasCall, ids: DialogIds, send: (bytes: Uint8Array) => void): SipDialog {
    const { host, port } = this.host.where();
    call.dialog = new SipDialog({
      ids,
      host,
      port,
      transport: call.channel.transport,
      send,
      clock: this.host.clock,
      timers: this.host.timers,
      track: (key, tx) => {
        this.clientTransactions.set(key, tx);
        return () => this.clientTransactions.delete(key);
      },
    });
    this.hold(call);
    return call.dialog;
  }

  /** A response to one of our requests (BYE, REFER, NOTIFY's answers): to its transaction. */
  response(response: SipResponse): void {
    this.clientTransactions.get(clientKey(response))?.receive(response);
  }

  /** The worker hangs up an answered call: BYE, then the call is forgotten. */
  async hangUp(callId: string): Promise<ClientOutcome | undefined> {
    const call = this.byCallId(callId);
    // Still ringing (a call prepared while it rings failed): its INVITE is refused, 480.
    if (call && !call.dialog) return void await this.end(call, "hung_up_here");
    if (!call?.dialog) return undefined;
    const bye = call.dialog.bye();
    await this.end(call, "hung_up_here");
    return await bye;
  }

  /** REFER in the call's dialog; resolves when the far end reports the transfer's outcome. */
  transfer(callId: string, referTo: string, outcomeMs?: number): Promise<TransferOutcome> {
    const call = this.byCallId(callId);
    if (!call?.dialog) return Promise.resolve({ ok: false, detail: "The call is not up." });
    return call.dialog.transfer(referTo, outcomeMs);
  }

  /** The Refer-To that puts a REFER's recipient in this call's place (dialog.ts replacing). */
  replacing(callId: string): string | undefined {
    return this.byCallId(callId)?.dialog?.replacing();
  }

  /** Timer L ran out with no ACK for our 2xx: section 13.3.1.4 says end the session with a BYE. */
  noAck(callId: string): void {
    const call = [...this.calls.values()].find((c) =>
      c.callId === callId && c.state === "answered"
    );
    if (call) this.hangUpCall(call, "no_ack");
  }

  /** The UAS is closing: a call still up gets our BYE (once: the socket closes after). */
  async close(): Promise<void> {
    for (const call of [...this.calls.values()]) {
      void call.dialog?.bye();
      await this.end(call, "shutdown");
    }
    for (const tx of [...this.clientTransactions.values()]) tx.stop();
  }

  private byCallId(callId: string): UasCall | undefined {
    return [...this.calls.values()].find((c) => c.callId === callId && c.state !== "ended");
  }

  /** Our BYE, then the end (the caller stopped refreshing the session, or never ACKed). */
  private hangUpCall(call: UasCall, reason: CallEndReason): void {
    void call.dialog?.bye();
    void this.end(call, reason);
  }

  async end(call: UasCall, reason: CallEndReason): Promise<void> {
    if (call.state === "ended") return;
    call.state = "ended";
    // Forgotten at once: a retransmitted BYE is answered by its transaction, not the dialog.
    this.calls.delete(`${call.callId};${call.localTag}`);
    call.answerTimer?.cancel();
    call.session?.stop();
    // Still ringing: the INVITE gets its final answer (section 15.1.2), 503 if we are going away.
    if (call.invite && !call.invite.answered) {
      const status = reason === "shutdown" ? 503 : reason === "hung_up_here" ? 480 : 487;
      call.invite.respond(responseTo(call.invite.request, status, { toTag: call.localTag }));
    }
    call.invite?.acknowledged(); // a BYE before the ACK stops the 2xx retransmissions too
    await call.rtp?.close();
    this.host.emit({ type: "ended", callId: call.callId, reason });
  }

  /**
   * The live call this request belongs to: Call-ID, our tag and the caller's tag all match.
   * `undefined` for no call; "foreign" when the Call-ID and our tag match but the From tag does not.
   */
  find(request: SipRequest): UasCall | "foreign" | undefined {
    const call = this.calls.get(dialogKey(request));
    if (!call || call.state === "ended") return undefined;
    return tagOf(header(request, "From")) === call.remoteTag ? call : "foreign";
  }

  /** The dialog's call, or the 481 sent (and a foreign request logged). */
  private callOf(request: SipRequest, tx: Transaction, channel: Channel): UasCall | undefined {
    const call = this.find(request);
    if (typeof call === "object") return call;
    tx.respond(responseTo(request, 481));
    if (call === "foreign") {
      this.host.refused(request, channel, 481, "From tag is not the dialog's");
    }
    return undefined;
  }

  /** The ACK of a 2xx: its own transaction, belonging to the dialog (section 13.3.1.4). */
  ack(request: SipRequest): void {
    const call = this.find(request);
    if (typeof call !== "object" || call.state !== "answered") return;
    call.state = "confirmed";
    call.invite?.acknowledged();
    this.host.emit({ type: "confirmed", callId: call.callId });
  }

  bye(request: SipRequest, tx: NonInviteServerTransaction, channel: Channel): void {
    const call = this.callOf(request, tx, channel);
    if (!call) return;
    tx.respond(responseTo(request, 200));
    void this.end(call, "caller_hung_up");
  }

  /** Key presses from trunks without RFC 4733 (dtmf_info.ts). */
  info(request: SipRequest, tx: NonInviteServerTransaction, channel: Channel): void {
    const call = this.callOf(request, tx, channel);
    if (!call?.dialog) return call ? tx.respond(responseTo(request, 481)) : undefined;
    const { response, digit } = answerInfo(request);
    tx.respond(response);
    if (digit) this.host.emit({ type: "dtmf", callId: call.callId, digit });
  }

  notify(request: SipRequest, tx: NonInviteServerTransaction, channel: Channel): void {
    const call = this.callOf(request, tx, channel);
    if (!call?.dialog) return call ? tx.respond(responseTo(request, 481)) : undefined;
    tx.respond(responseTo(request, 200));
    call.dialog.notify(request);
  }

  /** A re-INVITE or UPDATE in a dialog (hold, codec change, session refresh): from its offer. */
  reOffer(request: SipRequest, tx: Transaction, channel: Channel): void {
    const call = this.callOf(request, tx, channel);
    if (!call) return;
    call.session?.refresh(request);
    // An UPDATE without an offer only refreshes the session (RFC 4028 section 7.4).
    if (request.body.length === 0) return tx.respond(this.host.ok(request, call));
    call.sdpVersion++;
    const answer = answerOffer(new TextDecoder().decode(request.body), this.host.local(call));
    if (!answer.ok) return tx.respond(responseTo(request, 488));
    if (tx instanceof InviteServerTransaction) [call.invite, call.state] = [tx, "answered"];
    tx.respond(this.host.ok(request, call, answer.sdp));
    this.host.emit({ type: "media", callId: call.callId, media: answer.choice });
  }
}
