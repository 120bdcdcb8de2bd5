// What the control plane asks of a carrier: its name, its webhooks and, when it can place calls,
// its dialer. One descriptor per carrier (NAME/carrier.ts), listed in carriers.ts; api/app.ts
// mounts each webhook under /api/v1/telephony/{name}. What a webhook checks (its signature or
// secret) and answers (TwiML, Plivo XML, a JSON stream URL) is the carrier's own; what every
// carrier shares is admit.ts (opening the session, the worker's stream URL), webhook_guard.ts
// (body bounds, single use, logged refusals) and dial.ts (placing an outbound call, its statuses).
import type { Context } from "hono";
import type { StreamCarrier } from "../../common/carrier.ts";
import type { MachineDetection } from "../../common/dial.ts";
import type { TelephonySettings } from "../../common/telephony_settings.ts";
import type { ApiDeps } from "../context.ts";

export interface CarrierWebhook {
  method: "GET" | "POST";
  /** After `/api/v1/telephony/{name}`: "" or a path starting with "/". */
  path: string;
  handler: (c: Context, deps: ApiDeps) => Promise<Response>;
}

/** One outbound call for a carrier to place (its session is reserved and its token minted). */
export interface CarrierDial {
  session_id: string;
  /** The worker's WebSocket URL for this session's stream (admit.ts streamUrlOf), no token. */
  stream_url: string;
  /**
   * The session token: in the stream URL's `session_token` query, or where the carrier's stream
   * can carry it (Twilio: a `<Parameter>`), as the inbound webhooks put it.
   */
  session_token: string;
  /** E.164. */
  to: string;
  /** E.164, a number of the carrier account. */
  from: string;
  ring_timeout_seconds: number;
  machine_detection: MachineDetection;
  /** Our URL for this session's status webhooks: `{PUBLIC_API_URL}/api/v1/telephony/{name}/dialed/{session_id}`. */
  status_callback_url: string;
}

export type CarrierDialResult =
  | { carrier_call_id: string }
  /** The carrier refused the request (or could not be reached): nothing was dialled. */
  | { refused: { code: string; message: string } };

export interface CarrierDialer {
  /** Which settings the call API needs, named for the refusal when one is missing. */
  unconfigured(settings: TelephonySettings): string | undefined;
  dial(settings: TelephonySettings, call: CarrierDial): Promise<CarrierDialResult>;
  /**
   * Whether the carrier's own answering-machine detection serves this mode (it decides before the
   * stream opens); where it does not, the worker's detector runs on the stream.
   */
  detectsMachines(mode: MachineDetection): boolean;
}

export interface WebhookCarrier {
  /** Its name: the webhooks' path, the worker's stream route and the session's `phone_carrier`. */
  readonly name: StreamCarrier;
  readonly webhooks: readonly CarrierWebhook[];
  /** Places outbound calls through the carrier's call API (absent: it cannot). */
  readonly dialer?: CarrierDialer;
}

/**
 * A carrier's voice webhook, at its bare path and under an agent id: the agent is the URL's, or
 * absent, the dialled number's (the numbers resource).
 */
export const answering = (
  method: CarrierWebhook["method"],
  handler: CarrierWebhook["handler"],
): CarrierWebhook[] => ["", "/:agent_id"].map((path) => ({ method, path, handler }));
