// Requests inside a call's dialog (RFC 3261 section 12.2.2): the ACK of our 2xx, BYE, INFO,
// NOTIFY, and re-INVITE or UPDATE with a new offer. A dialog is its Call-ID and both tags: a
// request whose To tag is ours but whose From tag is not the caller's is no request of this call
// and gets 481 (section 12.2.2), however well it guessed the rest.
import { tagOf } from "../../sip/headers.ts";
import { header, type SipRequest, type SipResponse } from "../../sip/message.ts";
import { responseTo } from "../../sip/response.ts";
import { answerOffer } from "./sdp.ts";
import { InviteServerTransaction, type NonInviteServerTransaction } from "../../sip/transaction.ts";
import { answerInfo } from "./dtmf_info.ts";
import { dialogKey } from "../../sip/keys.ts";
import type { CallEndReason, CallEvent } from "./uas_types.ts";
import type { Channel, UasCall } from "./uas_call.ts";

type Transaction = InviteServerTransaction | NonInviteServerTransaction;

/** What the UAS lends the in-dialog handling. */
export interface DialogHost {
  /** Calls by Call-ID and our tag. */
  calls: Map<string, UasCall>;
  endCall(call: UasCall, reason: CallEndReason): Promise<void>;
  emit(event: CallEvent): void;
  /** A 2xx in the call's dialog, with the SDP answer when there is one. */
  ok(request: SipRequest, call: UasCall, sdp?: string): SipResponse;
  local(call: UasCall): { address: string; port: number; sessionId: string; version: number };
  /** A request that names a call but not its dialog: logged (rate-limited) as a refusal. */
  refused(request: SipRequest, channel: Channel, status: number, reason: string): void;
}

export class InDialog {
  constructor(private readonly host: DialogHost) {}

  /**
   * The live call this request belongs to: Call-ID, our tag and the caller's tag all match.
   * `undefined` for no call; "foreign" when the Call-ID and our tag match but the From tag does not.
   */
  find(request: SipRequest): UasCall | "foreign" | undefined {
    const call = this.host.calls.get(dialogKey(request));
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
    call.invite.acknowledged();
    this.host.emit({ type: "confirmed", callId: call.callId });
  }

  bye(request: SipRequest, tx: NonInviteServerTransaction, channel: Channel): void {
    const call = this.callOf(request, tx, channel);
    if (!call) return;
    tx.respond(responseTo(request, 200));
    void this.host.endCall(call, "caller_hung_up");
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
