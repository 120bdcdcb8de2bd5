// SIP trunks: who may send a number's calls. A source-address allowlist (CIDRs) and/or digest
// credentials, of which only the HA1 hashes are kept (RFC 7616 section 3.4.2: H(user:realm:pass),
// MD5 and SHA-256); the password never reaches the database. A trunk that calls out (issue 34)
// also names its SIP edge and, when it challenges, a username and the password sealed under
// TRUNK_CREDENTIALS_KEY (common/sealed.ts; sealing and opening are the API's, never this file's).
import type { Sql } from "./client.ts";
import { textArray } from "./text_array.ts";
import { newId } from "../common/ids.ts";

/** A trunk as the admin API shows it: the credentials' username and realm, never a hash. */
export interface Trunk {
  trunk_id: string;
  name: string;
  allowed_sources: string[];
  auth_username: string | null;
  auth_realm: string | null;
  /** host:port of the SIP edge outbound calls go to; null: the trunk does not call out. */
  outbound_address: string | null;
  outbound_transport: "udp" | "tcp";
  outbound_username: string | null;
  /** Whether an outbound password is kept (it is never shown, sealed or not). */
  outbound_credentials: boolean;
  created_at: Date;
  updated_at: Date;
}

/** Outbound settings to write. `credentials`: undefined keeps them, null removes them. */
export interface OutboundChanges {
  address?: string | null;
  transport?: "udp" | "tcp";
  credentials?: { username: string; password_sealed: string } | null;
}

/** What placing a call over the trunk needs: its edge and the sealed password, to be opened. */
export interface OutboundTrunk {
  trunk_id: string;
  outbound_address: string | null;
  outbound_transport: "udp" | "tcp";
  outbound_username: string | null;
  outbound_password_sealed: string | null;
}

/** What the SIP redirect server checks an INVITE against (db/phone_numbers.ts phoneRoute). */
export interface TrunkCheck {
  trunk_id: string;
  allowed_sources: string[];
  auth: { username: string; realm: string; ha1_md5: string; ha1_sha256: string } | null;
}

/** Digest credentials as stored: username, realm and the password's HA1 in both algorithms. */
export interface StoredCredentials {
  username: string;
  realm: string;
  ha1_md5: string;
  ha1_sha256: string;
}

const TRUNK_COLUMNS = (sql: Sql) =>
  sql`id as trunk_id, name, allowed_sources, auth_username, auth_realm, outbound_address,
    outbound_transport, outbound_username,
    outbound_password_sealed is not null as outbound_credentials, created_at, updated_at`;

export async function createTrunk(
  sql: Sql,
  input: {
    /** Given when a value sealed for this trunk (its id is the seal's additional data) is written. */
    trunk_id?: string;
    name: string;
    allowed_sources: string[];
    credentials: StoredCredentials | null;
    outbound?: OutboundChanges;
  },
): Promise<Trunk> {
  const c = input.credentials;
  const o = input.outbound?.credentials;
  const sources = textArray(sql, input.allowed_sources);
  const [row] = await sql<Trunk[]>`
    insert into trunks (id, name, allowed_sources, auth_username, auth_realm, auth_ha1_md5,
                        auth_ha1_sha256, outbound_address, outbound_transport, outbound_username,
                        outbound_password_sealed)
    values (${input.trunk_id ?? newId("trk")}, ${input.name}, ${sources}, ${c?.username ?? null},
            ${c?.realm ?? null}, ${c?.ha1_md5 ?? null}, ${c?.ha1_sha256 ?? null},
            ${input.outbound?.address ?? null}, ${input.outbound?.transport ?? "udp"},
            ${o?.username ?? null}, ${o?.password_sealed ?? null})
    returning ${TRUNK_COLUMNS(sql)}`;
  return row;
}

/** A trunk's outbound settings with the sealed password (for the dialing path only). */
export async function getOutboundTrunk(
  sql: Sql,
  trunkId: string,
): Promise<OutboundTrunk | undefined> {
  const [row] = await sql<OutboundTrunk[]>`select id as trunk_id, outbound_address,
      outbound_transport, outbound_username, outbound_password_sealed
    from trunks where id = ${trunkId}`;
  return row;
}

