// Reading and checking trunk and phone number fields, for the admin routes and the console
// alike: every refusal is an invalid_request naming the field, thrown before anything is written.
import { ApiError, invalidRequest } from "../../common/http/errors.ts";
import { parseCidr } from "../../common/ipaddr.ts";
import { E164 } from "../../db/phone_numbers.ts";
import type { StoredCredentials } from "../../db/trunks.ts";
import { digestCredentials } from "../sip/digest.ts";
import { optionalBool, optionalString, optionalStringArray, requiredString } from "../body.ts";

/** The realm a trunk's challenges name when none is given. */
export const DEFAULT_REALM = "voice";

const MAX_PASSWORD = 128;
const MIN_PASSWORD = 12;

export function checkNumber(value: string, field = "number"): string {
  if (!E164.test(value)) {
    throw invalidRequest(field, `${field} must be an E.164 number: + and 8 to 15 digits.`);
  }
  return value;
}

/** CIDRs or single addresses, kept as given (trimmed); an unparsable one names its index. */
export function checkSources(values: string[], field = "allowed_sources"): string[] {
  return values.map((raw, i) => {
    const v = raw.trim();
    if (!parseCidr(v)) {
      throw invalidRequest(
        `${field}.${i}`,
        `${JSON.stringify(raw)} is not an IP address or CIDR range (e.g. 203.0.113.0/24).`,
      );
    }
    return v;
  });
}

/**
 * A digest username or realm: printable, no quotes or backslashes (they go into quoted strings
 * of the challenge), at most 64 characters.
 */
function checkToken(value: string, field: string): string {
  if (!/^[\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(value)) {
    throw invalidRequest(
      field,
      `${field} must be 1 to 64 printable characters without spaces, quotes or backslashes.`,
    );
  }
  return value;
}

function checkPassword(value: string, field = "auth_password"): string {
  if (value.length < MIN_PASSWORD || value.length > MAX_PASSWORD) {
    throw invalidRequest(
      field,
      `${field} must be ${MIN_PASSWORD} to ${MAX_PASSWORD} characters.`,
    );
  }
  return value;
}

export interface TrunkInput {
  name: string;
  allowed_sources: string[];
  credentials: StoredCredentials | null;
}

const TRUNK_CHECKS_SOMETHING = () =>
  invalidRequest(
    "allowed_sources",
    "A trunk needs allowed_sources, digest credentials (auth_username and auth_password), or both.",
  );

/** trunks.create's body: name, allowed_sources, auth_username + auth_password, auth_realm. */
export function readTrunkCreate(body: Record<string, unknown>): TrunkInput {
  const name = requiredString(body, "name");
  const sources = checkSources(optionalStringArray(body, "allowed_sources") ?? []);
  const username = optionalString(body, "auth_username");
  const password = optionalString(body, "auth_password");
  const realm = optionalString(body, "auth_realm");
  if ((username === undefined) !== (password === undefined)) {
    const missing = username === undefined ? "auth_username" : "auth_password";
    throw invalidRequest(missing, "auth_username and auth_password go together.");
  }
  if (realm !== undefined && username === undefined) {
    throw invalidRequest("auth_realm", "auth_realm needs auth_username and auth_password.");
  }
  const credentials = username === undefined ? null : digestCredentials(
    checkToken(username, "auth_username"),
    checkToken(realm ?? DEFAULT_REALM, "auth_realm"),
    checkPassword(password!),
  );
  if (!credentials && sources.length === 0) throw TRUNK_CHECKS_SOMETHING();
  return { name, allowed_sources: sources, credentials };
}

export interface TrunkChanges {
  name?: string;
  allowed_sources?: string[];
  credentials?: StoredCredentials | null;
}

/**
 * trunks.update's body against the trunk as it is: a new username or realm needs the password
 * again (the stored hashes bind all three); remove_auth drops the credentials.
 */
export function readTrunkUpdate(
  body: Record<string, unknown>,
  current: { allowed_sources: string[]; auth_username: string | null; auth_realm: string | null },
): TrunkChanges {
  const name = optionalString(body, "name");
  if (name !== undefined && name.trim() === "") {
    throw invalidRequest("name", "name must be a non-empty string.");
  }
  const given = optionalStringArray(body, "allowed_sources");
  const sources = given === undefined ? undefined : checkSources(given);
  const username = optionalString(body, "auth_username");
  const password = optionalString(body, "auth_password");
  const realm = optionalString(body, "auth_realm");
  const remove = optionalBool(body, "remove_auth") ?? false;
  let credentials: StoredCredentials | null | undefined;
  if (remove) {
    if (username !== undefined || password !== undefined || realm !== undefined) {
      throw invalidRequest("remove_auth", "remove_auth takes no other auth_ field.");
    }
    credentials = null;
  } else if (password !== undefined) {
    const user = username ?? current.auth_username;
    if (user === null) throw invalidRequest("auth_username", "auth_username is required.");
    credentials = digestCredentials(
      checkToken(user, "auth_username"),
      checkToken(realm ?? current.auth_realm ?? DEFAULT_REALM, "auth_realm"),
      checkPassword(password),
    );
  } else if (username !== undefined || realm !== undefined) {
    throw invalidRequest(
      "auth_password",
      "A new auth_username or auth_realm needs auth_password too (the stored hash binds them).",
    );
  }
  const hasAuth = credentials === undefined ? current.auth_username !== null : credentials !== null;
  if (!hasAuth && (sources ?? current.allowed_sources).length === 0) {
    throw TRUNK_CHECKS_SOMETHING();
  }
  return { name, allowed_sources: sources, credentials };
}

/** `trunk_id` as a body gives it: absent (undefined), null (none), or an id. */
export function optionalTrunkId(body: Record<string, unknown>): string | null | undefined {
  if (body.trunk_id === null) return null;
  const v = optionalString(body, "trunk_id");
  return v === "" ? null : v;
}

/** A phone call's brain is dialled by the worker: the web-only echo diagnostic cannot take one. */
export const echoOnPhone = () =>
  new ApiError(
    400,
    "echo_agent_on_phone",
    "An echo: agent cannot answer phone calls (the echo diagnostic is for web calls): " +
      "point the number at an agent whose brain is a ws:// or wss:// URL.",
  );
