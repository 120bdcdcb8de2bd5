// A customer's webhook receiver: a real HTTP server on a loopback port that verifies every
// request with npm:standardwebhooks (the specification's TypeScript library) and keeps what it
// accepted, in arrival order. It can go down (its port closed: connection refused) and come back
// on the same port.
import { Webhook } from "standardwebhooks";

export interface Received {
  id: string;
  type: string;
  // deno-lint-ignore no-explicit-any
  data: any;
  timestamp: string;
  at: number;
}

export class WebhookReceiver {
  readonly received: Received[] = [];
  /** Requests whose signature did not verify (none, if we sign as the spec says). */
  readonly refused: string[] = [];
  /** Every request's webhook-id, accepted or not, in arrival order. */
  readonly seenIds: string[] = [];
  #server?: Deno.HttpServer<Deno.NetAddr>;
  #ac?: AbortController;
  port = 0;
  /** The status to answer with (a 2xx accepts). */
  answer = 204;
  /** How long to take over each answer (a slow receiver keeps deliveries in flight). */
  delayMs = 0;

  constructor(private secret = "") {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  setSecret(secret: string): void {
    this.secret = secret;
  }

  up(): void {
    this.#ac = new AbortController();
    this.#server = Deno.serve({
      hostname: "127.0.0.1",
      port: this.port,
      signal: this.#ac.signal,
      onListen: () => {},
    }, (req) => this.#handle(req));
    this.port = this.#server.addr.port;
  }

  async down(): Promise<void> {
    this.#ac?.abort();
    await this.#server?.finished;
    this.#server = undefined;
  }

  /** Waits until `n` events were accepted (or throws after `ms`). */
  async waitFor(n: number, ms = 15_000): Promise<Received[]> {
    const until = Date.now() + ms;
    while (this.received.length < n) {
      if (Date.now() > until) {
        throw new Error(`${this.received.length} of ${n} webhooks arrived within ${ms} ms`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.received;
  }

  async #handle(req: Request): Promise<Response> {
    const body = await req.text();
    if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
    const headers = Object.fromEntries(req.headers);
    this.seenIds.push(headers["webhook-id"]);
    try {
      // deno-lint-ignore no-explicit-any
      const event = new Webhook(this.secret).verify(body, headers) as any;
      if (this.answer >= 200 && this.answer < 300) {
        this.received.push({
          id: headers["webhook-id"],
          type: event.type,
          data: event.data,
          timestamp: event.timestamp,
          at: Date.now(),
        });
      }
      return new Response(null, { status: this.answer });
    } catch (err) {
      this.refused.push(`${headers["webhook-id"]}: ${(err as Error).message}`);
      return new Response("bad signature", { status: 400 });
    }
  }
}
