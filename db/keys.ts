// API keys: only the keyed hash is stored. Revocation notifies every API process so that
// caches drop the key at once.
import type { Sql } from "./client.ts";
import type { SensitivityLevel } from "../common/turn_sensitivity.ts";
import { newId } from "../common/ids.ts";
import { hashKey, type KeyKind, keyPrefix, newRawKey } from "../common/key_hash.ts";

export const KEYS_CHANNEL = "api_keys_changed";

export interface ApiKey {
  key_id: string;
  agent_id: string;
  workspace_id: string;
  kind: KeyKind;
  prefix: string;
  allowed_origins: string[];
  created_at: Date;
  revoked_at: Date | null;
}

/** What sessions.connect needs to know about the key presented. */
export interface KeyGrant {
  key_id: string;
  agent_id: string;
  workspace_id: string;
  kind: KeyKind;
  allowed_origins: string[];
  record_by_default: boolean;
  interruption_sensitivity: SensitivityLevel;
  turn_patience: SensitivityLevel;
}

const KEY_COLUMNS = (sql: Sql) =>
  sql`id as key_id, agent_id, workspace_id, kind, prefix, allowed_origins, created_at, revoked_at`;

export async function createKey(
  sql: Sql,
  hashSecret: string,
  input: { agent_id: string; workspace_id: string; kind: KeyKind; allowed_origins?: string[] },
): Promise<{ key: ApiKey; session_key: string }> {
  const raw = newRawKey(input.kind);
  const [key] = await sql<ApiKey[]>`
    insert into api_keys (id, agent_id, workspace_id, kind, key_hash, prefix, allowed_origins)
    values (${newId("key")}, ${input.agent_id}, ${input.workspace_id}, ${input.kind},
            ${hashKey(hashSecret, raw)}, ${keyPrefix(raw)}, ${input.allowed_origins ?? []})
    returning ${KEY_COLUMNS(sql)}`;
  return { key, session_key: raw };
}

export async function listKeys(sql: Sql, agentId: string): Promise<ApiKey[]> {
  return await sql<ApiKey[]>`select ${KEY_COLUMNS(sql)} from api_keys
    where agent_id = ${agentId} order by created_at, id`;
}

export async function getKey(sql: Sql, keyId: string): Promise<ApiKey | undefined> {
  const [row] = await sql<ApiKey[]>`select ${KEY_COLUMNS(sql)} from api_keys where id = ${keyId}`;
  return row;
}

/** Revokes the key (idempotent) and tells every API process. */
export async function revokeKey(sql: Sql, keyId: string): Promise<ApiKey | undefined> {
  const [row] = await sql<ApiKey[]>`
    update api_keys set revoked_at = coalesce(revoked_at, now()) where id = ${keyId}
    returning ${KEY_COLUMNS(sql)}`;
  if (row) await notifyKeysChanged(sql, keyId);
  return row;
}

export async function notifyKeysChanged(sql: Sql, keyId: string): Promise<void> {
  await sql`select pg_notify(${KEYS_CHANNEL}, ${keyId})`;
}

/** The live key with this hash, joined with its (not deleted) agent. */
export async function grantForHash(sql: Sql, hash: Uint8Array): Promise<KeyGrant | undefined> {
  const [row] = await sql<KeyGrant[]>`
    select k.id as key_id, k.agent_id, k.workspace_id, k.kind, k.allowed_origins,
           a.record_by_default, a.interruption_sensitivity, a.turn_patience
    from api_keys k join agents a on a.id = k.agent_id
    where k.key_hash = ${hash} and k.revoked_at is null and a.deleted_at is null`;
  return row;
}
