// Twilio's status callbacks for a call we placed (twilio/dial.ts):
// POST /api/v1/telephony/twilio/dialed/{session_id}?machine=MODE, signed with X-Twilio-Signature
// as the voice webhook is ("Status callbacks",
// https://www.twilio.com/docs/voice/api/call-resource#statuscallback). CallStatus is read into the
// contract (common/dial.ts): ringing → dial state `ringing`; in-progress (the answered event) →
// `answered`, unless AnsweredBy names a machine or a fax and the call asked to hang up on one:
// then the call is hung up through Twilio's API and the session ends `machine`; busy → `busy`;
// no-answer → `no_answer`; canceled (the call was withdrawn before an answer) → `no_answer`;
// failed → `failed` / `dial_failed`; queued, initiated and completed change nothing (a completed
// call was answered: the worker ends its session).
import type { Context } from "hono";
import type { ApiDeps } from "../../context.ts";
import { applyDialProgress, type DialProgress } from "../dial_status.ts";
import { loggedRefusals } from "../webhook_guard.ts";
import { twilioForm } from "./signed_form.ts";
import { hangUpTwilioCall } from "./dial.ts";
import { logger } from "../../../common/log.ts";

const log = logger("telephony");

const MACHINE = new Set([
  "machine_start",
  "machine_end_beep",
  "machine_end_silence",
  "machine_end_other",
  "fax",
]);

export function twilioProgress(form: Record<string, string>, machine: string): DialProgress {
  switch (form.CallStatus) {
    case "ringing":
      return { state: "ringing" };
    case "in-progress":
      if (machine === "hang_up" && MACHINE.has(form.AnsweredBy ?? "")) return { end: "machine" };
      return { state: "answered" };
    case "busy":
      return { end: "busy" };
    case "no-answer":
    case "canceled":
      return { end: "no_answer" };
    case "failed":
      return { end: "dial_failed" };
    default:
      return { none: String(form.CallStatus ?? "none").slice(0, 32) };
  }
}

export const twilioDialStatus = loggedRefusals("twilio", async (c: Context, deps: ApiDeps) => {
  const form = await twilioForm(c, deps);
  const progress = twilioProgress(form, c.req.query("machine") ?? "off");
  const { changed } = await applyDialProgress(
    deps,
    "twilio",
    c.req.param("session_id")!,
    form.CallSid ?? "",
    progress,
  );
  // The machine is still on the line: Twilio runs the TwiML (the stream) until told otherwise.
  if (changed && "end" in progress && progress.end === "machine") {
    // The session is already ended; a failed hang-up is logged, not answered to Twilio as an error.
    const hungUp = await hangUpTwilioCall(deps.telephony!, form.CallSid ?? "").catch(() => false);
    if (!hungUp) log.warn("could not hang up a machine", { call_id: form.CallSid ?? "" });
  }
  return c.body(null, 204);
});
