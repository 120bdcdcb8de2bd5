// Twilio's REST API for a streamed call: closing a Media Stream ends the stream, not the call, so
// hanging up and transferring go through the Call resource ("Update a Call resource",
// https://www.twilio.com/docs/voice/api/call-resource#update-a-call-resource): Status=completed
// hangs up; Twiml=<Response><Dial>…</Dial></Response> replaces the call's instructions, which ends
// the stream and dials the target. HTTP Basic with the account SID and auth token.
import type { TransferResult } from "../../line.ts";
import type { CallControl } from "../stream_line.ts";
import { transferTarget } from "../transfer_target.ts";

export interface TwilioCredentials {
  accountSid: string;
  authToken: string;
  /** https://api.twilio.com, or a test's fake. */
  apiUrl: string;
}

const REQUEST_TIMEOUT_MS = 5000;

export class TwilioCallControl implements CallControl {
  constructor(private readonly creds: TwilioCredentials) {}

  async hangUp(callSid: string): Promise<string> {
    const r = await this.#update(callSid, { Status: "completed" });
    return `${r.status} ${r.statusText}`;
  }

  async transfer(callSid: string, target: string): Promise<TransferResult> {
    const to = transferTarget(target);
    if (!to) {
      return { ok: false, detail: "The target must be an E.164 number or a sip: URI." };
    }
    const noun = to.kind === "number" ? `<Number>${to.value}</Number>` : `<Sip>${to.value}</Sip>`;
    const r = await this.#update(callSid, { Twiml: `<Response><Dial>${noun}</Dial></Response>` });
    if (r.ok) return { ok: true, detail: `Twilio answered ${r.status}: dialling ${to.value}` };
    const body = await r.text().catch(() => "");
    return {
      ok: false,
      detail: `Twilio answered ${r.status} ${r.statusText} ${body.slice(0, 200)}`,
    };
  }

  async #update(callSid: string, form: Record<string, string>): Promise<Response> {
    const { accountSid, authToken, apiUrl } = this.creds;
    const url = `${apiUrl}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Calls/${
      encodeURIComponent(callSid)
    }.json`;
    const r = await fetch(url, {
      method: "POST",
      headers: {
        Authorization: `Basic ${btoa(`${accountSid}:${authToken}`)}`,
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams(form),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    if (r.ok) await r.body?.cancel();
    return r;
  }
}
