// The dial route of this worker node (issue 34): `POST /sessions/{id}/dial` with the session token
// as its Bearer and a WorkerDial body (common/dial.ts), posted by the control plane once it has
// reserved the session here. Checked in the offer's order: the token (signature, this node, this
// session, not expired, unspent) and that the session was reserved for an outbound call, then
// the body (bounded in size and read time, every field checked), then the call's RTP port, then
// the token is spent (markConnecting) and the INVITE goes out: 202 `{session_id}`, and from then
// the worker owns the session's end. Every refusal is a JSON error that changes nothing, logged
// (rate-limited) with the source address and its code, never the token or the trunk's password.
import type { Context } from "hono";
import { ApiError, invalidRequest } from "../../common/http/errors.ts";
import { readJson } from "../../common/http/json_body.ts";
import { bearerToken } from "../../common/http/bearer.ts";
import { peerOf } from "../../common/http/peer.ts";
import { logger } from "../../common/log.ts";
import { RefusalLog } from "../../common/refusal_log.ts";
import { parseIp } from "../../common/ipaddr.ts";
import {
  E164,
  type MachineDetection,
  RING_TIMEOUT_MAX_SECONDS,
  RING_TIMEOUT_MIN_SECONDS,
  type WorkerDialAccepted,
} from "../../common/dial.ts";
import { sessionTokenState } from "../../db/sessions.ts";
import { getAgent } from "../../db/agents.ts";
import { checkSessionToken, type OfferNode, spendSessionToken } from "./offer.ts";
import type { Dialler, DialRequest } from "../sip/dial_call.ts";
import { SessionLog } from "../call/session_log.ts";

const log = logger("signaling");
const refusals = new RefusalLog(log);

export interface DialNode extends OfferNode {
  /** The SIP service's outbound calls; absent when the node runs no SIP (SIP_PORT unset). */
  dialler?: Dialler;
  draining?: boolean;
}

const MACHINE_DETECTION: readonly MachineDetection[] = ["off", "hang_up", "leave_message"];
/** Longest trunk id, username and password taken (they are written to logs or hashed). */
const MAX_FIELD = 256;
/** How long the trunk's host name may take to resolve before the dial is refused. */
const RESOLVE_TIMEOUT_MS = 3_000;

export async function postDial(c: Context, w: DialNode): Promise<Response> {
  const sessionId = c.req.param("session_id")!;
  try {
    return await dial(c, w, sessionId);
  } catch (err) {
    if (err instanceof ApiError) {
      const peer = peerOf(c);
      refusals.refused("dial refused", peer.address, err.code, {
        port: peer.port,
        session_id: sessionId,
      });
    }
    throw err;
  }
}

async function dial(c: Context, w: DialNode, sessionId: string): Promise<Response> {
  const token = bearerToken(c);
  if (!token) {
    throw new ApiError(401, "unauthorized", "Send Authorization: Bearer <session token>.");
  }
  await checkSessionToken(w, sessionId, token);
  const state = await sessionTokenState(w.sql, sessionId);
  if (state?.direction !== "outbound") {
    // A web or inbound phone session's token must not place calls through the trunk.
    throw new ApiError(403, "not_outbound", "This session was not reserved for an outbound call.");
  }
  const body = readDial(await readJson(c));
  if (!w.dialler) {
    throw new ApiError(503, "sip_unavailable", "This worker node places no SIP calls.");
  }
  if (w.draining) {
    throw new ApiError(503, "node_draining", "This worker node is draining.", {}, {
      "Retry-After": "2",
    });
  }
  const request = await resolved(body);
  let prepared;
  try {
    prepared = await w.dialler.prepare(request);
  } catch {
    throw new ApiError(503, "no_rtp_port", "No RTP port is free on this worker node.", {}, {
      "Retry-After": "5",
    });
  }
  let claims;
  try {
    claims = await spendSessionToken(w, sessionId, token);
  } catch (err) {
    await prepared.release();
    throw err;
  }
  const agent = await getAgent(w.sql, claims.sub);
  prepared.start({
    claims,
    brainUrl: agent?.brain_url ?? "",
    log: new SessionLog(w.sql, sessionId),
  });
  log.info("dial accepted", { session_id: sessionId, trunk_id: request.trunkId });
  const accepted: WorkerDialAccepted = { session_id: sessionId };
  return c.json(accepted, 202);
}

