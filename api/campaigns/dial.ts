// A campaign's calls go through the one function that places a call (api/dial/dial.ts
// dialNumber), with the body calls.dial would have been sent: every check and refusal is the same,
// booked to no key, as the admin token's dials are.
import { ApiError } from "../../common/http/errors.ts";
import { dialNumber } from "../dial/dial.ts";
import { parseDialBody } from "../dial/parse.ts";
import type { ApiDeps } from "../context.ts";
import type { CampaignDial, Dial } from "./scheduler.ts";

/** The body POST /api/v1/calls.dial would take for this campaign call. */
export function dialBodyOf(call: CampaignDial): Record<string, unknown> {
  return {
    agent_id: call.agent_id,
    to: call.to,
    from: call.from,
    ...(call.trunk_id ? { trunk_id: call.trunk_id } : {}),
    ring_timeout_seconds: call.ring_timeout_seconds,
    machine_detection: call.machine_detection,
    // The contact's data is what the brain is given at the start, as a page's init is.
    ...(Object.keys(call.agent_input).length ? { init: call.agent_input } : {}),
    // A contact's language is both directions' (stt and tts), as the console's language picker sets.
    ...(call.language
      ? { config: { stt: { language: call.language }, tts: { language: call.language } } }
      : {}),
    metadata: call.metadata,
  };
}

/** The scheduler's Dial over dialNumber; a refusal (a bad contact, a full fleet) is its result. */
export function campaignDialer(deps: ApiDeps): Dial {
  return async (call) => {
    let request;
    try {
      request = parseDialBody(dialBodyOf(call), await deps.capabilities.get());
    } catch (err) {
      if (err instanceof ApiError) return { refused: { code: err.code, message: err.message } };
      throw err;
    }
    const placed = await dialNumber(deps, call.workspace_id, request);
    return placed.ok
      ? { session_id: placed.session_id }
      : { refused: { code: placed.refusal.code, message: placed.refusal.message } };
  };
}
