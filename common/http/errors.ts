// The one error envelope of the public API: {error:{code,message,details}, info, correlation_id}.
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

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
