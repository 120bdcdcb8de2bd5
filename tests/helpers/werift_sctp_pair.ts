// Two werift SCTP associations joined by an in-memory path that drops packets at a seeded random
// rate each way and delays each by a fixed one-way time: the worker's and a werift caller's SCTP
// without DTLS or ICE. The drops come from the seed, so a run repeats closely (the order of timers
// on a busy machine can still move a drop from one packet to the next).
import { RTCSctpTransport } from "werift";
import { mulberry32 } from "../../caller/lossy_link.ts";

// werift's SCTP association (its class is not in werift's exported types).
// deno-lint-ignore no-explicit-any
type SCTP = any;

export interface SctpPairOptions {
  seed: number;
  /** Share of packets lost each way, 0..1. */
  loss: number;
  /** One-way delay, ms. */
  delayMs: number;
}

export interface SctpPair {
  worker: SCTP;
  caller: SCTP;
  close(): Promise<void>;
}

/** One side's DTLS as werift's SCTP transport sees it: data out, and a receiver for data in. */
interface FakeDtls {
  id: string;
  onStateChange: { subscribe: () => { unSubscribe: () => void } };
  sendData(data: Uint8Array): Promise<void>;
  dataReceiver?: (data: Uint8Array) => void;
}

/**
 * Starts the pair and resolves once both associations are established. Each association is made
 * the way the product makes it, by werift's RTCSctpTransport, so this project's werift patches
 * apply; only the DTLS under it is replaced by the lossy in-memory path.
 */
export async function lossySctpPair(options: SctpPairOptions): Promise<SctpPair> {
  const random = mulberry32(options.seed);
  let closed = false;
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const ends: FakeDtls[] = [];
  const dtls = (id: string, to: () => FakeDtls): FakeDtls => ({
    id,
    onStateChange: { subscribe: () => ({ unSubscribe: () => {} }) },
    sendData(data) {
      if (!closed && random() >= options.loss) {
        const copy = Buffer.from(data);
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (!closed) to().dataReceiver?.(copy);
        }, options.delayMs);
        timers.add(timer);
      }
      return Promise.resolve();
    },
  });
  ends.push(dtls("worker", () => ends[1]), dtls("caller", () => ends[0]));
  const association = (end: FakeDtls, isServer: boolean): SCTP => {
    const transport = new RTCSctpTransport();
    // deno-lint-ignore no-explicit-any
    (transport as any).setDtlsTransport(end);
    // deno-lint-ignore no-explicit-any
    const sctp = (transport as any).sctp;
    sctp.isServer = isServer;
    return sctp;
  };
  const worker = association(ends[0], true);
  const caller = association(ends[1], false);
  const connected = (s: SCTP) => s.stateChanged.connected.asPromise();
  const both = Promise.all([connected(worker), connected(caller)]);
  await worker.start(5000);
  await caller.start(5000);
  await both;
  return {
    worker,
    caller,
    close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      for (const s of [worker, caller]) {
        s.isStopping = true;
        s.timer1Cancel?.();
        s.timer2Cancel?.();
        s.timer3Cancel?.();
        s.timerReconfigCancel?.();
        s.heartbeatCancel?.();
      }
      return Promise.resolve();
    },
  };
}

/** What `longestDeliveryGap` saw. */
export interface DeliveryGaps {
  /** Longest time, ms, the caller went without a new message while one was due. */
  longestGapMs: number;
  sent: number;
  received: number;
  /** Whether the worker's sent queue emptied (everything acknowledged) after the last send. */
  drained: boolean;
}

/**
 * Sends a message of `bytes` from worker to caller every `everyMs` plus up to `spreadMs` (seeded)
 * for `seconds`, as werift's data channel does (one message at a time into SCTP, in order), then
 * waits up to `drainMs` for the worker to have everything acknowledged.
 */
export async function longestDeliveryGap(
  pair: SctpPair,
  seconds: number,
  { everyMs = 100, spreadMs = 0, bytes = 100, burst = 1, drainMs = 0 } = {},
): Promise<DeliveryGaps> {
  let last = Date.now();
  let longest = 0;
  let received = 0;
  pair.caller.onReceive.subscribe(() => {
    const now = Date.now();
    longest = Math.max(longest, now - last);
    last = now;
    received++;
  });
  const payload = new TextEncoder().encode(
    JSON.stringify({ type: "bot-event", pad: "x".repeat(Math.max(0, bytes - 30)) }),
  );
  let sent = 0;
  const spread = mulberry32(7);
  const start = Date.now();
  let queue = Promise.resolve();
  while (Date.now() - start < seconds * 1000) {
    for (let i = 0; i < burst; i++) {
      sent++;
      queue = queue.then(() => pair.worker.send(1, 51, Buffer.from(payload)).catch(() => {}));
    }
    await new Promise((r) => setTimeout(r, everyMs + spread() * spreadMs));
  }
  const drainUntil = Date.now() + drainMs;
  const busy = () => pair.worker.sentQueue.length > 0 || pair.worker.outboundQueue.length > 0;
  while (Date.now() < drainUntil && (busy() || received < sent)) {
    await new Promise((r) => setTimeout(r, 50));
  }
  if (received < sent) longest = Math.max(longest, Date.now() - last);
  return { longestGapMs: longest, sent, received, drained: !busy() };
}
