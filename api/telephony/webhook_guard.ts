// What every carrier webhook shares on the way in: its form read under the API's body bounds
// (64 KiB, whole within 10 s, a body cut short a 400: it was a 500 with a stack trace), the keys
// that make its admission single-use, and a log line for each refusal.
//
// Replays: a signed request stays valid forever (neither X-Twilio-Signature nor Plivo's V3
// signature covers a time, and Exotel signs nothing), so a captured one could mint a session and a
// token each time it was posted. Following Twilio's and Plivo's guidance (Plivo's V3 nonce is
// "unique per request"; a CallSid / CallUUID names one call), a carrier's id of the call and a
// Plivo nonce are admitted once: written with the session, in the reservation's own statement,
// under a primary key (db/migrations/0006_phone_admission_guards.sql). The database, not process
// memory, because a fleet runs many API processes behind one load balancer and a replay may reach
// any of them; the key is kept a day, past any carrier's retry window.
import type { Context } from "hono";
import { ApiError } from "../../common/http/errors.ts";
import { peerOf } from "../../common/http/peer.ts";
import { readBodyText } from "../../common/http/json_body.ts";
import { logger } from "../../common/log.ts";
import { RefusalLog } from "../../common/refusal_log.ts";
import type { ApiDeps } from "../context.ts";

/** How long a webhook's single-use keys are kept (a day: past any carrier's retries). */
export const WEBHOOK_KEY_SECONDS = 24 * 3600;

/** The webhook's form parameters, in order, repeated names kept. */
export async function formParams(c: Context): Promise<[string, string][]> {
  return [...new URLSearchParams(await readBodyText(c)).entries()];
}

/** The keys a carrier's admission uses once; refused (400) without the carrier's call id. */
export function onceKeys(
  carrier: string,
  callId: string,
  nonce?: string,
): { keys: string[]; seconds: number } {
  if (!callId) {
    throw new ApiError(400, "invalid_request", `The ${carrier} request names no call id.`);
  }
  const keys = [`${carrier}-call:${callId.slice(0, 256)}`];
  if (nonce) keys.push(`${carrier}-nonce:${nonce.slice(0, 256)}`);
  return { keys, seconds: WEBHOOK_KEY_SECONDS };
}

export const replayed = (carrier: string) =>
  new ApiError(
    409,
    "replayed",
    `This ${carrier} call (or this signed request) was admitted before; a webhook admits once.`,
  );

const refusals = new RefusalLog(logger("telephony"));

/**
 * The webhook handler with each refusal logged (source, port, carrier, code; rate-limited, never
 * a signature, secret or token) before it is answered.
 */
export function loggedRefusals(
  carrier: string,
  handler: (c: Context, deps: ApiDeps) => Promise<Response>,
): (c: Context, deps: ApiDeps) => Promise<Response> {
  return async (c, deps) => {
    try {
      return await handler(c, deps);
    } catch (err) {
      if (err instanceof ApiError) {
        const peer = peerOf(c);
        refusals.refused("webhook refused", peer.address, err.code, {
          port: peer.port,
          carrier,
          status: err.status,
          path: c.req.path.slice(0, 128),
        });
      }
      throw err;
    }
  };
}
