// Exotel's Voicebot applet, configured with this URL as its dynamic endpoint:
// GET /api/v1/telephony/exotel/{agent_id}. Exotel calls it and expects JSON {"url": "wss://..."}
// ("Working with the Stream and Voicebot Applet",
// https://support.exotel.com/support/solutions/articles/3000108630). Exotel does not sign its
// requests (its documented protections are IP allowlisting and Basic credentials in the URL), so
// this endpoint requires EXOTEL_WEBHOOK_SECRET: as the Basic password
// (https://exotel:SECRET@api.example.com/...) or as `?secret=SECRET`. The call's numbers come as
// the query's CallFrom/CallTo/CallSid (Exotel's applet parameters), or From/To.
import type { Context } from "hono";
import { ApiError } from "../../../common/http/errors.ts";
import type { ApiDeps } from "../../context.ts";
import { notConfigured, openPhoneSession } from "../admit.ts";
import { sameSecret } from "../signatures.ts";
import { loggedRefusals } from "../webhook_guard.ts";

/** The secret a request presents: the Basic password, or `?secret=`. */
export function presentedSecret(c: Context): string {
  const auth = c.req.header("authorization") ?? "";
  if (auth.startsWith("Basic ")) {
    try {
      const decoded = atob(auth.slice(6));
      return decoded.slice(decoded.indexOf(":") + 1);
    } catch {
      return "";
    }
  }
  return c.req.query("secret") ?? "";
}

export const exotelStreamUrl = loggedRefusals("exotel", async (c: Context, deps: ApiDeps) => {
  const secret = deps.telephony?.exotel.webhookSecret;
  if (!secret) throw notConfigured("Exotel", "EXOTEL_WEBHOOK_SECRET");
  if (!sameSecret(presentedSecret(c), secret)) {
    throw new ApiError(401, "unauthorized", "Send the Exotel webhook secret (Basic or ?secret=).");
  }
  const q = (a: string, b: string) => c.req.query(a) ?? c.req.query(b) ?? "";
  const opened = await openPhoneSession(deps, {
    carrier: "exotel",
    agentId: c.req.param("agent_id"),
    from: q("CallFrom", "From"),
    to: q("CallTo", "To"),
    callId: q("CallSid", "CallSid"),
  });
  if (!opened) {
    // Nothing was written; Exotel moves to the applet's next step.
    throw new ApiError(503, "no_worker", "No worker can take the call now.", {}, {
      "Retry-After": "2",
    });
  }
  return c.json({
    url: `${opened.streamUrl}?session_token=${encodeURIComponent(opened.token)}`,
  });
});
