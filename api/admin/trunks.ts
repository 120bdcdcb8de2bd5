// trunks.create / list / get / update / delete (the admin group, api/admin/routes.ts). Replies
// show a trunk's digest username and realm, never its password or hashes; of its outbound
// credentials, the username and `outbound_credentials: true/false`, never the password.
import type { Context } from "hono";
import { newId } from "../../common/ids.ts";
import {
  createTrunk,
  deleteTrunk,
  getOutboundTrunk,
  getTrunk,
  listTrunks,
  updateTrunk,
} from "../../db/trunks.ts";
import { readObject, requiredString } from "../body.ts";
import { ApiError } from "../../common/http/errors.ts";
import type { ApiDeps } from "../context.ts";
import { readTrunkCreate, readTrunkUpdate } from "./phone_input.ts";
import {
  OUTBOUND_FIELDS,
  OUTBOUND_UPDATE_FIELDS,
  readOutbound,
  sealOutbound,
} from "./trunk_outbound.ts";

export const trunkNotFound = () => new ApiError(404, "trunk_not_found", "No such trunk.");

const CREATE_FIELDS = ["name", "allowed_sources", "auth_username", "auth_password", "auth_realm"];

export async function create(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, [...CREATE_FIELDS, ...OUTBOUND_FIELDS]);
  const input = readTrunkCreate(body);
  const outbound = readOutbound(body);
  // The id is the sealed password's additional data, so it is chosen before the seal.
  const trunkId = newId("trk");
  const sealed = await sealOutbound(deps.trunkKey, trunkId, outbound);
  return c.json({
    trunk: await createTrunk(deps.sql, { ...input, trunk_id: trunkId, outbound: sealed }),
  });
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
  const body = await readObject(c, [
    "trunk_id",
    ...CREATE_FIELDS,
    "remove_auth",
    ...OUTBOUND_UPDATE_FIELDS,
  ]);
  const current = await getTrunk(deps.sql, requiredString(body, "trunk_id"));
  if (!current) throw trunkNotFound();
  const changes = readTrunkUpdate(body, current);
  const outbound = readOutbound(body, current);
  const kept = outbound.username === undefined
    ? undefined
    : (await getOutboundTrunk(deps.sql, current.trunk_id))?.outbound_password_sealed;
  const trunk = await updateTrunk(deps.sql, current.trunk_id, {
    ...changes,
    outbound: await sealOutbound(deps.trunkKey, current.trunk_id, outbound, kept),
  });
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
