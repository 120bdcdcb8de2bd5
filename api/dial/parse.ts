// calls.dial body → a normalized dial request, or a refusal naming the field. Pure: no I/O. The
// agent's input (config, init, metadata, display name, record) is read by connect's own
// parseConnectBody, so a dial takes exactly what a connect takes for the agent.
import type { StreamCarrier } from "../../common/carrier.ts";
import { CARRIERS } from "../telephony/carriers.ts";
import type { Capabilities } from "../../common/capabilities.ts";
import {
  E164,
  type MachineDetection,
  RING_TIMEOUT_DEFAULT_SECONDS,
  RING_TIMEOUT_MAX_SECONDS,
  RING_TIMEOUT_MIN_SECONDS,
} from "../../common/dial.ts";
import { ApiError, invalidRequest } from "../../common/http/errors.ts";
import { isPlainObject } from "../connect/config.ts";
import { type AgentInput, LIMITS, parseConnectBody } from "../connect/parse.ts";

export interface DialRequest {
  agent_id: string;
  /** E.164: the callee. */
  to: string;
  /** E.164: the workspace's own number the call comes from. */
  from: string;
  /** The trunk to call over; absent, the `from` number's. */
  trunk_id?: string;
  /** A carrier's call API to call through instead of a trunk (its settings name the account). */
  carrier?: StreamCarrier;
  ring_timeout_seconds: number;
  machine_detection: MachineDetection;
  input: AgentInput;
}

const DIAL_FIELDS = [
  "to",
  "from",
  "trunk_id",
  "carrier",
  "ring_timeout_seconds",
  "machine_detection",
];
const MACHINE_DETECTION: MachineDetection[] = ["off", "hang_up", "leave_message"];
/** Metadata the service writes on an outbound session itself; a body may not set them. */
export const OUTBOUND_METADATA = ["phone_from", "phone_to"];
/** Written too on a call through a carrier (api/dial/dial.ts), beyond the body's room. */
const SERVICE_METADATA = [
  ...OUTBOUND_METADATA,
  "phone_carrier",
  "phone_direction",
  "phone_machine_detection",
];

function number(body: Record<string, unknown>, field: "to" | "from"): string {
  const v = body[field];
  if (typeof v !== "string" || !E164.test(v)) {
    throw invalidRequest(
      field,
      `${field} must be an E.164 number: +, then 8 to 15 digits, the first not 0 ` +
        `(e.g. +14155550123).`,
    );
  }
  return v;
}

export function parseDialBody(body: unknown, caps: Capabilities): DialRequest {
  if (!isPlainObject(body)) throw invalidRequest("", "The request body must be a JSON object.");
  const to = number(body, "to");
  const from = number(body, "from");
  let trunkId: string | undefined;
  if (body.trunk_id !== undefined && body.trunk_id !== null) {
    if (typeof body.trunk_id !== "string" || body.trunk_id === "") {
      throw invalidRequest("trunk_id", "trunk_id must be a trunk's id.");
    }
    trunkId = body.trunk_id;
  }
  let carrier: StreamCarrier | undefined;
  if (body.carrier !== undefined && body.carrier !== null) {
    const names = Object.keys(CARRIERS);
    if (typeof body.carrier !== "string" || !names.includes(body.carrier)) {
      throw invalidRequest("carrier", `carrier must be one of ${names.join(", ")}.`);
    }
    if (trunkId !== undefined) {
      throw invalidRequest("carrier", "Give trunk_id or carrier, not both: a call goes one way.");
    }
    carrier = body.carrier as StreamCarrier;
  }
  const ring = body.ring_timeout_seconds ?? RING_TIMEOUT_DEFAULT_SECONDS;
  if (
    typeof ring !== "number" || !Number.isInteger(ring) || ring < RING_TIMEOUT_MIN_SECONDS ||
    ring > RING_TIMEOUT_MAX_SECONDS
  ) {
    throw invalidRequest(
      "ring_timeout_seconds",
      `ring_timeout_seconds must be a whole number from ${RING_TIMEOUT_MIN_SECONDS} to ` +
        `${RING_TIMEOUT_MAX_SECONDS}.`,
    );
  }
  const machine = body.machine_detection ?? "off";
  if (!MACHINE_DETECTION.includes(machine as MachineDetection)) {
    throw invalidRequest(
      "machine_detection",
      `machine_detection must be one of ${MACHINE_DETECTION.join(", ")}.`,
    );
  }
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) if (!DIAL_FIELDS.includes(k)) rest[k] = v;
  const given = rest.metadata;
  if (isPlainObject(given)) {
    for (const k of SERVICE_METADATA) {
      if (k in given) {
        throw invalidRequest(`metadata.${k}`, `metadata.${k} is the service's own: leave it out.`);
      }
    }
    const room = LIMITS.metadataKeys - OUTBOUND_METADATA.length;
    if (Object.keys(given).length > room) {
      throw new ApiError(
        400,
        "invalid_metadata",
        `metadata has ${Object.keys(given).length} keys; a dial allows ${room} ` +
          `(the service adds ${OUTBOUND_METADATA.join(" and ")}).`,
        { field: "metadata" },
      );
    }
    rest.metadata = { ...given, phone_from: from, phone_to: to };
  } else if (given === undefined || given === null) {
    rest.metadata = { phone_from: from, phone_to: to };
  }
  const connect = parseConnectBody(rest, caps);
  return {
    agent_id: connect.agent_id,
    to,
    from,
    trunk_id: trunkId,
    carrier,
    ring_timeout_seconds: ring,
    machine_detection: machine as MachineDetection,
    input: connect.input,
  };
}
