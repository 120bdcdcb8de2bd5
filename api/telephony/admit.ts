// A provider's voice webhook admits a phone call the way sessions.connect admits a page's: the
// agent, then the node, the session row and the token by connect's own openSession (so the node
// choice, the slot hold and every write are connect's). The agent comes from the webhook's URL
// when it names one, otherwise from the dialled number (db/phone_numbers.ts, the numbers resource).
// The caller's and the dialled number go into the session's metadata, signed into the token, so
// the worker learns them from the control plane, which checked the provider's signature.
import { ApiError } from "../../common/http/errors.ts";
import { getAgent } from "../../db/agents.ts";
import { findPhoneNumber } from "../../db/phone_numbers.ts";
import { logger } from "../../common/log.ts";
import type { ApiDeps } from "../context.ts";
import { parseConnectBody } from "../connect/parse.ts";
import { type OpenedSession, openSession } from "../connect/route.ts";

const log = logger("telephony");

export type StreamCarrier = "twilio" | "plivo" | "exotel";

export interface PhoneCallIn {
  carrier: StreamCarrier;
  /** From the webhook's URL; absent, the dialled number's agent (the numbers resource). */
  agentId?: string;
  /** The caller's number as the provider gives it ("" if withheld). */
  from: string;
  to: string;
  /** The provider's id of the call. */
  callId: string;
}

export interface OpenedPhoneSession extends OpenedSession {
  /** The worker's WebSocket URL for this call's media stream (no token in it). */
  streamUrl: string;
}

/** Metadata values are at most 256 characters (parse.ts LIMITS); a number never comes close. */
const label = (v: string) => v.slice(0, 256);

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

async function agentIdOf(deps: ApiDeps, call: PhoneCallIn): Promise<string> {
  if (call.agentId) return call.agentId;
  const route = await findPhoneNumber(deps.sql, e164Of(call.to));
  if (!route) {
    throw new ApiError(404, "number_not_found", "No agent answers the dialled number.", {
      number: call.to,
    });
  }
  return route.agent_id;
}

export async function openPhoneSession(deps: ApiDeps, call: PhoneCallIn) {
  const agent = await getAgent(deps.sql, await agentIdOf(deps, call));
  if (!agent) throw new ApiError(404, "agent_not_found", "No such agent.");
  const req = parseConnectBody(
    {
      agent_id: agent.agent_id,
      metadata: {
        carrier: call.carrier,
        from: label(call.from),
        to: label(call.to),
        call_id: label(call.callId),
      },
    },
    await deps.capabilities.get(),
  );
  const opened = await openSession(deps, {
    req,
    agentId: agent.agent_id,
    workspaceId: agent.workspace_id,
    keyId: null,
    recordEffective: agent.record_by_default,
  });
  log.info("phone session created", {
    session_id: opened.session.session_id,
    agent_id: agent.agent_id,
    node_id: opened.node.node_id,
    carrier: call.carrier,
  });
  return {
    ...opened,
    streamUrl: streamUrlOf(opened.node.offer_base_url, call.carrier, opened.session.session_id),
  } satisfies OpenedPhoneSession;
}

/** connect's refusal when no node can take the call: the phone webhooks answer it as busy. */
export const isNoNode = (err: unknown) =>
  err instanceof ApiError && err.code === "missing_connect_params";

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

/** A voice webhook's form is a few hundred bytes; far more is not the provider. */
const FORM_BYTES = 64 * 1024;

/** The webhook's form parameters, in order, repeated names kept. */
export async function formParams(req: Request): Promise<[string, string][]> {
  const tooLarge = () => new ApiError(413, "body_too_large", "The body is too large.");
  if (Number(req.headers.get("content-length") ?? 0) > FORM_BYTES) throw tooLarge();
  const text = await req.text();
  if (text.length > FORM_BYTES) throw tooLarge();
  return [...new URLSearchParams(text).entries()];
}

export const notConfigured = (carrier: string, variable: string) =>
  new ApiError(
    503,
    "telephony_not_configured",
    `${carrier} webhooks are refused until ${variable} is set: their signature cannot be checked.`,
  );

export const badSignature = (carrier: string) =>
  new ApiError(403, "invalid_signature", `The request's ${carrier} signature does not verify.`);
