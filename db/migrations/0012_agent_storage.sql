-- Recordings in the customer's own bucket, and retention (issue 37). A table of its own, keyed by
-- agent, rather than columns on agents. The secret access key is sealed (common/sealed.ts) under
-- TRUNK_CREDENTIALS_KEY with `storage:{agent_id}` as additional data; only the API opens it.
CREATE TABLE agent_storage (
  agent_id text PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
  -- null: no bucket (recordings stay local); retention may still be set.
  bucket text,
  prefix text NOT NULL DEFAULT '',
  region text NOT NULL DEFAULT 'us-east-1',
  -- null: AWS S3 itself (https://s3.{region}.amazonaws.com); R2, MinIO, GCS interop name theirs.
  endpoint text,
  access_key_id text,
  secret_sealed text,
  CHECK ((bucket IS NULL) = (access_key_id IS NULL) AND (bucket IS NULL) = (secret_sealed IS NULL)),
  -- Days a session record and its recording are kept; 0 keeps them.
  retention_days integer NOT NULL DEFAULT 0 CHECK (retention_days BETWEEN 0 AND 36500),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- One row per recording bound for a bucket, written by the worker when the call's recording is
-- closed and kept after it is stored (retention deletes the objects it names). The worker owns
-- the upload (it has the file); the API signs it: it writes short-lived presigned PUT URLs here,
-- so the bucket's credentials never leave the API.
CREATE TABLE recording_uploads (
  session_id text PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
  agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  local_path text NOT NULL,
  -- Object keys without the bucket: {prefix}/{agent_id}/{session_id}.wav and .json.
  wav_key text NOT NULL,
  json_key text NOT NULL,
  -- The bucket's place when signed; retention deletes there even if the agent moves buckets.
  bucket text,
  object_url text,
  wav_put_url text,
  json_put_url text,
  urls_expire_at timestamptz,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'stored')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  stored_at timestamptz
);
CREATE INDEX recording_uploads_pending ON recording_uploads (next_attempt_at) WHERE status = 'pending';

-- What retention deleted, durably (the log line is not enough for an auditor).
CREATE TABLE retention_deletions (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  agent_id text NOT NULL,
  session_id text NOT NULL,
  session_created_at timestamptz NOT NULL,
  retention_days integer NOT NULL,
  -- {local_recording: path|null, objects: [keys], bucket}
  deleted jsonb NOT NULL
);
