// What the live worker nodes serve, as the API's routes read it: the nodes' matrices from the
// database, re-read at most every `maxAgeMs` per API process (connects in between share one
// read), so a node that goes stale or starts drops out of the capabilities within about a second.
import type { Sql } from "../db/client.ts";
import { liveServes } from "../db/nodes.ts";
import { type Capabilities, capabilitiesOf } from "../common/capabilities.ts";

export interface CapabilitySource {
  get(): Promise<Capabilities>;
}

export class LiveCapabilities implements CapabilitySource {
  #value?: Capabilities;
  #readAt = -Infinity;
  #reading?: Promise<Capabilities>;

  constructor(
    private sql: Sql,
    private staleSeconds: number,
    private maxAgeMs = 1000,
  ) {}

  get(): Promise<Capabilities> {
    if (this.#value && performance.now() - this.#readAt < this.maxAgeMs) {
      return Promise.resolve(this.#value);
    }
    this.#reading ??= liveServes(this.sql, this.staleSeconds).then((nodes) => {
      this.#value = capabilitiesOf(nodes);
      this.#readAt = performance.now();
      return this.#value;
    }).finally(() => this.#reading = undefined);
    return this.#reading;
  }
}
