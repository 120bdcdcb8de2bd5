// The worker's WebSocket route for telephony providers' media streams:
// GET /telephony/{carrier}/{session_id}, upgraded, for each carrier of media/phone/carriers/
// registry.ts, whose descriptor says all this route asks of it. The control plane's webhook
// (api/telephony/) opened the session and told the provider this URL with the session token:
// in the URL's query (`session_token`, Plivo and Exotel), or, since Twilio's stream URL takes no
// query string, as a `<Parameter>` that arrives in the start message's customParameters. The
// token is checked exactly as an offer's is and spent once (offer.ts spendSessionToken); a
// refusal is an HTTP error before the upgrade, or a close (1008, the reason) after it, and writes
// nothing. A good one hands the phone line to the node's phone calls.
//
// Nothing is upgraded unchecked (stream_guard.ts): Plivo and Exotel must carry the token in the
// URL, checked before the upgrade; a Twilio stream, whose token only comes in its start message,
// must name a session waiting on this node, and only one stream per session may wait for its
// start. Deno reads a whole WebSocket message before handing it over (Deno.upgradeWebSocket has
// no size option), so the bound on what an unauthenticated peer can make the worker read is that
// it cannot open the socket at all; a message over MAX_STREAM_MESSAGE_BYTES closes the stream
// (stream_line.ts).
import type { MachineDetection } from "../../common/dial.ts";
import type { Context } from "hono";
import { ApiError } from "../../common/http/errors.ts";
import type { SessionClaims } from "../../common/token.ts";
import type { TelephonySettings } from "../../common/telephony_settings.ts";
import { logger } from "../../common/log.ts";
import { checkSessionToken, type OfferNode, spendSessionToken } from "./offer.ts";
import { StreamPhoneLine } from "../phone/carriers/stream_line.ts";
import { carrierNamed } from "../phone/carriers/registry.ts";
import { guardUpgrade } from "./stream_guard.ts";

const log = logger("telephony-stream");

/** The token's name in the stream URL's query and in Twilio's custom parameters. */
export const SESSION_TOKEN_PARAM = "session_token";

/** A phone call admitted on this node: its line (accepted) and the token's claims. */
export interface AdmittedPhoneCall {
  sessionId: string;
  line: StreamPhoneLine;
  claims: SessionClaims;
}

export interface TelephonyNode extends Pick<OfferNode, "verifier" | "nodeId" | "sql"> {
  telephony?: TelephonySettings;
  /** Runs the call over the line (media/call's phone call); absent, the node takes no phone calls. */
  startPhoneCall?: (call: AdmittedPhoneCall) => void;
}

/**
 * The numbers and carrier the webhook put in the session's metadata (api/sip/phone_session.ts:
 * phone_caller, phone_dialled in E.164, phone_carrier, phone_call_id).
 */
function phoneOf(claims: SessionClaims): Record<string, string> {
  const input = claims.input as { metadata?: Record<string, string> } | null;
  return input?.metadata ?? {};
}

/** The token's detection mode; anything but a known one is off. */
function machineDetectionOf(mode: string | undefined): MachineDetection {
  return mode === "hang_up" || mode === "leave_message" ? mode : "off";
}

/** A token opened for another provider's call is not good on this route. */
const sameCarrier = (carrier: string) => (claims: SessionClaims) => {
  if (phoneOf(claims).phone_carrier !== carrier) {
    throw new ApiError(
      403,
      "wrong_carrier",
      `This session was not opened for a ${carrier} call.`,
    );
  }
};

export async function telephonyStream(c: Context, w: TelephonyNode): Promise<Response> {
  const named = carrierNamed(c.req.param("carrier")!);
  const sessionId = c.req.param("session_id")!;
  if (!named) {
    throw new ApiError(404, "unknown_carrier", "No media stream of that provider is served here.");
  }
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    throw new ApiError(426, "upgrade_required", "This is a WebSocket endpoint.");
  }
  if (!w.startPhoneCall) {
    throw new ApiError(503, "phone_calls_off", "This worker node does not take phone calls.");
  }
  const start = w.startPhoneCall;
  const carrier = named.name;
  // A token in the URL is checked before the upgrade, so a refusal is a plain HTTP answer; it is
  // spent once the provider's start message has come (a stream that never starts spends nothing).
  const queryToken = c.req.query(SESSION_TOKEN_PARAM);
  const release = await guardUpgrade(
    c,
    w,
    named,
    sessionId,
    queryToken,
    () => checkSessionToken(w, sessionId, queryToken!, sameCarrier(carrier)),
  );

  const { socket, response } = Deno.upgradeWebSocket(c.req.raw);
  const line = new StreamPhoneLine(socket, named.dialect, {
    control: w.telephony && named.control(w.telephony, sessionId),
  });
  void line.started.then(release, release);
  void admit(line, sessionId, carrier, w, queryToken).then((claims) => {
    if (!claims) return;
    const phone = phoneOf(claims);
    // A call placed through the carrier (calls.dial) names its own numbers and detection mode.
    const placed = phone.phone_direction === "outbound";
    line.accept(
      placed
        ? {
          from: phone.phone_from,
          to: phone.phone_to,
          outbound: { machineDetection: machineDetectionOf(phone.phone_machine_detection) },
        }
        : { from: phone.phone_caller, to: phone.phone_dialled },
    );
    log.info("phone call admitted", { session_id: sessionId, carrier, call_id: line.callId });
    start({ sessionId, line, claims });
  });
  return response;
}

/** The claims once the start message has come and the token is good; undefined if refused. */
async function admit(
  line: StreamPhoneLine,
  sessionId: string,
  carrier: string,
  w: TelephonyNode,
  queryToken: string | undefined,
): Promise<SessionClaims | undefined> {
  let started;
  try {
    started = await line.started;
  } catch {
    return undefined; // Gone before it said anything: nothing was spent.
  }
  const token = queryToken ?? started.params[SESSION_TOKEN_PARAM];
  try {
    const unreadable = line.dialect.unreadableFormat(started);
    if (unreadable) throw new ApiError(415, "unsupported_media_format", unreadable);
    if (!token) {
      throw new ApiError(401, "unauthorized", `Send the session token as ${SESSION_TOKEN_PARAM}.`);
    }
    return await spendSessionToken(w, sessionId, token, sameCarrier(carrier));
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    log.warn("phone call refused", { session_id: sessionId, carrier, code: err.code });
    line.refuse(`${err.code}: ${err.message}`);
    return undefined;
  }
}
