// The carriers' credentials and addresses, from the environment (docs/telephony-websocket.md):
// each carrier reads its own (common/carriers/NAME/settings.ts); this puts them together, keyed by
// carrier name. The API reads them to verify a carrier's webhook signature; the worker to hang up
// or transfer a call through the carrier's REST API. Unset, that carrier's webhook is refused
// (503, it cannot be verified) and its calls can only be ended by closing the stream.
import type { StreamCarrier } from "./carrier.ts";
import { type TwilioSettings, twilioSettings } from "./carriers/twilio/settings.ts";
import { type PlivoSettings, plivoSettings } from "./carriers/plivo/settings.ts";
import { type ExotelSettings, exotelSettings } from "./carriers/exotel/settings.ts";

/** Each carrier's settings under its name. */
export interface CarrierSettings {
  twilio: TwilioSettings;
  plivo: PlivoSettings;
  exotel: ExotelSettings;
}

export interface TelephonySettings extends CarrierSettings {
  /**
   * The API's address as the carriers call it (PUBLIC_API_URL, e.g. https://voice.example.com):
   * carriers sign the URL they requested, which behind a proxy is not the one the API sees.
   * Unset, the request's own URL.
   */
  publicApiUrl?: string;
}

export function loadTelephonySettings(
  env: Record<string, string | undefined> = Deno.env.toObject(),
): TelephonySettings {
  // Every name in common/carrier.ts, or this fails `deno check`.
  return {
    publicApiUrl: env.PUBLIC_API_URL ? env.PUBLIC_API_URL.replace(/\/+$/, "") : undefined,
    twilio: twilioSettings(env),
    plivo: plivoSettings(env),
    exotel: exotelSettings(env),
  } satisfies TelephonySettings & Record<StreamCarrier, unknown>;
}
