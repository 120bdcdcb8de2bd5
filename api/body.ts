// Small typed field readers for the management routes. Refusals are ApiErrors in the envelope.
import type { Context } from "hono";
import { invalidRequest } from "../common/http/errors.ts";
import { type BodyLimits, readJson } from "../common/http/json_body.ts";

export { MAX_BODY_BYTES, readJson } from "../common/http/json_body.ts";
import { isPlainObject } from "./connect/config.ts";

/** A JSON object body whose keys are all in `allowed`. */
export async function readObject(
  c: Context,
  allowed: string[],
  limits?: BodyLimits,
): Promise<Record<string, unknown>> {
  const body = await readJson(c, true, limits);
  if (!isPlainObject(body)) throw invalidRequest("", "The request body must be a JSON object.");
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) throw invalidRequest(key, `${key} is not a known field.`);
  }
  return body;
}

export function requiredString(body: Record<string, unknown>, field: string): string {
  const v = body[field];
  if (typeof v !== "string" || v.trim() === "") {
    throw invalidRequest(field, `${field} is required and must be a non-empty string.`);
  }
  return v;
}

export function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw invalidRequest(field, `${field} must be a string.`);
  return v;
}

export function optionalBool(body: Record<string, unknown>, field: string): boolean | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") throw invalidRequest(field, `${field} must be true or false.`);
  return v;
}

export function optionalStringArray(
  body: Record<string, unknown>,
  field: string,
): string[] | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((s) => typeof s !== "string")) {
    throw invalidRequest(field, `${field} must be an array of strings.`);
  }
  return v as string[];
}
