// storage.set / get / remove (the admin group): an agent's bucket and retention (issue 37). The
// secret access key is sealed under TRUNK_CREDENTIALS_KEY with `storage:{agent_id}` as additional
// data before it is written; replies show only whether one is set.
import type { Context } from "hono";
import { getAgent } from "../../db/agents.ts";
import { getSealedStorage, getStorage, putStorage, removeStorage } from "../../db/agent_storage.ts";
import { optionalString, readObject, requiredString } from "../body.ts";
import { ApiError, invalidRequest } from "../../common/http/errors.ts";
import { seal, TRUNK_CREDENTIALS_KEY } from "../../common/sealed.ts";
import type { ApiDeps } from "../context.ts";
import { agentNotFound } from "./agents.ts";
import { storageOwner } from "../storage/bucket.ts";

const FIELDS = [
  "agent_id",
  "bucket",
  "prefix",
  "region",
  "endpoint",
  "access_key_id",
  "secret_access_key",
  "retention_days",
  "remove_bucket",
];

async function agentOf(deps: ApiDeps, body: Record<string, unknown>): Promise<string> {
  const id = requiredString(body, "agent_id");
  if (!await getAgent(deps.sql, id)) throw agentNotFound();
  return id;
}

/** Sets what is given; the rest keeps its value. `remove_bucket: true` keeps recordings local. */
export async function set(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, FIELDS);
  return c.json({ storage: await setStorage(deps, await agentOf(deps, body), body) });
}

/** storage.set's checks and write, for the route and the console alike; a refusal writes nothing. */
export async function setStorage(deps: ApiDeps, agentId: string, body: Record<string, unknown>) {
  const was = await getSealedStorage(deps.sql, agentId);
  const bucket = optionalString(body, "bucket");
  if (bucket !== undefined && !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw invalidRequest("bucket", "bucket must be an S3 bucket name (3-63 of a-z, 0-9, . and -).");
  }
  const endpoint = optionalString(body, "endpoint");
  if (endpoint !== undefined && endpoint !== "" && !/^https?:\/\/[^\s/]+\/?$/.test(endpoint)) {
    throw invalidRequest("endpoint", "endpoint must be http(s)://host[:port], without a path.");
  }
  const prefix = optionalString(body, "prefix");
  if (
    prefix !== undefined &&
    (prefix.length > 200 || [...prefix].some((ch) => ch.charCodeAt(0) < 0x20))
  ) {
    throw invalidRequest("prefix", "prefix must be at most 200 printable characters.");
  }
  const days = body.retention_days;
  if (
    days !== undefined &&
    (!Number.isInteger(days) || (days as number) < 0 || (days as number) > 36500)
  ) {
    throw invalidRequest(
      "retention_days",
      "retention_days must be a whole number 0-36500 (0 keeps).",
    );
  }
  const secret = optionalString(body, "secret_access_key");
  if (secret !== undefined && (secret.length < 1 || secret.length > 256)) {
    throw invalidRequest("secret_access_key", "secret_access_key must be 1-256 characters.");
  }
  const remove = body.remove_bucket === true;
  const next = {
    bucket: remove ? null : bucket ?? was?.bucket ?? null,
    prefix: prefix ?? was?.prefix ?? "",
    region: optionalString(body, "region") ?? was?.region ?? "us-east-1",
    endpoint: remove ? null : endpoint === "" ? null : endpoint ?? was?.endpoint ?? null,
    access_key_id: remove
      ? null
      : optionalString(body, "access_key_id") ?? was?.access_key_id ?? null,
    secret_sealed: remove ? null : was?.secret_sealed ?? null,
    retention_days: (days as number | undefined) ?? was?.retention_days ?? 0,
  };
  if (!remove && secret !== undefined) {
    if (!deps.trunkKey) {
      throw new ApiError(
        503,
        "sealing_key_missing",
        `Bucket credentials cannot be stored: ${TRUNK_CREDENTIALS_KEY} is not set on the API.`,
        { variable: TRUNK_CREDENTIALS_KEY },
      );
    }
    next.secret_sealed = await seal(deps.trunkKey, secret, storageOwner(agentId));
  }
  if (next.bucket && (!next.access_key_id || !next.secret_sealed)) {
    throw invalidRequest(
      next.access_key_id ? "secret_access_key" : "access_key_id",
      "A bucket needs access_key_id and secret_access_key.",
    );
  }
  if (!next.bucket && (next.access_key_id || next.secret_sealed) && !remove) {
    throw invalidRequest("bucket", "Credentials need a bucket.");
  }
  return await putStorage(deps.sql, agentId, next);
}

export async function get(c: Context, deps: ApiDeps): Promise<Response> {
  const agentId = await agentOf(deps, await readObject(c, ["agent_id"]));
  return c.json({ storage: (await getStorage(deps.sql, agentId)) ?? null });
}

export async function remove(c: Context, deps: ApiDeps): Promise<Response> {
  const agentId = await agentOf(deps, await readObject(c, ["agent_id"]));
  return c.json({ removed: await removeStorage(deps.sql, agentId) });
}