/** One trunk with a sealed password, to check at start that the key given opens it. */
export async function anySealedTrunk(sql: Sql): Promise<OutboundTrunk | undefined> {
  const [row] = await sql<OutboundTrunk[]>`select id as trunk_id, outbound_address,
      outbound_transport, outbound_username, outbound_password_sealed
    from trunks where outbound_password_sealed is not null order by id limit 1`;
  return row;
}

export async function getTrunk(sql: Sql, trunkId: string): Promise<Trunk | undefined> {
  const [row] = await sql<Trunk[]>`select ${TRUNK_COLUMNS(sql)} from trunks
    where id = ${trunkId}`;
  return row;
}

export async function listTrunks(sql: Sql): Promise<Trunk[]> {
  return await sql<Trunk[]>`select ${TRUNK_COLUMNS(sql)} from trunks order by created_at, id`;
}

/**
 * Changes what is given. `credentials`: undefined keeps them, null removes them. The table's
 * checks refuse a trunk left checking nothing (the route says so before it gets here).
 */
export async function updateTrunk(
  sql: Sql,
  trunkId: string,
  changes: {
    name?: string;
    allowed_sources?: string[];
    credentials?: StoredCredentials | null;
    outbound?: OutboundChanges;
  },
): Promise<Trunk | undefined> {
  const c = changes.credentials;
  const keep = c === undefined;
  const o = changes.outbound ?? {};
  const keepAddress = o.address === undefined;
  const keepOut = o.credentials === undefined;
  const [row] = await sql<Trunk[]>`
    update trunks set
      name = coalesce(${changes.name ?? null}, name),
      allowed_sources = case when ${changes.allowed_sources === undefined}::boolean
        then allowed_sources else ${textArray(sql, changes.allowed_sources ?? [])} end,
      auth_username = case when ${keep}::boolean then auth_username else ${c?.username ?? null} end,
      auth_realm = case when ${keep}::boolean then auth_realm else ${c?.realm ?? null} end,
      auth_ha1_md5 = case when ${keep}::boolean then auth_ha1_md5 else ${c?.ha1_md5 ?? null} end,
      auth_ha1_sha256 = case when ${keep}::boolean then auth_ha1_sha256
        else ${c?.ha1_sha256 ?? null} end,
      outbound_address = case when ${keepAddress}::boolean then outbound_address
        else ${o.address ?? null} end,
      outbound_transport = coalesce(${o.transport ?? null}, outbound_transport),
      outbound_username = case when ${keepOut}::boolean then outbound_username
        else ${o.credentials?.username ?? null} end,
      outbound_password_sealed = case when ${keepOut}::boolean then outbound_password_sealed
        else ${o.credentials?.password_sealed ?? null} end,
      updated_at = now()
    where id = ${trunkId}
    returning ${TRUNK_COLUMNS(sql)}`;
  return row;
}

/** Deletes a trunk no number uses: "in_use" (nothing changed) when one still does. */
export async function deleteTrunk(
  sql: Sql,
  trunkId: string,
): Promise<"deleted" | "not_found" | "in_use"> {
  const [row] = await sql<{ found: boolean; used: boolean; deleted: boolean }[]>`
    with used as (select exists (select 1 from phone_numbers where trunk_id = ${trunkId}) as u),
    gone as (
      delete from trunks where id = ${trunkId} and not (select u from used) returning id
    )
    select exists (select 1 from trunks where id = ${trunkId}) as found,
      (select u from used) as used, exists (select 1 from gone) as deleted`;
  if (row.deleted) return "deleted";
  return row.found ? "in_use" : "not_found";
}

/** Where a session's trunk takes outbound calls (the warm transfer's number, issue 35). */
export interface SessionTrunkEdge {
  trunk_id: string;
  outbound_address: string | null;
  outbound_transport: "udp" | "tcp";
  /** Whether the trunk keeps digest credentials (the worker cannot open them). */
  credentials: boolean;
}

/** The trunk `sessionId`'s call came in (or went out) on; undefined: on no trunk. */
export async function sessionTrunkEdge(
  sql: Sql,
  sessionId: string,
): Promise<SessionTrunkEdge | undefined> {
  const [row] = await sql<SessionTrunkEdge[]>`select t.id as trunk_id, t.outbound_address,
      t.outbound_transport, t.outbound_username is not null as credentials
    from sessions s join trunks t on t.id = s.phone_trunk_id where s.id = ${sessionId}`;
  return row;
}
