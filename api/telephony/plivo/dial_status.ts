// Plivo's callbacks for a call we placed (plivo/dial.ts), each signed with X-Plivo-Signature-V3 as
// the answer webhook is (https://www.plivo.com/docs/voice/concepts/signature-validation), on
// POST /api/v1/telephony/plivo/dialed/{session_id}/{ring|answer|hangup}
// ("Make a call": ring_url, answer_url, hangup_url, https://www.plivo.com/docs/voice/api/call/make-a-call):
// - ring → dial state `ringing`;
// - answer → `answered`, answered with the `<Stream>` to the worker (as plivo/answer.ts does for
//   an inbound call), or `<Hangup/>` when the session has ended meanwhile;
// - hangup, by CallStatus: busy → `busy`; no-answer and timeout → `no_answer`; cancel (withdrawn
//   before an answer) → `no_answer`; failed → `failed` / `dial_failed`; completed → `machine` when
//   the call asked to hang up on machines and Plivo says a machine answered (Machine=true, or
//   HangupCauseName "Machine Detected"), otherwise nothing (an answered call: the worker ends it).
// RequestUUID names the call (Plivo's 201 gave it); the session must be this call's.
import type { Context } from "hono";
import { ApiError } from "../../../common/http/errors.ts";
import type { ApiDeps } from "../../context.ts";
import { xmlAnswer, xmlEscape } from "../admit.ts";
import { applyDialProgress, type DialProgress } from "../dial_status.ts";
import { loggedRefusals } from "../webhook_guard.ts";
import { verifiedPlivoForm } from "./signature.ts";

export function plivoHangupProgress(form: Record<string, string>, machine: string): DialProgress {
  switch (form.CallStatus) {
    case "busy":
      return { end: "busy" };
    case "no-answer":
    case "timeout":
    case "cancel":
      return { end: "no_answer" };
    case "failed":
      return { end: "dial_failed" };
    default:
      if (
        machine === "hang_up" &&
        (form.Machine === "true" || form.HangupCauseName === "Machine Detected")
      ) return { end: "machine" };
      return { none: String(form.CallStatus ?? "none").slice(0, 32) };
  }
}

export const plivoDialEvent = loggedRefusals("plivo", async (c: Context, deps: ApiDeps) => {
  const { params, plivo } = await verifiedPlivoForm(c, deps);
  const form = Object.fromEntries(params);
  const event = c.req.param("event");
  const progress: DialProgress = event === "ring"
    ? { state: "ringing" }
    : event === "answer"
    ? { state: "answered" }
    : event === "hangup"
    ? plivoHangupProgress(form, c.req.query("machine") ?? "off")
    : { none: "" };
  if (event !== "ring" && event !== "answer" && event !== "hangup") {
    throw new ApiError(404, "not_found", "No such Plivo callback.");
  }
  const sessionId = c.req.param("session_id")!;
  const { open } = await applyDialProgress(
    deps,
    "plivo",
    sessionId,
    form.RequestUUID ?? "",
    progress,
  );
  if (event !== "answer") return c.body(null, 204);
  const stream = c.req.query("stream") ?? "";
  if (!open || !/^wss?:\/\//.test(stream)) return xmlAnswer(c, `<Hangup/>`);
  return xmlAnswer(
    c,
    `<Stream bidirectional="true" keepCallAlive="true" audioTrack="inbound" ` +
      `contentType="${plivo.streamContentType}">${xmlEscape(stream)}</Stream>`,
  );
});
