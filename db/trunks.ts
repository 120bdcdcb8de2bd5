// SIP trunks: who may send a number's calls. A source-address allowlist (CIDRs) and/or digest
// credentials, of which only the HA1 hashes are kept (RFC 7616 section 3.4.2: H(user:realm:pass),
// MD5 and SHA-256); the password never reaches the database.
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
  created_at: Date;
  updated_at: Date;
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
  sql`id as trunk_id, name, allowed_sources, auth_username, auth_realm, created_at, updated_at`;

export async function createTrunk(
  sql: Sql,
  input: { name: string; allowed_sources: string[]; credentials: StoredCredentials | null },
): Promise<Trunk> {
  const c = input.credentials;
  const sources = textArray(sql, input.allowed_sources);
  const [row] = await sql<Trunk[]>`
    insert into trunks (id, name, allowed_sources, auth_username, auth_realm, auth_ha1_md5,
                        auth_ha1_sha256)
    values (${newId("trk")}, ${input.name}, ${sources}, ${c?.username ?? null},
            ${c?.realm ?? null}, ${c?.ha1_md5 ?? null}, ${c?.ha1_sha256 ?? null})
    returning ${TRUNK_COLUMNS(sql)}`;
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
  },
): Promise<Trunk | undefined> {
  const c = changes.credentials;
  const keep = c === undefined;
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
