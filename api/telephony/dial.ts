// Placing an outbound call through a carrier's call API (issue 34; docs/telephony-websocket.md,
// "Calling out through a carrier"). The caller (calls.dial, api/dial/) has reserved the session on
// a node, with `phone_carrier` in its metadata and `direction` outbound, and minted its token; this
// asks the carrier's dialer to place the call with the worker's stream URL and our status webhook
// for the session. Once the carrier has the call, its status webhooks (NAME/dial_status.ts, then
// dial_status.ts) move the session's dial state and end it when nobody answers; an answered call's
// stream reaches the worker, which runs it as an inbound one. A refusal (the carrier's, a missing
// setting, an unreachable API) ends the session `failed` / `dial_failed` at once, and is logged.
import type { StreamCarrier } from "../../common/carrier.ts";
import { ApiError } from "../../common/http/errors.ts";
import { logger } from "../../common/log.ts";
import type { MachineDetection } from "../../common/dial.ts";
import { finishSession } from "../../db/sessions.ts";
import { recordCarrierCallId } from "../../db/carrier_dial.ts";
import type { ApiDeps } from "../context.ts";
import { streamUrlOf } from "./admit.ts";
import type { CarrierDialResult } from "./carrier.ts";
import { CARRIERS } from "./carriers.ts";

const log = logger("telephony");

/** The session calls.dial reserved for the call. */
export interface ReservedOutbound {
  session_id: string;
  /** The node's offer base URL (its stream route is under it). */
  offer_base_url: string;
  token: string;
}

export interface OutboundRequest {
  to: string;
  from: string;
  ring_timeout_seconds: number;
  machine_detection: MachineDetection;
}

/**
 * The machine detection the worker runs on a call through `carrierName`: none where the carrier's
 * own serves the mode (it decides before the stream opens), else the mode asked for.
 */
export function workerMachineDetection(
  carrierName: StreamCarrier,
  mode: MachineDetection,
): MachineDetection {
  return CARRIERS[carrierName].dialer?.detectsMachines(mode) ? "off" : mode;
}

/** The carrier's answer; on a refusal the session has been ended `failed` / `dial_failed`. */
export async function placeCarrierCall(
  deps: ApiDeps,
  carrierName: string,
  session: ReservedOutbound,
  call: OutboundRequest,
): Promise<CarrierDialResult> {
  const carrier = Object.values(CARRIERS).find((c) => c.name === carrierName);
  if (!carrier?.dialer) {
    throw new ApiError(400, "carrier_cannot_dial", "That carrier places no calls here.");
  }
  const name: StreamCarrier = carrier.name;
  const settings = deps.telephony;
  const missing = !settings
    ? "its settings"
    : !settings.publicApiUrl
    ? "PUBLIC_API_URL (the carrier must reach our status webhook)"
    : carrier.dialer.unconfigured(settings);
  let result: CarrierDialResult;
  if (missing || !settings) {
    result = { refused: { code: "telephony_not_configured", message: `Set ${missing}.` } };
  } else {
    try {
      result = await carrier.dialer.dial(settings, {
        session_id: session.session_id,
        stream_url: streamUrlOf(session.offer_base_url, name, session.session_id),
        session_token: session.token,
        to: call.to,
        from: call.from,
        ring_timeout_seconds: call.ring_timeout_seconds,
        machine_detection: call.machine_detection,
        status_callback_url:
          `${settings.publicApiUrl}/api/v1/telephony/${name}/dialed/${session.session_id}`,
      });
    } catch (err) {
      // The API could not be reached or answered nonsense: nothing is known to be dialled.
      result = {
        refused: { code: "carrier_unreachable", message: String((err as Error).message ?? err) },
      };
    }
  }
  if ("refused" in result) {
    await finishSession(deps.sql, session.session_id, "failed", "dial_failed");
    log.warn("outbound call refused", {
      session_id: session.session_id,
      carrier: name,
      code: result.refused.code,
      // A carrier's error may quote what it was sent: the token never reaches the log.
      message: result.refused.message.replaceAll(session.token, "[token]").slice(0, 200),
    });
    return result;
  }
  await recordCarrierCallId(deps.sql, session.session_id, result.carrier_call_id);
  log.info("outbound call placed", {
    session_id: session.session_id,
    carrier: name,
    call_id: result.carrier_call_id,
  });
  return result;
}
