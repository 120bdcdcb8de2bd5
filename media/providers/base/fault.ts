// Why a provider request failed, when reaching the provider at all was the problem, and how an
// HTTP status or a failed WebSocket handshake says it. The providers put it on their errors
// (RecognitionError / SynthesisError `fault`); the breakers above (media/engines/breaker.ts) act
// on it. It lives here, at the bottom, because the providers say it and the routing reads it.

/** auth: the provider refused our key; connection: it could not be reached (or could not serve). */
export type EngineFault = "auth" | "connection";

/**
 * What an HTTP status says about reaching a provider: 401/403 refuse our key, a 5xx is a provider
 * (or its gateway) that cannot serve; anything else (404, 429) is neither.
 */
export function statusFault(status: number): EngineFault | undefined {
  if (status === 401 || status === 403) return "auth";
  if (status >= 500) return "connection";
  return undefined;
}

/** The HTTP status of a failed handshake, as Deno's error event says it ("Invalid status code: 403"). */
export function handshakeStatus(detail: string): number | undefined {
  const status = /status code:?\s*(\d{3})/i.exec(detail)?.[1];
  return status ? Number(status) : undefined;
}

/** A handshake that failed: by its status when it had one; without one, it never connected. */
export function handshakeFault(detail: string): EngineFault | undefined {
  const status = handshakeStatus(detail);
  return status === undefined ? "connection" : statusFault(status);
}
