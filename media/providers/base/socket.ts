// A WebSocket to a speech provider, with its auth header. Deno's WebSocket takes `headers` (a Deno
// extension); the DOM typing that the web/ bundle pulls into a whole-project check does not know
// the option, so the one cast lives here.

type WithHeaders = new (url: string, options: { headers: Record<string, string> }) => WebSocket;

export function providerSocket(url: string, headers: Record<string, string>): WebSocket {
  return new (WebSocket as unknown as WithHeaders)(url, { headers });
}
