// Plivo's REST API for a streamed call. Closing an Audio Stream ends the stream, not the call, so
// hanging up goes through "Hang up a call" (DELETE /v1/Account/{auth_id}/Call/{call_uuid}/,
// https://www.plivo.com/docs/voice/api/call/hang-up-a-call), and transferring through "Transfer a
// call" (POST on the same Call with legs=aleg, aleg_url, aleg_method,
// https://www.plivo.com/docs/voice/api/call/transfer-a-call; 202 "call transferred"). Plivo then
// fetches XML from aleg_url, which ends the stream and runs the `<Dial>` it answers: the control
// plane serves that XML at a short-lived signed link (common/carriers/plivo/transfer_link.ts,
// api/telephony/plivo/transfer.ts). HTTP Basic with the auth ID and token.
import type { TransferResult } from "../../line.ts";
import type { CallControl } from "../stream_line.ts";
import { transferTarget } from "../transfer_target.ts";
import { signTransferLink } from "../../../../common/carriers/plivo/transfer_link.ts";

export interface PlivoCredentials {
  authId: string;
  authToken: string;
  /** https://api.plivo.com, or a test's fake. */
  apiUrl: string;
  /** The API's address as Plivo reaches it (PUBLIC_API_URL); unset, transfers are refused. */
  publicApiUrl?: string;
}

const REQUEST_TIMEOUT_MS = 5000;

export class PlivoCallControl implements CallControl {
  /** `sessionId`: the call's session, which the transfer link names. */
  constructor(private readonly creds: PlivoCredentials, private readonly sessionId: string) {}

  async hangUp(callUuid: string): Promise<string> {
    const r = await this.#call("DELETE", callUuid);
    await r.body?.cancel();
    return `${r.status} ${r.statusText}`;
  }

  async transfer(callUuid: string, target: string): Promise<TransferResult> {
    const to = transferTarget(target);
    if (!to) return { ok: false, detail: "The target must be an E.164 number or a sip: URI." };
    const { publicApiUrl, authToken } = this.creds;
    if (!publicApiUrl) {
      return {
        ok: false,
        detail: "Plivo transfers need PUBLIC_API_URL on the worker: Plivo fetches the transfer's " +
          "XML from the API there (docs/telephony-websocket.md).",
      };
    }
    const link = await signTransferLink({
      publicApiUrl,
      authToken,
      sessionId: this.sessionId,
      target: to.value,
    });
    const r = await this.#call(
      "POST",
      callUuid,
      new URLSearchParams({ legs: "aleg", aleg_url: link, aleg_method: "POST" }),
    );
    if (r.ok) {
      await r.body?.cancel();
      return { ok: true, detail: `Plivo answered ${r.status}: dialling ${to.value}` };
    }
    const body = await r.text().catch(() => "");
    return {
      ok: false,
      detail: `Plivo answered ${r.status} ${r.statusText} ${body.slice(0, 200)}`,
    };
  }

  #call(method: "DELETE" | "POST", callUuid: string, form?: URLSearchParams): Promise<Response> {
    const { authId, authToken, apiUrl } = this.creds;
    const url = `${apiUrl}/v1/Account/${encodeURIComponent(authId)}/Call/${
      encodeURIComponent(callUuid)
    }/`;
    const headers: Record<string, string> = {
      Authorization: `Basic ${btoa(`${authId}:${authToken}`)}`,
    };
    if (form) headers["Content-Type"] = "application/x-www-form-urlencoded";
    return fetch(url, {
      method,
      headers,
      body: form,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  }
}
