// Reading campaigns.create's body: every field checked before anything is written, each refusal
// naming its field (a contact's by its index: `contacts[41].number`).
import { invalidRequest } from "../../common/http/errors.ts";
import { E164, type MachineDetection } from "../../common/dial.ts";
import { RING_TIMEOUT_MAX_SECONDS, RING_TIMEOUT_MIN_SECONDS } from "../../common/dial.ts";
import { RING_TIMEOUT_DEFAULT_SECONDS } from "../../common/dial.ts";
import { isTimeZone, WINDOW_TIME } from "../../common/calling_window.ts";
import { isPlainObject } from "../connect/config.ts";
import { optionalString, requiredString } from "../body.ts";
import type { CampaignSettings, NewContact } from "../../db/campaigns.ts";

/** Contacts one campaigns.create may carry. */
export const MAX_CONTACTS = 10_000;
/** A body of 10,000 contacts with a little data each. */
export const CAMPAIGN_BODY_BYTES = 4 * 1024 * 1024;
/** One contact's data, as JSON. */
export const MAX_CONTACT_DATA_BYTES = 4096;

/** Outcomes a campaign may retry; `answered` and `refused` never are. */
export const RETRYABLE = [
  "no_answer",
  "busy",
  "rejected",
  "machine",
  "dial_failed",
  "failed",
  "expired",
  "dial_lost",
];

export const CREATE_FIELDS = [
  "agent_id",
  "name",
  "from",
  "trunk_id",
  "starts_at",
  "concurrency",
  "window_start",
  "window_end",
  "time_zone",
  "max_attempts",
  "retry_backoff_seconds",
  "retry_on",
  "ring_timeout_seconds",
  "machine_detection",
  "contacts",
];

const CONTACT_FIELDS = ["number", "data", "language", "time_zone"];
const MACHINE: MachineDetection[] = ["off", "hang_up", "leave_message"];

function integer(
  body: Record<string, unknown>,
  field: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const v = body[field];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
    throw invalidRequest(field, `${field} must be a whole number from ${min} to ${max}.`);
  }
  return v;
}

function timeZone(value: string | undefined, field: string, fallback: string): string {
  if (value === undefined) return fallback;
  if (!isTimeZone(value)) {
    throw invalidRequest(field, `${field} must be an IANA time zone such as Asia/Kolkata.`);
  }
  return value;
}

function windowTime(body: Record<string, unknown>, field: string, fallback: string): string {
  const v = optionalString(body, field) ?? fallback;
  if (!WINDOW_TIME.test(v)) throw invalidRequest(field, `${field} must be a local time, HH:MM.`);
  return v;
}

/** The campaign's settings (references such as agent and `from` are checked by the route). */
export function readSettings(body: Record<string, unknown>): CampaignSettings {
  const from = requiredString(body, "from");
  if (!E164.test(from)) throw invalidRequest("from", "from must be an E.164 number (+91...).");
  const startsAt = optionalString(body, "starts_at");
  const starts = startsAt === undefined ? null : new Date(startsAt);
  if (starts && Number.isNaN(starts.getTime())) {
    throw invalidRequest("starts_at", "starts_at must be an ISO 8601 instant.");
  }
  const windowStart = windowTime(body, "window_start", "09:00");
  const windowEnd = windowTime(body, "window_end", "21:00");
  if (windowStart >= windowEnd) {
    throw invalidRequest("window_end", "window_end must be after window_start (same day).");
  }
  const retryOn = body.retry_on ?? ["no_answer", "busy"];
  if (
    !Array.isArray(retryOn) ||
    retryOn.some((o) => typeof o !== "string" || !RETRYABLE.includes(o))
  ) {
    throw invalidRequest("retry_on", `retry_on must list outcomes of ${RETRYABLE.join(", ")}.`);
  }
  const machine = optionalString(body, "machine_detection") ?? "off";
  if (!MACHINE.includes(machine as MachineDetection)) {
    throw invalidRequest("machine_detection", `machine_detection must be ${MACHINE.join(", ")}.`);
  }
  const trunkId = optionalString(body, "trunk_id");
  return {
    name: requiredString(body, "name"),
    agent_id: requiredString(body, "agent_id"),
    from,
    trunk_id: trunkId ?? null,
    starts_at: starts,
    concurrency: integer(body, "concurrency", 1, 1, 1000),
    window_start: windowStart,
    window_end: windowEnd,
    time_zone: timeZone(optionalString(body, "time_zone"), "time_zone", "Asia/Kolkata"),
    max_attempts: integer(body, "max_attempts", 3, 1, 10),
    retry_backoff_seconds: integer(body, "retry_backoff_seconds", 1800, 0, 604_800),
    retry_on: [...new Set(retryOn as string[])],
    ring_timeout_seconds: integer(
      body,
      "ring_timeout_seconds",
      RING_TIMEOUT_DEFAULT_SECONDS,
      RING_TIMEOUT_MIN_SECONDS,
      RING_TIMEOUT_MAX_SECONDS,
    ),
    machine_detection: machine as MachineDetection,
  };
}

/** The contacts, 1 to MAX_CONTACTS of them, each checked and named by its index. */
export function readContacts(body: Record<string, unknown>, campaignZone: string): NewContact[] {
  const list = body.contacts;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_CONTACTS) {
    throw invalidRequest("contacts", `contacts must list 1 to ${MAX_CONTACTS} contacts.`);
  }
  return list.map((c, i) => {
    const at = `contacts[${i}]`;
    if (!isPlainObject(c)) throw invalidRequest(at, `${at} must be an object.`);
    for (const key of Object.keys(c)) {
      if (!CONTACT_FIELDS.includes(key)) {
        throw invalidRequest(`${at}.${key}`, `${at}.${key} is not a known field.`);
      }
    }
    const number = c.number;
    if (typeof number !== "string" || !E164.test(number)) {
      throw invalidRequest(
        `${at}.number`,
        `Contact ${i}: number must be an E.164 number (a plus, then 8 to 15 digits).`,
      );
    }
    const data = c.data ?? {};
    if (!isPlainObject(data) || JSON.stringify(data).length > MAX_CONTACT_DATA_BYTES) {
      throw invalidRequest(
        `${at}.data`,
        `Contact ${i}: data must be an object of at most ${MAX_CONTACT_DATA_BYTES} bytes.`,
      );
    }
    const language = c.language ?? null;
    if (
      language !== null &&
      (typeof language !== "string" || !/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/.test(language))
    ) {
      throw invalidRequest(`${at}.language`, `Contact ${i}: language must be a BCP 47 tag.`);
    }
    const zone = c.time_zone;
    if (zone !== undefined && typeof zone !== "string") {
      throw invalidRequest(`${at}.time_zone`, `Contact ${i}: time_zone must be a string.`);
    }
    return {
      number,
      data,
      language,
      time_zone: timeZone(zone, `${at}.time_zone`, campaignZone),
    };
  });
}
