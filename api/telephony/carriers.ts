// The control plane's carriers by name: the composition root, and with media/phone/carriers/
// registry.ts and common/telephony_settings.ts the only code that lists them. Adding a carrier:
// docs/telephony-websocket.md, "Adding a carrier".
import type { StreamCarrier } from "../../common/carrier.ts";
import type { WebhookCarrier } from "./carrier.ts";
import { twilio } from "./twilio/carrier.ts";
import { plivo } from "./plivo/carrier.ts";
import { exotel } from "./exotel/carrier.ts";

/** Keyed by the name type: a carrier in common/carrier.ts but missing here fails the check. */
export const CARRIERS: Readonly<Record<StreamCarrier, WebhookCarrier>> = { twilio, plivo, exotel };
