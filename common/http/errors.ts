// The one error envelope of the public API: {error:{code,message,details}, info, correlation_id}.
import type { Context, Hono } from "hono";
import type { Logger } from "../log.ts";
import type { ContentfulStatusCode } from "hono/utils/http-status";
// Its Hono augmentation types c.get("correlationId") below, whichever module graph this is in.
import type {} from "./correlation.ts";

export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const invalidRequest = (field: string, message: string) =>
  new ApiError(400, "invalid_request", message, { field });

export function envelope(err: ApiError, correlationId: string) {
  return {
    error: { code: err.code, message: err.message, details: err.details },
    info: err.message,
    correlation_id: correlationId,
  };
}

export function errorResponse(c: Context, err: ApiError): Response {
  for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
  return c.json(envelope(err, c.get("correlationId")), err.status);
}

/**
 * The last handlers of an app: unknown routes are 404 `not_found`, an ApiError is answered as
 * is, `translate` may turn a known failure into an ApiError (the API's database outage into
 * 503), and anything else is logged with its correlation id and answered 500 `internal_error`.
 */
export function handleErrors(
  app: Hono,
  log: Logger,
  translate: (err: unknown) => ApiError | undefined = () => undefined,
): void {
  app.notFound((c) =>
    errorResponse(c, new ApiError(404, "not_found", `No route ${c.req.method} ${c.req.path}.`))
  );
  app.onError((err, c) => {
    if (err instanceof ApiError) return errorResponse(c, err);
    const translated = translate(err);
    if (translated) {
      log.error(translated.message, { path: c.req.path, cause: (err as Error)?.message });
      return errorResponse(c, translated);
    }
    log.error("unexpected error", {
      path: c.req.path,
      correlation_id: c.get("correlationId"),
      cause: (err as Error)?.stack ?? String(err),
    });
    return errorResponse(
      c,
      new ApiError(500, "internal_error", "Something went wrong on our side."),
    );
  });
}
