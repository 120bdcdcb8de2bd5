// One call as the UAS holds it (uas.ts, in_dialog.ts): its INVITE transaction, its dialog once
// answered, its RTP port, and how its requests came in. A call the worker placed (uac.ts) is held
// the same way once answered, so the far end's BYE, INFO and re-INVITE find it.
import type { SipDialog } from "./dialog.ts";
import type { SipRequest } from "../../sip/message.ts";
import type { RtpPort } from "./rtp_port.ts";
import type { SessionTimer } from "./session_timer.ts";
import type { InviteServerTransaction } from "../../sip/transaction.ts";
import type { Peer } from "../../sip/udp.ts";

/** How a request came in and how its responses go back. */
export interface Channel {
  transport: "UDP" | "TCP";
  from: Peer;
  send(bytes: Uint8Array, request: SipRequest): void;
}

export interface UasCall {
  dialog?: SipDialog;
  channel: Channel;
  callId: string;
  localTag: string;
  /** The INVITE's From tag: with the Call-ID and our tag, the dialog's id (section 12). */
  remoteTag?: string;
  /** The INVITE we answered; absent on a call the worker placed (uac.ts), until a re-INVITE. */
  invite?: InviteServerTransaction;
  state: "ringing" | "answered" | "confirmed" | "ended";
  rtp?: RtpPort;
  answerTimer?: { cancel(): void };
  session?: SessionTimer;
  sdpVersion: number;
  sessionId: string;
}
