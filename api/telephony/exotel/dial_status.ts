// Exotel's status callbacks for a call we placed (exotel/dial.ts):
// POST /api/v1/telephony/exotel/dialed/{session_id}?secret=SECRET, form-encoded ("StatusCallback",
// https://developer.exotel.com/docs/voice-v1/api-reference/status-callback): CallSid, Status
// (completed, failed, busy, no-answer), EventType (answered, terminal; ringing as the AgentStream
// guide lists it). Exotel signs nothing, so the secret our StatusCallback URL carries is required,
// as on the Voicebot dynamic URL. EventType ringing → dial state `ringing`; answered → `answered`;
// terminal, by Status: busy → `busy`; no-answer → `no_answer`; failed → `failed` / `dial_failed`;
// completed → nothing (an answered call: the worker ends it).
import type { Context } from "hono";
import { ApiError } from "../../../common/http/errors.ts";
import type { ApiDeps } from "../../context.ts";
import { notConfigured } from "../admit.ts";
import { sameSecret } from "../signatures.ts";
import { applyDialProgress, type DialProgress } from "../dial_status.ts";
import { formParams, loggedRefusals } from "../webhook_guard.ts";
import { presentedSecret } from "./stream_url.ts";

export function exotelProgress(form: Record<string, string>): DialProgress {
  if (form.EventType === "ringing") return { state: "ringing" };
  if (form.EventType === "answered") return { state: "answered" };
  switch (form.Status) {
    case "busy":
      return { end: "busy" };
    case "no-answer":
      return { end: "no_answer" };
    case "failed":
      return { end: "dial_failed" };
    default:
      return { none: String(form.Status ?? "none").slice(0, 32) };
  }
}

export const exotelDialStatus = loggedRefusals("exotel", async (c: Context, deps: ApiDeps) => {
  const secret = deps.telephony?.exotel.webhookSecret;
  if (!secret) throw notConfigured("Exotel", "EXOTEL_WEBHOOK_SECRET");
  if (!sameSecret(presentedSecret(c), secret)) {
    throw new ApiError(401, "unauthorized", "Send the Exotel webhook secret (Basic or ?secret=).");
  }
  const form = Object.fromEntries(await formParams(c));
  await applyDialProgress(
    deps,
    "exotel",
    c.req.param("session_id")!,
    form.CallSid ?? "",
    exotelProgress(form),
  );
  return c.body(null, 204);
});
