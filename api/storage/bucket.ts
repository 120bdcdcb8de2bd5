// One agent's bucket, as the API reaches it (issue 37): Signature V4 with aws4fetch (a maintained,
// dependency-free SigV4 signer on fetch, which runs unchanged under Deno), path-style URLs on a
// custom endpoint (MinIO, R2, GCS interop) and virtual-hosted ones on AWS itself. The API is the
// only process that opens the secret: workers get presigned PUT URLs (api/storage/signer.ts).
import { AwsClient } from "aws4fetch";
import { open, TRUNK_CREDENTIALS_KEY } from "../../common/sealed.ts";
import type { Sql } from "../../db/client.ts";
import type { SealedStorage } from "../../db/agent_storage.ts";

/** The additional data a storage secret is sealed with: the agent it belongs to. */
export const storageOwner = (agentId: string) => `storage:${agentId}`;

export interface Bucket {
  bucket: string;
  /** The object's URL (what the record's recording location says). */
  objectUrl(key: string): string;
  /** A PUT URL anyone holding it may use for `seconds`. */
  presignPut(key: string, seconds: number): Promise<string>;
  /** Deletes an object; a missing one counts as deleted (S3 answers 204 either way). */
  remove(key: string): Promise<void>;
}

const encodeKey = (key: string) => key.split("/").map(encodeURIComponent).join("/");

export function bucketUrl(s: { bucket: string; region: string; endpoint: string | null }) {
  return s.endpoint
    ? `${s.endpoint.replace(/\/+$/, "")}/${encodeURIComponent(s.bucket)}`
    : `https://${s.bucket}.s3.${s.region}.amazonaws.com`;
}

export async function openBucket(key: CryptoKey, s: SealedStorage): Promise<Bucket> {
  if (!s.bucket || !s.access_key_id || !s.secret_sealed) {
    throw new Error(`agent ${s.agent_id} has no bucket`);
  }
  const client = new AwsClient({
    accessKeyId: s.access_key_id,
    secretAccessKey: await open(key, s.secret_sealed, storageOwner(s.agent_id)),
    service: "s3",
    region: s.region,
  });
  const base = bucketUrl({ bucket: s.bucket, region: s.region, endpoint: s.endpoint });
  const objectUrl = (k: string) => `${base}/${encodeKey(k)}`;
  return {
    bucket: s.bucket,
    objectUrl,
    async presignPut(k, seconds) {
      const url = new URL(objectUrl(k));
      url.searchParams.set("X-Amz-Expires", String(seconds));
      const signed = await client.sign(url.href, { method: "PUT", aws: { signQuery: true } });
      return signed.url;
    },
    async remove(k) {
      const r = await client.fetch(objectUrl(k), { method: "DELETE" });
      const text = await r.text();
      if (!r.ok && r.status !== 404) {
        throw new Error(`the bucket answered ${r.status} to DELETE ${k}: ${text.slice(0, 200)}`);
      }
    },
  };
}

/**
 * As for trunks (api/service.ts): with sealed bucket secrets kept, the API does not start without
 * TRUNK_CREDENTIALS_KEY or with one that does not open them; its recordings could only pile up.
 */
export async function checkStorageKey(sql: Sql, key: CryptoKey | undefined) {
  const [row] = await sql<{ agent_id: string; secret_sealed: string }[]>`
    select agent_id, secret_sealed from agent_storage where secret_sealed is not null
    order by agent_id limit 1`;
  if (!row) return key;
  if (!key) {
    throw new Error(
      `${TRUNK_CREDENTIALS_KEY} is not set, but agents keep bucket secrets sealed under it ` +
        `(${row.agent_id} for one): set it to the key they were sealed with`,
    );
  }
  try {
    await open(key, row.secret_sealed, storageOwner(row.agent_id));
  } catch (err) {
    throw new Error(`${TRUNK_CREDENTIALS_KEY} is wrong: ${(err as Error).message}`);
  }
  return key;
}
