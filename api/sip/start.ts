// Starts the SIP redirect server beside an API process (SIP_REDIRECT_PORT, or `deno task run`'s
// default): UDP and TCP on one port, answering trunks' INVITEs with 302 to a worker.
import { createHmac } from "node:crypto";
import type { ApiDeps } from "../context.ts";
import { DigestNonces } from "./digest.ts";
import { phoneCallDecision } from "./phone_calls.ts";
import { SipRedirectServer } from "./redirect.ts";

/** How long a digest nonce is good for; an older one earns a 401 with stale=true. */
export const NONCE_LIFETIME_SECONDS = 300;

/**
 * The nonce key, derived from the key hash secret every API process shares (so a nonce one
 * process issued verifies on any other) without using that secret itself for a second job.
 */
export function nonceSecret(hashSecret: string): string {
  return createHmac("sha256", hashSecret).update("sip digest nonce").digest("hex");
}

export async function startSipRedirect(
  deps: ApiDeps,
  options: { host: string; port: number },
): Promise<SipRedirectServer> {
  const nonces = new DigestNonces(nonceSecret(deps.hashSecret), NONCE_LIFETIME_SECONDS);
  const server = new SipRedirectServer({
    host: options.host,
    port: options.port,
    decide: phoneCallDecision(deps, nonces),
  });
  await server.listen();
  return server;
}
