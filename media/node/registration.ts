// The worker's node row: registered at start, heartbeated while alive, so that sessions.connect
// only ever chooses a node that is really there.
//
// The database may be away for a while: the heartbeat keeps trying at its interval (one at a
// time, so a hung connection does not pile up more), warns once per 30 s while it fails and says
// when it works again; nothing of it can stop the worker. A node whose heartbeat is stale longer
// than NODE_STALE_SECONDS has its calls failed `worker_lost` by the API (db/nodes.ts), whatever
// the worker does later.
import type { Pool } from "../../db/client.ts";
import { heartbeat, registerNode } from "../../db/nodes.ts";
import { logger } from "../../common/log.ts";
import type { ServeMatrix } from "../../common/capabilities.ts";
import { settlePendingEnds } from "../call/record_writer.ts";
import { WarningLimiter, within } from "../call/retry.ts";

const log = logger("node");
const warnings = new WarningLimiter(log);

/** The last try at call ends still waiting for the database, when the node stops. */
const SETTLE_ENDS_MS = 5000;

export interface NodeRegistration {
  setDraining(draining: boolean): Promise<void>;
  /**
   * What the node serves changed (a provider engine went down or came back): written now, and
   * by each heartbeat until a write succeeds. Never rejects.
   */
  setServes(serves: ServeMatrix): Promise<void>;
  /**
   * The node leaves: heartbeats stop, call ends still waiting for the database get a last
   * bounded try (5 s), and the row is left marked draining. Never rejects; bounded in time.
   */
  stop(): Promise<void>;
}

export async function registerWorkerNode(
  sql: Pool,
  node: {
    node_id: string;
    offer_base_url: string;
    capacity: number;
    serves: ServeMatrix;
    /** Where it takes SIP calls (SIP_PORT): the control plane's redirect sends trunks there. */
    sip_address?: string | null;
    sip_port?: number | null;
  },
  intervalMs = 2000,
): Promise<NodeRegistration> {
  await registerNode(sql, node);
  log.info("registered", { node_id: node.node_id, offer_base_url: node.offer_base_url });
  let draining = false;
  /** A matrix not written yet; cleared once a write of it succeeds. */
  let serves: ServeMatrix | undefined;
  let beating: Promise<void> | undefined;
  const beat = (): Promise<void> => {
    const sent = serves;
    return heartbeat(sql, node.node_id, { draining, serves: sent }).then(
      () => {
        if (serves === sent) serves = undefined;
        warnings.succeeded("heartbeat", "heartbeat written again", { node_id: node.node_id });
      },
      (err) =>
        warnings.failed("heartbeat", "heartbeat failed; retrying at each interval", {
          node_id: node.node_id,
          cause: (err as Error)?.message,
        }),
    );
  };
  const timer = setInterval(() => {
    if (beating) return; // the last one has not settled yet
    beating = beat().finally(() => (beating = undefined));
  }, intervalMs);
  return {
    async setDraining(value) {
      // The next heartbeat carries it if this write cannot be made.
      draining = value;
      await heartbeat(sql, node.node_id, { draining });
    },
    async setServes(value) {
      serves = value;
      log.info("serves changed", {
        node_id: node.node_id,
        stt_languages: Object.keys(value).filter((l) => value[l].stt).length,
        tts_languages: Object.keys(value).filter((l) => value[l].tts).length,
      });
      // One write at a time: after one in flight, this one carries the latest matrix.
      if (beating) await beating.catch(() => {});
      beating ??= beat().finally(() => (beating = undefined));
      await beating;
    },
    async stop() {
      clearInterval(timer);
      if (beating) await within(beating, intervalMs, undefined);
      await settlePendingEnds(SETTLE_ENDS_MS);
      // Leave the row, marked draining, so the node is not chosen while it is gone.
      await within(
        heartbeat(sql, node.node_id, { draining: true }).catch(() => {}),
        intervalMs,
        undefined,
      );
    },
  };
}
