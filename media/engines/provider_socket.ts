// A WebSocket to a speech provider, with its auth header. Deno's WebSocket takes `headers` (a Deno
// extension); the DOM typing that the web/ bundle pulls into a whole-project check does not know
// the option, so the one cast lives here. How a failed handshake is read (a refused key, an
// unreachable host) is here too, for the engines' breakers (breaker.ts).
import type { EngineFault } from "./breaker.ts";

type WithHeaders = new (url: string, options: { headers: Record<string, string> }) => WebSocket;

export function providerSocket(url: string, headers: Record<string, string>): WebSocket {
  return new (WebSocket as unknown as WithHeaders)(url, { headers });
}

/** The HTTP status of a failed handshake, as Deno's error event says it ("Invalid status code: 403"). */
export function handshakeStatus(detail: string): number | undefined {
  const status = /status code:?\s*(\d{3})/i.exec(detail)?.[1];
  return status ? Number(status) : undefined;
}

/**
 * What an HTTP status says about reaching a provider: 401/403 refuse our key, a 5xx is a provider
 * (or its gateway) that cannot serve; anything else (404, 429) is neither.
 */
export function statusFault(status: number): EngineFault | undefined {
  if (status === 401 || status === 403) return "auth";
  if (status >= 500) return "connection";
  return undefined;
}

/** A handshake that failed: by its status when it had one; without one, it never connected. */
export function handshakeFault(detail: string): EngineFault | undefined {
  const status = handshakeStatus(detail);
  return status === undefined ? "connection" : statusFault(status);
}
