// trunks.create / list / get / update / delete (the admin group, api/admin/routes.ts). Replies
// show a trunk's digest username and realm, never its password or hashes.
import type { Context } from "hono";
import { createTrunk, deleteTrunk, getTrunk, listTrunks, updateTrunk } from "../../db/trunks.ts";
import { readObject, requiredString } from "../body.ts";
import { ApiError } from "../../common/http/errors.ts";
import type { ApiDeps } from "../context.ts";
import { readTrunkCreate, readTrunkUpdate } from "./phone_input.ts";

export const trunkNotFound = () => new ApiError(404, "trunk_not_found", "No such trunk.");

const CREATE_FIELDS = ["name", "allowed_sources", "auth_username", "auth_password", "auth_realm"];

export async function create(c: Context, deps: ApiDeps): Promise<Response> {
  const input = readTrunkCreate(await readObject(c, CREATE_FIELDS));
  return c.json({ trunk: await createTrunk(deps.sql, input) });
}

export async function list(c: Context, deps: ApiDeps): Promise<Response> {
  await readObject(c, []);
  return c.json({ trunks: await listTrunks(deps.sql) });
}

export async function get(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["trunk_id"]);
  const trunk = await getTrunk(deps.sql, requiredString(body, "trunk_id"));
  if (!trunk) throw trunkNotFound();
  return c.json({ trunk });
}

export async function update(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["trunk_id", ...CREATE_FIELDS, "remove_auth"]);
  const current = await getTrunk(deps.sql, requiredString(body, "trunk_id"));
  if (!current) throw trunkNotFound();
  const trunk = await updateTrunk(deps.sql, current.trunk_id, readTrunkUpdate(body, current));
  if (!trunk) throw trunkNotFound();
  return c.json({ trunk });
}

export async function remove(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["trunk_id"]);
  const trunkId = requiredString(body, "trunk_id");
  const result = await deleteTrunk(deps.sql, trunkId);
  if (result === "not_found") throw trunkNotFound();
  if (result === "in_use") {
    // Deleting it would leave its numbers open to any caller: the operator moves them first.
    throw new ApiError(
      409,
      "trunk_in_use",
      "Phone numbers still use this trunk; move or delete them first.",
      { trunk_id: trunkId },
    );
  }
  return c.json({ deleted: true, trunk_id: trunkId });
}
