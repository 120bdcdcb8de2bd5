// A provider's voice webhook admits a phone call as a SIP INVITE is: the agent (the webhook URL's,
// or the dialled number's from the numbers resource), then the node, the session row and the
// token by the one function every phone call's session is made with (api/sip/phone_session.ts
// createPhoneSession: connect's input, reservation and token; nothing written when no node can
// take the call). The caller's and the dialled number, the carrier and its call id go into the
// session's metadata, signed into the token, so the worker learns them from the control plane,
// which checked the provider's signature.
import type { Context } from "hono";
import { ApiError } from "../../common/http/errors.ts";
import { getAgent } from "../../db/agents.ts";
import { findPhoneNumber } from "../../db/phone_numbers.ts";
import { logger } from "../../common/log.ts";
import type { ApiDeps } from "../context.ts";
import type { PhoneNumberRoute } from "../../db/phone_numbers.ts";
import { createPhoneSession } from "../sip/phone_session.ts";
import { formParams, onceKeys, replayed } from "./webhook_guard.ts";
import type { StreamCarrier } from "../../common/carrier.ts";

const log = logger("telephony");

export interface PhoneCallIn {
  carrier: StreamCarrier;
  /** From the webhook's URL; absent, the dialled number's agent (the numbers resource). */
  agentId?: string;
  /** The caller's number as the provider gives it ("" if withheld). */
  from: string;
  to: string;
  /** The provider's id of the call. */
  callId: string;
  /** Plivo's signature nonce, spent with the session as the call id is. */
  nonce?: string;
}

export interface OpenedPhoneSession {
  sessionId: string;
  nodeId: string;
  token: string;
  /** The worker's WebSocket URL for this call's media stream (no token in it). */
  streamUrl: string;
}

/** The worker's WebSocket address for a stream: its offer base URL with ws(s) for http(s). */
export function streamUrlOf(offerBaseUrl: string, carrier: StreamCarrier, sessionId: string) {
  const base = offerBaseUrl.replace(/\/+$/, "").replace(/^http(s?):\/\//, "ws$1://");
  return `${base}/telephony/${carrier}/${sessionId}`;
}

/**
 * A dialled number as E.164: Twilio gives it so already, Plivo without the `+`, Exotel in India's
 * national form (0 and ten digits; its ExoPhones are Indian numbers).
 */
export function e164Of(number: string): string {
  const n = number.replace(/[\s()-]/g, "");
  if (/^\+[0-9]+$/.test(n)) return n;
  if (/^0[0-9]{10}$/.test(n)) return `+91${n.slice(1)}`;
  if (/^[1-9][0-9]{7,14}$/.test(n)) return `+${n}`;
  return n;
}

async function routeOf(deps: ApiDeps, call: PhoneCallIn): Promise<PhoneNumberRoute> {
  const number = e164Of(call.to);
  if (call.agentId) {
    const agent = await getAgent(deps.sql, call.agentId);
    if (!agent) throw new ApiError(404, "agent_not_found", "No such agent.");
    return {
      number,
      agent_id: agent.agent_id,
      workspace_id: agent.workspace_id,
      trunk_id: null,
      record_by_default: agent.record_by_default,
      interruption_sensitivity: agent.interruption_sensitivity,
      turn_patience: agent.turn_patience,
    };
  }
  const route = await findPhoneNumber(deps.sql, number);
  if (!route) {
    throw new ApiError(404, "number_not_found", "No agent answers the dialled number.", {
      number: call.to,
    });
  }
  return route;
}

/** The session for the call, or undefined when no worker can take it (nothing written). */
export async function openPhoneSession(
  deps: ApiDeps,
  call: PhoneCallIn,
): Promise<OpenedPhoneSession | undefined> {
  const once = onceKeys(call.carrier, call.callId, call.nonce);
  const route = await routeOf(deps, call);
  const opened = await createPhoneSession(deps, route, {
    caller: call.from,
    sip: false,
    carrier: call.carrier,
    callId: call.callId,
    once,
  });
  if (opened.kind === "replayed") throw replayed(call.carrier);
  if (opened.kind !== "reserved") {
    log.warn("no worker for a phone call", { agent_id: route.agent_id, carrier: call.carrier });
    return undefined;
  }
  log.info("phone session created", {
    session_id: opened.session_id,
    agent_id: opened.agent_id,
    node_id: opened.node.node_id,
    carrier: call.carrier,
  });
  return {
    sessionId: opened.session_id,
    nodeId: opened.node.node_id,
    token: opened.token,
    streamUrl: streamUrlOf(opened.node.offer_base_url, call.carrier, opened.session_id),
  };
}

/** XML text and attribute escaping for TwiML and Plivo XML. */
export function xmlEscape(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}

/** The URL a provider requested, as it signed it: PUBLIC_API_URL's origin when set. */
export function signedUrl(requestUrl: string, publicApiUrl: string | undefined): string {
  if (!publicApiUrl) return requestUrl;
  const u = new URL(requestUrl);
  return `${publicApiUrl}${u.pathname}${u.search}`;
}

/**
 * A form-posting provider's webhook (Twilio, Plivo): its form parameters, in order, and the URL
 * the provider signed them with.
 */
export async function signedForm(
  c: Context,
  deps: ApiDeps,
): Promise<{ params: [string, string][]; url: string }> {
  const params = await formParams(c);
  return { params, url: signedUrl(c.req.url, deps.telephony?.publicApiUrl) };
}

/** The call a form-posting provider's webhook describes: From, To and its own id of the call. */
export function callOfForm(
  c: Context,
  carrier: StreamCarrier,
  form: Record<string, string>,
  callIdField: "CallSid" | "CallUUID",
): PhoneCallIn {
  return {
    carrier,
    agentId: c.req.param("agent_id"),
    from: form.From ?? "",
    to: form.To ?? "",
    callId: form[callIdField] ?? "",
  };
}

/** A TwiML or Plivo XML answer (the two share the `<Response>` document): `verbs` inside it. */
export function xmlAnswer(c: Context, verbs: string): Response {
  return c.body(`<?xml version="1.0" encoding="UTF-8"?><Response>${verbs}</Response>`, 200, {
    "Content-Type": "text/xml; charset=utf-8",
  });
}

export const notConfigured = (carrier: string, variable: string) =>
  new ApiError(
    503,
    "telephony_not_configured",
    `${carrier} webhooks are refused until ${variable} is set: their signature cannot be checked.`,
  );

export const badSignature = (carrier: string) =>
  new ApiError(403, "invalid_signature", `The request's ${carrier} signature does not verify.`);
