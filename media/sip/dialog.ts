// The worker's side of an answered call's dialog when it speaks first (RFC 3261 section 12.2.1):
// BYE to hang up, REFER to transfer (RFC 3515), and the NOTIFYs that report a REFER's progress
// (message/sipfrag, RFC 3420). Requests carry the dialog's identifiers, our CSeq, the route set the
// INVITE's Record-Route gave, and go out on the transport the INVITE came on. The same dialog
// serves a call the worker placed (uac.ts), built from its INVITE and the 2xx (placedDialogIds).
import type { SipClock, SipTimers } from "../../sip/clock.ts";
import { type ClientOutcome, NonInviteClientTransaction } from "../../sip/client_transaction.ts";
import { parseNameAddr, tagOf } from "../../sip/headers.ts";
import {
  type Header,
  header,
  headerList,
  serialize,
  type SipRequest,
  type SipResponse,
} from "../../sip/message.ts";
import { randomToken } from "../../sip/response.ts";

/** How long a REFER accepted with 202 may take to report its final status by NOTIFY. */
export const REFER_OUTCOME_MS = 32_000;

/** What identifies a dialog from our side (section 12.1): who we are, who they are, where to. */
export interface DialogIds {
  callId: string;
  /** The From of what we send: our URI with our tag. */
  local: string;
  /** The To of what we send: theirs with their tag. */
  remote: string;
  /** The remote target: the Request-URI of our requests. */
  target: string;
  /** The route set, in the order our requests carry it. */
  routes: string[];
  /** Our last CSeq number in this dialog; our next request takes the one after it. */
  cseq: number;
}

/** A dialog we answered (section 12.1.1): the INVITE's From is theirs, its To (tagged) ours. */
export function answeredDialogIds(invite: SipRequest, localTag: string): DialogIds {
  const remote = header(invite, "From")!;
  return {
    callId: header(invite, "Call-ID")!,
    local: `${header(invite, "To")};tag=${localTag}`,
    remote,
    // The remote target is the INVITE's Contact; the route set its Record-Route, in order.
    target: parseNameAddr(header(invite, "Contact") ?? "")?.uri ?? parseNameAddr(remote)!.uri,
    routes: headerList(invite, "Record-Route"),
    cseq: 1,
  };
}

/**
 * A dialog we placed (section 12.1.2), from our INVITE and its 2xx: our From, their To (tagged),
 * the 2xx's Contact as the remote target, its Record-Route reversed as the route set, and the
 * INVITE's CSeq as ours so far.
 */
export function placedDialogIds(invite: SipRequest, ok: SipResponse): DialogIds {
  const remote = header(ok, "To")!;
  return {
    callId: header(invite, "Call-ID")!,
    local: header(invite, "From")!,
    remote,
    target: parseNameAddr(header(ok, "Contact") ?? "")?.uri ?? invite.uri,
    routes: headerList(ok, "Record-Route").reverse(),
    cseq: Number(header(invite, "CSeq")!.trim().split(/\s+/)[0]),
  };
}

export interface DialogOptions {
  ids: DialogIds;
  /** Our address and port as the far end reaches them (Via, Contact). */
  host: string;
  port: number;
  transport: "UDP" | "TCP";
  /** Puts a request on the wire toward the far end. */
  send(bytes: Uint8Array): void;
  clock: SipClock;
  timers: SipTimers;
  /** Registers a client transaction under its branch so responses find it; returns the undo. */
  track(branch: string, tx: NonInviteClientTransaction): () => void;
}

export interface TransferOutcome {
  ok: boolean;
  detail: string;
}

export class SipDialog {
  private cseq: number;
  private byeSent?: Promise<ClientOutcome>;
  private refer?: { settle: (o: TransferOutcome) => void; timer: { cancel(): void } };
  readonly callId: string;
  /** The From of what we send (our URI and tag). */
  private readonly local: string;
  private readonly remote: string;
  private readonly target: string;
  private readonly routes: string[];

  constructor(private readonly opts: DialogOptions) {
    ({
      callId: this.callId,
      local: this.local,
      remote: this.remote,
      target: this.target,
      routes: this.routes,
      cseq: this.cseq,
    } = opts.ids);
  }

  /**
   * The ACK of our INVITE's 2xx (section 13.2.2.4): its own transaction (a new branch), the
   * INVITE's CSeq number, sent along the dialog's route. The caller sends it again for each
   * retransmitted 2xx.
   */
  ack(inviteCseq: number): Uint8Array {
    return serialize(this.build("ACK", inviteCseq, [], `z9hG4bK${randomToken()}`));
  }

  /** Hangs up: one BYE, however often it is asked for. Resolves with its outcome. */
  bye(): Promise<ClientOutcome> {
    this.byeSent ??= this.request("BYE", []);
    return this.byeSent;
  }

