// Plivo's REST API for a streamed call: closing an Audio Stream ends the stream, not the call, so
// hanging up goes through "Hang up a call" (DELETE /v1/Account/{auth_id}/Call/{call_uuid}/,
// https://www.plivo.com/docs/voice/api/call/hang-up-a-call), HTTP Basic with the auth ID and
// token. Transfer is not offered: Plivo's transfer ("Transfer a call", POST on the same Call with
// aleg_url) fetches new XML from a URL, which this service does not serve yet.
import type { TransferResult } from "../../line.ts";
import type { CallControl } from "../stream_line.ts";

export interface PlivoCredentials {
  authId: string;
  authToken: string;
  /** https://api.plivo.com, or a test's fake. */
  apiUrl: string;
}

const REQUEST_TIMEOUT_MS = 5000;

export class PlivoCallControl implements CallControl {
  constructor(private readonly creds: PlivoCredentials) {}

  async hangUp(callUuid: string): Promise<string> {
    const { authId, authToken, apiUrl } = this.creds;
    const url = `${apiUrl}/v1/Account/${encodeURIComponent(authId)}/Call/${
      encodeURIComponent(callUuid)
    }/`;
    const r = await fetch(url, {
      method: "DELETE",
      headers: { Authorization: `Basic ${btoa(`${authId}:${authToken}`)}` },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    await r.body?.cancel();
    return `${r.status} ${r.statusText}`;
  }

  transfer(_callUuid: string, _target: string): Promise<TransferResult> {
    return Promise.resolve({
      ok: false,
      detail: "Plivo calls are not transferred by this service: Plivo's transfer fetches new XML " +
        "from an aleg_url, which the service does not serve (docs/telephony-websocket.md).",
    });
  }
}
