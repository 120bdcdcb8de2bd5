-- Control plane: workspaces, agents, keys, worker nodes, sessions, their log and usage.

CREATE TABLE workspaces (
  id text PRIMARY KEY,
  name text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE agents (
  id text PRIMARY KEY,
  workspace_id text NOT NULL REFERENCES workspaces(id),
  name text NOT NULL,
  brain_url text NOT NULL,
  record_by_default boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
CREATE INDEX agents_workspace ON agents (workspace_id);

-- Only the keyed hash of a key is kept; the raw key is shown once.
CREATE TABLE api_keys (
  id text PRIMARY KEY,
  agent_id text NOT NULL REFERENCES agents(id),
  workspace_id text NOT NULL REFERENCES workspaces(id),
  kind text NOT NULL CHECK (kind IN ('secret', 'publishable')),
  key_hash bytea NOT NULL UNIQUE,
  prefix text NOT NULL,
  allowed_origins text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX api_keys_agent ON api_keys (agent_id);

CREATE TABLE worker_nodes (
  id text PRIMARY KEY,
  offer_base_url text NOT NULL,
  capacity integer NOT NULL CHECK (capacity >= 0),
  active_calls integer NOT NULL DEFAULT 0 CHECK (active_calls >= 0),
  heartbeat_at timestamptz NOT NULL DEFAULT now(),
  draining boolean NOT NULL DEFAULT false,
  started_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sessions (
  id text PRIMARY KEY,
  agent_id text NOT NULL REFERENCES agents(id),
  workspace_id text NOT NULL REFERENCES workspaces(id),
  key_id text REFERENCES api_keys(id),
  status text NOT NULL
    CHECK (status IN ('created', 'connecting', 'active', 'ended', 'failed', 'expired')),
  end_reason text,
  node_id text REFERENCES worker_nodes(id),
  token_id text,
  token_expires_at timestamptz,
  agent_input jsonb NOT NULL,
  display_name text,
  metadata jsonb NOT NULL DEFAULT '{}',
  record_requested boolean,
  record_effective boolean NOT NULL DEFAULT false,
  recording_url text,
  turns jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz NOT NULL DEFAULT now(),
  connected_at timestamptz,
  started_at timestamptz,
  ended_at timestamptz
);
CREATE INDEX sessions_agent_created ON sessions (agent_id, created_at DESC, id DESC);
CREATE INDEX sessions_created ON sessions (created_at DESC, id DESC);
-- The sweeper looks for reservations whose token ran out unused.
CREATE INDEX sessions_unused ON sessions (token_expires_at) WHERE status = 'created';

CREATE TABLE session_events (
  id bigserial PRIMARY KEY,
  session_id text NOT NULL REFERENCES sessions(id),
  at timestamptz NOT NULL DEFAULT now(),
  source text NOT NULL,
  kind text NOT NULL,
  data jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX session_events_session ON session_events (session_id, id);

CREATE TABLE usage (
  session_id text PRIMARY KEY REFERENCES sessions(id),
  workspace_id text NOT NULL REFERENCES workspaces(id),
  agent_id text NOT NULL REFERENCES agents(id),
  call_seconds double precision NOT NULL DEFAULT 0,
  recognised_seconds double precision NOT NULL DEFAULT 0,
  synthesized_characters integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Generated secrets (token signing key, key hash secret) when the environment gives none.
CREATE TABLE service_settings (
  name text PRIMARY KEY,
  value text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
