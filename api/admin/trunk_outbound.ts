// A trunk's outbound settings (issue 34), for the admin routes and the console alike: the SIP
// edge's host[:port], udp or tcp, and the digest username and password it challenges with. The
// password must be presented to the trunk, so it cannot be kept as a hash: it is sealed under
// TRUNK_CREDENTIALS_KEY with the trunk's id as additional data (common/sealed.ts) before it is
// written, and no reply, log line or page ever shows it.
import { ApiError, invalidRequest } from "../../common/http/errors.ts";
import { parseIp } from "../../common/ipaddr.ts";
import { seal, TRUNK_CREDENTIALS_KEY } from "../../common/sealed.ts";
import type { OutboundChanges } from "../../db/trunks.ts";
import { optionalBool, optionalString } from "../body.ts";

export const OUTBOUND_FIELDS = [
  "outbound_address",
  "outbound_transport",
  "outbound_username",
  "outbound_password",
];
export const OUTBOUND_UPDATE_FIELDS = [...OUTBOUND_FIELDS, "remove_outbound_credentials"];

/** The SIP port an address without one is reached on (RFC 3261 section 19.1.2). */
export const SIP_DEFAULT_PORT = 5060;
const MAX_PASSWORD = 128;
const HOSTNAME =
  /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** host, host:port, [v6] or [v6]:port → host:port (5060 when none is given). */
export function checkOutboundAddress(raw: string, field = "outbound_address"): string {
  const bad = () =>
    invalidRequest(
      field,
      `${field} must be host or host:port (a DNS name, an IPv4 address or [IPv6]), port 1-65535.`,
    );
  const v = raw.trim();
  const m = /^(\[[^\]]+\]|[^:\[\]]+)(?::(\d{1,5}))?$/.exec(v);
  if (!m) throw bad();
  const host = m[1];
  const port = m[2] === undefined ? SIP_DEFAULT_PORT : Number(m[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw bad();
  if (host.startsWith("[")) {
    if (parseIp(host.slice(1, -1))?.v !== 6) throw bad();
  } else if (!parseIp(host) && (!HOSTNAME.test(host) || /^[0-9.]+$/.test(host))) {
    throw bad();
  }
  return `${host}:${port}`;
}

function checkUsername(value: string): string {
  // It goes into the quoted username of a digest Authorization header.
  if (!/^[\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(value)) {
    throw invalidRequest(
      "outbound_username",
      "outbound_username must be 1 to 64 printable characters without spaces, quotes or backslashes.",
    );
  }
  return value;
}

function checkPassword(value: string): string {
  // The carrier chose it: any length it allows, but bounded, and printable.
  const control = [...value].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f);
  if (value.length < 1 || value.length > MAX_PASSWORD || control) {
    throw invalidRequest(
      "outbound_password",
      `outbound_password must be 1 to ${MAX_PASSWORD} characters without control characters.`,
    );
  }
  return value;
}

/** What the body asks, the password still plain: sealOutbound turns it into what is written. */
export interface OutboundInput {
  address?: string | null;
  transport?: "udp" | "tcp";
  /** undefined keeps, null removes, a pair sets (username alone: with the kept password). */
  credentials?: { username: string; password: string } | null;
  /** A new username only, the sealed password kept. */
  username?: string;
}

/**
 * The outbound fields of a trunks.create or trunks.update body. `current` (update): the trunk's
 * username, for a password given alone.
 */
export function readOutbound(
  body: Record<string, unknown>,
  current?: { outbound_username: string | null; outbound_credentials: boolean },
): OutboundInput {
  const out: OutboundInput = {};
  if (body.outbound_address === null || body.outbound_address === "") {
    if (!current) throw invalidRequest("outbound_address", "outbound_address must be host[:port].");
    out.address = null;
  } else {
    const address = optionalString(body, "outbound_address");
    if (address !== undefined) out.address = checkOutboundAddress(address);
  }
  const transport = optionalString(body, "outbound_transport");
  if (transport !== undefined) {
    if (transport !== "udp" && transport !== "tcp") {
      throw invalidRequest("outbound_transport", "outbound_transport must be udp or tcp.");
    }
    out.transport = transport;
  }
  const username = optionalString(body, "outbound_username");
  const password = optionalString(body, "outbound_password");
  const remove = optionalBool(body, "remove_outbound_credentials") ?? false;
  if (remove) {
    if (username !== undefined || password !== undefined) {
      throw invalidRequest(
        "remove_outbound_credentials",
        "remove_outbound_credentials takes no outbound_username or outbound_password.",
      );
    }
    out.credentials = null;
  } else if (password !== undefined) {
    const user = username ?? current?.outbound_username ?? undefined;
    if (user === undefined) {
      throw invalidRequest("outbound_username", "outbound_password needs outbound_username.");
    }
    out.credentials = { username: checkUsername(user), password: checkPassword(password) };
  } else if (username !== undefined) {
    if (!current?.outbound_credentials) {
      throw invalidRequest("outbound_password", "outbound_username needs outbound_password.");
    }
    out.username = checkUsername(username);
  }
  return out;
}

/** Whether the input writes a password (and so needs TRUNK_CREDENTIALS_KEY). */
export const sealsPassword = (input: OutboundInput) =>
  input.credentials !== undefined && input.credentials !== null;

export const noCredentialsKey = () =>
  new ApiError(
    500,
    "credentials_key_missing",
    `Outbound credentials cannot be stored: ${TRUNK_CREDENTIALS_KEY} is not set on the API ` +
      "(base64 of 32 random bytes; the password is kept sealed under it, never in plain).",
    { variable: TRUNK_CREDENTIALS_KEY },
  );

/**
 * What is written for the input: the password sealed for `trunkId`. `keptSealed`: the trunk's
 * sealed password, kept when only the username changes.
 */
export async function sealOutbound(
  key: CryptoKey | undefined,
  trunkId: string,
  input: OutboundInput,
  keptSealed?: string | null,
): Promise<OutboundChanges> {
  const changes: OutboundChanges = { address: input.address, transport: input.transport };
  if (input.credentials === null) changes.credentials = null;
  else if (input.credentials) {
    if (!key) throw noCredentialsKey();
    changes.credentials = {
      username: input.credentials.username,
      password_sealed: await seal(key, input.credentials.password, trunkId),
    };
  } else if (input.username !== undefined && keptSealed) {
    changes.credentials = { username: input.username, password_sealed: keptSealed };
  }
  return changes;
}
