// A brain: handlers plus the ways to attach them to sockets. `accept` works on any WebSocket
// (Node's `ws` included); `fetch` and `serve` use Deno's HTTP server.
import { BrainConnection } from "./connection.ts";
import type { BrainHandlers, WebSocketLike } from "./types.ts";

/** Options of {@link Brain.serve}. */
export interface ServeOptions {
  /** Address to listen on. Default `127.0.0.1`. */
  hostname?: string;
  /** Port to listen on; 0 picks a free one. Default 8790. */
  port?: number;
  /** Only this path is served (e.g. `/brain`); others get 404. Default: every path. */
  path?: string;
  /** Aborting it stops the server and closes open calls. */
  signal?: AbortSignal;
}

/** A running brain server from {@link Brain.serve}. */
export interface ServedBrain {
  /** The URL to give as the agent's `brain_url`, e.g. `ws://127.0.0.1:8790/brain`. */
  readonly url: string;
  readonly hostname: string;
  readonly port: number;
  /** Resolves when the server has stopped. */
  readonly finished: Promise<void>;
  /** Stops listening and closes open calls (each ends as "disconnected"). */
  shutdown(): Promise<void>;
}

/** A brain: the handlers, attachable to WebSockets. */
export interface Brain {
  /** The handlers this brain runs. */
  readonly handlers: BrainHandlers;
  /**
   * Runs one call over an open (or opening) WebSocket, e.g. a Node `ws` socket from a
   * `connection` event. Resolves when the socket has closed and `onSessionEnd` has run.
   * @param sessionId the URL's `session_id`, if known (checked against SessionStart, for logs).
   */
  accept(socket: WebSocketLike, sessionId?: string): Promise<void>;
  /**
   * A Deno HTTP handler: upgrades `GET {path}?session_id=...` to the brain WebSocket.
   * Answers 400 to a request that is not a WebSocket upgrade or has no `session_id`.
   * Bound, so `Deno.serve(brain.fetch)` works.
   */
  fetch(request: Request): Response;
  /** Serves this brain with `Deno.serve` (Deno only). */
  serve(options?: ServeOptions): ServedBrain;
}

// Deno's API, reached through globalThis so Node type-checks and loads this file too.
interface DenoServer {
  addr: { hostname: string; port: number };
  finished: Promise<void>;
  shutdown(): Promise<void>;
}
interface DenoApi {
  upgradeWebSocket(request: Request): { socket: WebSocketLike; response: Response };
  serve(
    options: { hostname: string; port: number; signal?: AbortSignal; onListen?: () => void },
    handler: (request: Request) => Response,
  ): DenoServer;
}

function deno(what: string): DenoApi {
  const api = (globalThis as { Deno?: DenoApi }).Deno;
  if (!api) throw new Error(`brain.${what} needs Deno; on Node pass a ws socket to brain.accept`);
  return api;
}

const badRequest = (text: string) =>
  new Response(text + "\n", { status: 400, headers: { "content-type": "text/plain" } });

/**
 * Creates a brain from its handlers.
 * @example
 * const brain = createBrain({ onTurn: (turn) => `You said: ${turn.text}` });
 * brain.serve({ port: 8790, path: "/brain" });
 */
export function createBrain(handlers: BrainHandlers): Brain {
  if (typeof handlers?.onTurn !== "function") {
    throw new TypeError("createBrain: handlers.onTurn must be a function");
  }
  const open = new Set<BrainConnection>();

  const accept = (socket: WebSocketLike, sessionId?: string): Promise<void> => {
    const connection = new BrainConnection(socket, handlers, sessionId);
    open.add(connection);
    return connection.done.finally(() => open.delete(connection));
  };

  const fetch = (request: Request): Response => {
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      return badRequest("expected a WebSocket upgrade");
    }
    const sessionId = new URL(request.url).searchParams.get("session_id");
    if (!sessionId) return badRequest("missing session_id");
    const { socket, response } = deno("fetch").upgradeWebSocket(request);
    accept(socket, sessionId);
    return response;
  };

  const serve = (options: ServeOptions = {}): ServedBrain => {
    const hostname = options.hostname ?? "127.0.0.1";
    const path = options.path;
    const closeAll = () => open.forEach((c) => c.close());
    options.signal?.addEventListener("abort", closeAll, { once: true });
    const server = deno("serve").serve(
      { hostname, port: options.port ?? 8790, signal: options.signal, onListen: () => {} },
      (request) =>
        path && new URL(request.url).pathname !== path
          ? new Response("not found\n", { status: 404 })
          : fetch(request),
    );
    const port = server.addr.port;
    const host = hostname.includes(":") ? `[${hostname}]` : hostname;
    return {
      url: `ws://${host}:${port}${path ?? "/"}`,
      hostname,
      port,
      finished: server.finished,
      shutdown: () => {
        closeAll();
        return server.shutdown();
      },
    };
  };

  return { handlers, accept, fetch, serve };
}
