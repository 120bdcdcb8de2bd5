// The worker's HTTP side: the offer endpoint (with CORS, for pages on any origin) and health.
// Audio never touches this: it flows over the peer connections the offers set up.
import { Hono } from "hono";
import type { Context } from "hono";
import { cors } from "hono/cors";
import type { Pool } from "../db/client.ts";
import { handleErrors } from "../common/http/errors.ts";
import { correlation } from "../common/http/correlation.ts";
import type { TokenVerifier } from "../common/token.ts";
import { logger } from "../common/log.ts";
import type { Call } from "./call/call.ts";
import { patchCandidates, postOffer } from "./signaling/offer.ts";

const log = logger("worker");

export interface WorkerContext {
  sql: Pool;
  nodeId: string;
  verifier: TokenVerifier;
  iceAddresses: string[];
  /** Calls on this node by session id. */
  calls: Map<string, Call>;
}

export function createWorkerApp(w: WorkerContext): Hono {
  const app = new Hono();
  app.use("*", correlation);
  app.use(
    "/sessions/:session_id/offer",
    cors({
      origin: (origin) => origin,
      allowMethods: ["POST", "PATCH", "OPTIONS"],
      allowHeaders: ["Authorization", "Content-Type"],
      exposeHeaders: ["X-Correlation-Id"],
      maxAge: 600,
    }),
  );
  const route = (h: (c: Context, w: WorkerContext) => Promise<Response>) => (c: Context) => h(c, w);
  app.post("/sessions/:session_id/offer", route(postOffer));
  app.patch("/sessions/:session_id/offer", route(patchCandidates));
  app.get("/healthz", (c) => c.json({ ok: true, node_id: w.nodeId, calls: w.calls.size }));
  // A 5xx makes the client retry with a new peer connection: right for transient failures.
  handleErrors(app, log);
  return app;
}
