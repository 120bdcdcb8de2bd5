// Reading a JSON request body within the size limit: the API and the worker's signalling
// both refuse oversized or malformed bodies the same way, in the error envelope.
import type { Context } from "hono";
import { ApiError, invalidRequest } from "./errors.ts";

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
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidRequest("", "The request body is not valid JSON.");
  }
  const nul = pathOfNul(value, "");
  if (nul !== undefined) {
    throw invalidRequest(nul, `${nul || "The body"} contains U+0000, which cannot be stored.`);
  }
  return value;
}

/** The dotted path of the first key or string holding U+0000 (PostgreSQL text refuses it). */
export function pathOfNul(value: unknown, path: string): string | undefined {
  if (typeof value === "string") return value.includes("\0") ? path : undefined;
  if (typeof value !== "object" || value === null) return undefined;
  for (const [k, v] of Object.entries(value)) {
    const child = path ? `${path}.${k}` : k;
    if (k.includes("\0")) return child;
    const found = pathOfNul(v, child);
    if (found !== undefined) return found;
  }
  return undefined;
}