  get hungUp(): boolean {
    return this.byeSent !== undefined;
  }

  /**
   * Asks the far end to call `referTo` (a sip:/tel: URI) and waits for the NOTIFY that says how
   * that call went: 2xx in the sipfrag is a transfer done; a REFER refused, a failing sipfrag or
   * no final NOTIFY in REFER_OUTCOME_MS is not.
   */
  async transfer(referTo: string, outcomeMs = REFER_OUTCOME_MS): Promise<TransferOutcome> {
    if (this.refer) return { ok: false, detail: "A REFER is already under way." };
    const settled = new Promise<TransferOutcome>((resolve) => {
      const timer = this.opts.clock.after(
        outcomeMs,
        () => this.settle({ ok: false, detail: "No final NOTIFY for the REFER." }),
      );
      this.refer = { settle: resolve, timer };
    });
    const contact = `<sip:${hostPart(this.opts.host)}:${this.opts.port}>`;
    const outcome = await this.request("REFER", [
      { name: "Refer-To", value: `<${referTo}>` },
      { name: "Referred-By", value: contact },
    ]);
    if (outcome.kind === "timeout") this.settle({ ok: false, detail: "REFER got no answer." });
    else if (outcome.response.status >= 300) {
      const r = outcome.response;
      this.settle({ ok: false, detail: `REFER answered ${r.status} ${r.reason}` });
    }
    return settled;
  }

  /**
   * The Refer-To that asks another party to take this dialog's place (RFC 3891 section 3, RFC
   * 5589 section 7): the far end's contact with a Replaces header naming this dialog as the far
   * end sees it (its tag is the to-tag, ours the from-tag).
   */
  replacing(): string {
    const uri = this.target.split("?")[0];
    const replaces = `${this.callId};to-tag=${tagOf(this.remote) ?? ""};from-tag=${
      tagOf(this.local) ?? ""
    }`;
    return `${uri}?Replaces=${encodeURIComponent(replaces)}`;
  }

  /** A NOTIFY in this dialog: the status of the REFER's call (section 2.4.4 of RFC 3515). */
  notify(request: SipRequest): void {
    const event = (header(request, "Event") ?? "").split(";")[0].trim().toLowerCase();
    if (event !== "refer" || !this.refer) return;
    const frag = new TextDecoder().decode(request.body);
    const m = /^SIP\/2\.0\s+(\d{3})\s*([^\r\n]*)/.exec(frag);
    if (!m) return;
    const status = Number(m[1]);
    if (status < 200) return;
    this.settle({
      ok: status < 300,
      detail: `the transfer target answered ${status} ${m[2].trim()}`.trim(),
    });
  }

  private settle(outcome: TransferOutcome): void {
    const r = this.refer;
    if (!r) return;
    this.refer = undefined;
    r.timer.cancel();
    r.settle(outcome);
  }

  /** One in-dialog request in its own client transaction (section 12.2.1.1). */
  private request(method: string, extra: Header[]): Promise<ClientOutcome> {
    const branch = `z9hG4bK${randomToken()}`;
    const bytes = serialize(this.build(method, ++this.cseq, extra, branch));
    let untrack = () => {};
    const tx = new NonInviteClientTransaction({
      clock: this.opts.clock,
      timers: this.opts.timers,
      reliable: this.opts.transport === "TCP",
      send: () => this.opts.send(bytes),
      onEnd: () => untrack(),
    });
    untrack = this.opts.track(`${branch}|${method}`, tx);
    return tx.outcome;
  }

  private build(method: string, seq: number, extra: Header[], branch: string): SipRequest {
    const loose = this.routes.length > 0 && /;lr\b/i.test(this.routes[0]);
    const uri = loose || this.routes.length === 0
      ? this.target
      : parseNameAddr(this.routes[0])!.uri;
    const routes = loose ? this.routes : [...this.routes.slice(1), `<${this.target}>`];
    const headers: Header[] = [
      {
        name: "Via",
        value: `SIP/2.0/${this.opts.transport} ${
          hostPart(this.opts.host)
        }:${this.opts.port};branch=${branch};rport`,
      },
      { name: "Max-Forwards", value: "70" },
      { name: "From", value: this.local },
      { name: "To", value: this.remote },
      { name: "Call-ID", value: this.callId },
      { name: "CSeq", value: `${seq} ${method}` },
      ...(this.routes.length ? routes.map((r) => ({ name: "Route", value: r })) : []),
      {
        name: "Contact",
        value: `<sip:${hostPart(this.opts.host)}:${this.opts.port}${
          this.opts.transport === "TCP" ? ";transport=tcp" : ""
        }>`,
      },
      ...extra,
      { name: "Content-Length", value: "0" },
    ];
    return { kind: "request", method, uri, headers, body: new Uint8Array() };
  }
}

function hostPart(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}