/** A checked WorkerDial, its trunk address not yet resolved. */
type CheckedDial = Omit<DialRequest, "trunk"> & { port: number };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const shortText = (v: unknown) => typeof v === "string" && v !== "" && v.length <= MAX_FIELD;

/** The body as a WorkerDial, every field checked; 400 naming the first field that is not. */
export function readDial(body: unknown): CheckedDial {
  if (!isObject(body)) throw invalidRequest("", "The dial must be a JSON object.");
  for (const f of ["to", "from"] as const) {
    if (typeof body[f] !== "string" || !E164.test(body[f] as string)) {
      throw invalidRequest(f, `${f} must be an E.164 number (+ then 8 to 15 digits).`);
    }
  }
  const t = body.trunk;
  if (!isObject(t)) throw invalidRequest("trunk", "trunk must be an object.");
  if (!shortText(t.trunk_id)) throw invalidRequest("trunk.trunk_id", "trunk_id must be named.");
  const address = typeof t.address === "string" ? hostPort(t.address) : undefined;
  if (!address) {
    throw invalidRequest("trunk.address", "trunk.address must be host:port (port 1-65535).");
  }
  if (t.transport !== "udp" && t.transport !== "tcp") {
    throw invalidRequest("trunk.transport", 'trunk.transport must be "udp" or "tcp".');
  }
  if ((t.username === undefined) !== (t.password === undefined)) {
    throw invalidRequest("trunk.username", "username and password come together or not at all.");
  }
  if (t.username !== undefined && !(shortText(t.username) && shortText(t.password))) {
    throw invalidRequest("trunk.username", "username and password must be short strings.");
  }
  const ring = body.ring_timeout_seconds;
  if (
    typeof ring !== "number" || !Number.isInteger(ring) || ring < RING_TIMEOUT_MIN_SECONDS ||
    ring > RING_TIMEOUT_MAX_SECONDS
  ) {
    throw invalidRequest(
      "ring_timeout_seconds",
      `ring_timeout_seconds must be a whole number from ${RING_TIMEOUT_MIN_SECONDS} to ${RING_TIMEOUT_MAX_SECONDS}.`,
    );
  }
  const md = body.machine_detection;
  if (!MACHINE_DETECTION.includes(md as MachineDetection)) {
    throw invalidRequest(
      "machine_detection",
      `machine_detection must be one of ${MACHINE_DETECTION.join(", ")}.`,
    );
  }
  return {
    to: body.to as string,
    from: body.from as string,
    trunkId: t.trunk_id as string,
    trunkHost: address.written,
    transport: t.transport,
    port: address.port,
    username: t.username as string | undefined,
    password: t.password as string | undefined,
    ringTimeoutSeconds: ring,
    machineDetection: md as MachineDetection,
  };
}

/** `host:port`, `[v6]:port` or a bare host (port 5060); the host as written for the URI. */
function hostPort(raw: string): { host: string; port: number; written: string } | undefined {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(raw.trim());
  if (!m || raw.length > MAX_FIELD) return undefined;
  const port = m[2] === undefined ? 5060 : Number(m[2]);
  if (port < 1 || port > 65535) return undefined;
  const host = m[1].startsWith("[") ? m[1].slice(1, -1) : m[1];
  return { host, port, written: m[2] === undefined ? m[1] : `${m[1]}:${port}` };
}

/** The trunk's address as packets need it: an IP literal as is, a name through DNS (A). */
async function resolved(d: CheckedDial): Promise<DialRequest> {
  const host = d.trunkHost.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
  let address = parseIp(host) ? host : undefined;
  if (!address) {
    address = await Deno.resolveDns(host, "A", { signal: AbortSignal.timeout(RESOLVE_TIMEOUT_MS) })
      .then((a) => a[0]).catch(() => undefined);
  }
  if (!address) {
    throw new ApiError(422, "trunk_unresolvable", "The trunk's host name does not resolve.", {
      field: "trunk.address",
    });
  }
  const { port, ...rest } = d;
  return { ...rest, trunk: { address, port } };
}
