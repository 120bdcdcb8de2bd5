// What the control plane asks of a carrier: its name and its webhooks. One descriptor per carrier
// (NAME/carrier.ts), listed in carriers.ts; api/app.ts mounts each webhook under
// /api/v1/telephony/{name}. What a webhook checks (its signature or secret) and answers (TwiML,
// Plivo XML, a JSON stream URL) is the carrier's own; what every carrier shares is admit.ts
// (opening the session, the worker's stream URL) and webhook_guard.ts (body bounds, single use,
// logged refusals).
import type { Context } from "hono";
import type { StreamCarrier } from "../../common/carrier.ts";
import type { ApiDeps } from "../context.ts";

export interface CarrierWebhook {
  method: "GET" | "POST";
  /** After `/api/v1/telephony/{name}`: "" or a path starting with "/". */
  path: string;
  handler: (c: Context, deps: ApiDeps) => Promise<Response>;
}

export interface WebhookCarrier {
  /** Its name: the webhooks' path, the worker's stream route and the session's `phone_carrier`. */
  readonly name: StreamCarrier;
  readonly webhooks: readonly CarrierWebhook[];
}

/**
 * A carrier's voice webhook, at its bare path and under an agent id: the agent is the URL's, or
 * absent, the dialled number's (the numbers resource).
 */
export const answering = (
  method: CarrierWebhook["method"],
  handler: CarrierWebhook["handler"],
): CarrierWebhook[] => ["", "/:agent_id"].map((path) => ({ method, path, handler }));
