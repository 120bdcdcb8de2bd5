// Webhook signing secrets are sealed under TRUNK_CREDENTIALS_KEY (one sealing key for every secret
// the service must present or use later). With endpoints kept, the API does not start without the
// key or with one that does not open them: it could sign nothing.
import type { Sql } from "../../db/client.ts";
import { anySealedEndpoint } from "../../db/webhooks.ts";
import { open, TRUNK_CREDENTIALS_KEY } from "../../common/sealed.ts";

export async function checkWebhookKey(sql: Sql, key: CryptoKey | undefined): Promise<void> {
  const sealed = await anySealedEndpoint(sql);
  if (!sealed) return;
  if (!key) {
    throw new Error(
      `${TRUNK_CREDENTIALS_KEY} is not set, but webhook endpoints keep their signing secrets ` +
        `sealed under it (${sealed.endpoint_id} for one): set it to the key they were sealed with`,
    );
  }
  try {
    await open(key, sealed.secret_sealed, sealed.endpoint_id);
  } catch (err) {
    throw new Error(`${TRUNK_CREDENTIALS_KEY} is wrong: ${(err as Error).message}`);
  }
}
