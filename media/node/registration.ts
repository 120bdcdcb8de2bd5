// The worker's node row: registered at start, heartbeated while alive, so that sessions.connect
// only ever chooses a node that is really there.
import type { Pool } from "../../db/client.ts";
import { heartbeat, registerNode } from "../../db/nodes.ts";
import { logger } from "../../common/log.ts";
import type { ServeMatrix } from "../../common/capabilities.ts";

const log = logger("node");

export interface NodeRegistration {
  setDraining(draining: boolean): Promise<void>;
  stop(): Promise<void>;
}

export async function registerWorkerNode(
  sql: Pool,
  node: { node_id: string; offer_base_url: string; capacity: number; serves: ServeMatrix },
  intervalMs = 2000,
): Promise<NodeRegistration> {
  await registerNode(sql, node);
  log.info("registered", { node_id: node.node_id, offer_base_url: node.offer_base_url });
  let draining = false;
  let beating: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    beating = heartbeat(sql, node.node_id, { draining }).catch((err) =>
      log.warn("heartbeat failed", { node_id: node.node_id, cause: (err as Error).message })
    );
  }, intervalMs);
  return {
    async setDraining(value) {
      draining = value;
      await heartbeat(sql, node.node_id, { draining });
    },
    async stop() {
      clearInterval(timer);
      await beating;
      // Leave the row, marked draining, so the node is not chosen while it is gone.
      await heartbeat(sql, node.node_id, { draining: true }).catch(() => {});
    },
  };
}
