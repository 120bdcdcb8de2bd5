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
  const problem = unstorable(value);
  if (problem) throw invalidRequest(problem.path, problem.message);
  return value;
}

/** JSON nested deeper than this is refused: nothing the service reads needs more. */
export const MAX_JSON_DEPTH = 64;

/**
 * The first place in a parsed body that cannot be stored or walked safely: a key or string
 * holding U+0000 or an unpaired surrogate (PostgreSQL text and jsonb refuse both), or nesting
 * deeper than MAX_JSON_DEPTH.
 * Iterative, so a hostile body cannot overflow the stack.
 */
export function unstorable(value: unknown): { path: string; message: string } | undefined {
  const stack: [unknown, string, number][] = [[value, "", 0]];
  while (stack.length) {
    const [v, path, depth] = stack.pop()!;
    if (typeof v === "string") {
      const bad = badText(v);
      if (bad) return { path, message: `${path || "The body"} ${bad}` };
      continue;
    }
    if (typeof v !== "object" || v === null) continue;
    if (depth >= MAX_JSON_DEPTH) {
      return { path, message: `JSON is nested more than ${MAX_JSON_DEPTH} levels deep.` };
    }
    for (const [k, child] of Object.entries(v)) {
      const childPath = path ? `${path}.${k}` : k;
      if (k.includes("\0")) {
        return {
          path: childPath,
          message: `${childPath} contains U+0000, which cannot be stored.`,
        };
      }
      stack.push([child, childPath, depth + 1]);
    }
  }
  return undefined;
}

function badText(s: string): string | undefined {
  if (s.includes("\0")) return "contains U+0000, which cannot be stored.";
  if (!s.isWellFormed()) return "contains an unpaired surrogate (not valid Unicode).";
  return undefined;
}
