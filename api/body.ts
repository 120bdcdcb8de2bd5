// Reading a JSON request body within the size limit, and small typed field readers for the
// management routes. Refusals are ApiErrors in the envelope.
import type { Context } from "hono";
import { ApiError, invalidRequest } from "./errors.ts";
import { isPlainObject } from "./connect/config.ts";

export const MAX_BODY_BYTES = 64 * 1024;

function tooLarge(): ApiError {
  return new ApiError(
    413,
    "request_too_large",
    `The request body is larger than ${MAX_BODY_BYTES} bytes.`,
    {
      limit_bytes: MAX_BODY_BYTES,
    },
  );
}

/** The body parsed as JSON; an empty body reads as `{}` only when `emptyAsObject`. */
export async function readJson(c: Context, emptyAsObject = false): Promise<unknown> {
  const declared = Number(c.req.header("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const body = c.req.raw.body;
  let text = "";
  if (body) {
    // Read at most the limit even when no Content-Length was sent (chunked bodies).
    const reader = body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_BODY_BYTES) {
        await reader.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(value);
    }
    const all = new Uint8Array(size);
    let at = 0;
    for (const ch of chunks) {
      all.set(ch, at);
      at += ch.byteLength;
    }
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(all);
    } catch {
      throw invalidRequest("", "The request body is not valid UTF-8.");
    }
  }
  if (text.trim() === "") {
    if (emptyAsObject) return {};
    throw invalidRequest("", "The request body must be a JSON object.");
  }
  try {
    return JSON.parse(text);
  } catch {
    throw invalidRequest("", "The request body is not valid JSON.");
  }
}

/** A JSON object body whose keys are all in `allowed`. */
export async function readObject(
  c: Context,
  allowed: string[],
): Promise<Record<string, unknown>> {
  const body = await readJson(c, true);
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
