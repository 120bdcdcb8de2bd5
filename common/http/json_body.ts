// Reading a JSON request body within the size limit: the API and the worker's signalling
// both refuse oversized or malformed bodies the same way, in the error envelope.
// The limit is enforced while the body streams in (a declared Content-Length over it is refused
// before a byte is read; a chunked or lying body is cut off at the first chunk past it), the whole
// body must arrive within BODY_READ_TIMEOUT_MS, and a body that stops short (the client went away
// before sending Content-Length bytes) is a 400, never a 500.
import type { Context } from "hono";
import { ApiError, invalidRequest } from "./errors.ts";
// The Context variables errors.ts reads are declared there; this keeps the module (and whatever
// imports it, such as media/rtvi/) type-checkable on its own.
import type {} from "./correlation.ts";

export const MAX_BODY_BYTES = 64 * 1024;
/** The whole body must have arrived this long after the handler started reading it. */
export const BODY_READ_TIMEOUT_MS = 10_000;

function tooLarge(limit = MAX_BODY_BYTES): ApiError {
  return new ApiError(
    413,
    "request_too_large",
    `The request body is larger than ${limit} bytes.`,
    {
      limit_bytes: limit,
    },
  );
}

function tooSlow(timeoutMs: number): ApiError {
  return new ApiError(
    408,
    "request_timeout",
    `The request body did not arrive within ${timeoutMs / 1000} seconds.`,
    { timeout_ms: timeoutMs },
  );
}

export interface BodyLimits {
  /** Longest wait for the whole body, from the first read (BODY_READ_TIMEOUT_MS). */
  timeoutMs: number;
  /** Largest body, bytes (MAX_BODY_BYTES unless a route takes lists, such as a campaign's). */
  maxBytes?: number;
}

/**
 * The body's bytes, at most MAX_BODY_BYTES of them: the stream is read chunk by chunk and given
 * up at the first chunk past the limit, so an oversized body is never held whole.
 */
async function readCapped(
  body: ReadableStream<Uint8Array>,
  limits: BodyLimits,
): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), limits.timeoutMs);
  });
  const giveUp = (err: ApiError) => {
    reader.cancel().catch(() => {});
    return err;
  };
  try {
    for (;;) {
      let step: ReadableStreamReadResult<Uint8Array> | "timeout";
      try {
        step = await Promise.race([reader.read(), deadline]);
      } catch {
        // The connection ended before the body did (a Content-Length the client never sent in
        // full, a reset): the client's fault, and nothing to answer a 500 for.
        throw giveUp(invalidRequest("", "The request body could not be read to its end."));
      }
      if (step === "timeout") throw giveUp(tooSlow(limits.timeoutMs));
      if (step.done) break;
      size += step.value.byteLength;
      if (size > (limits.maxBytes ?? MAX_BODY_BYTES)) throw giveUp(tooLarge(limits.maxBytes));
      chunks.push(step.value);
    }
  } finally {
    clearTimeout(timer);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const ch of chunks) {
    all.set(ch, at);
    at += ch.byteLength;
  }
  return all;
}

/**
 * The body as UTF-8 text, under the same bounds as a JSON body (size, time, cut short): for the
 * bodies that are not JSON, such as a telephony provider's form.
 */
export async function readBodyText(
  c: Context,
  limits: BodyLimits = { timeoutMs: BODY_READ_TIMEOUT_MS },
): Promise<string> {
  // A declared length over the limit is refused before a byte of the body is read. (Deno's
  // server has already refused a Content-Length that is not a number, or two that differ.)
  const declared = Number(c.req.header("content-length") ?? "0");
  if (declared > (limits.maxBytes ?? MAX_BODY_BYTES)) throw tooLarge(limits.maxBytes);
  const body = c.req.raw.body;
  if (!body) return "";
  // Read at most the limit even when no Content-Length was sent (chunked bodies).
  const bytes = await readCapped(body, limits);
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw invalidRequest("", "The request body is not valid UTF-8.");
  }
}

/** The body parsed as JSON; an empty body reads as `{}` only when `emptyAsObject`. */
export async function readJson(
  c: Context,
  emptyAsObject = false,
  limits: BodyLimits = { timeoutMs: BODY_READ_TIMEOUT_MS },
): Promise<unknown> {
  const text = await readBodyText(c, limits);
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
 * The first place in a parsed body that cannot be stored or walked safely: a key or a string
 * holding U+0000 or an unpaired surrogate (PostgreSQL text, json and jsonb refuse both), or
 * nesting deeper than MAX_JSON_DEPTH.
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
      // Keys are text in jsonb as much as values are (an unpaired surrogate in a key reached the
      // database as a 500 before; the fuzz bench found it).
      const bad = badText(k);
      if (bad) return { path: childPath, message: `The key ${childPath} ${bad}` };
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
