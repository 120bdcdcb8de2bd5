-- Signed webhooks (issue 37): a workspace's or an agent's endpoints, and an outbox of what they
-- are owed. An event is written by webhook_enqueue() inside the statement that writes the fact it
-- reports (db/sessions.ts), so a committed fact always has its deliveries and a rolled-back one
-- never does. Every API process delivers (api/webhooks/dispatcher.ts): a delivery is claimed with
-- `for update skip locked` and a short lease, so each is sent by one process at a time.
CREATE TABLE webhook_endpoints (
  id text PRIMARY KEY,
  workspace_id text NOT NULL REFERENCES workspaces(id),
  -- Null: every agent of the workspace.
  agent_id text REFERENCES agents(id),
  url text NOT NULL,
  description text NOT NULL DEFAULT '',
  -- The event types it receives; empty: all of them.
  event_types text[] NOT NULL DEFAULT '{}',
  enabled boolean NOT NULL DEFAULT true,
  -- `whsec_...` sealed under TRUNK_CREDENTIALS_KEY with the endpoint's id as additional data.
  secret_sealed text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- Deleted endpoints keep their delivery log; nothing new is queued for them.
  deleted_at timestamptz
);
CREATE INDEX webhook_endpoints_workspace ON webhook_endpoints (workspace_id) WHERE deleted_at IS NULL;

-- One event, sent identically (same webhook-id, same body) to every endpoint and on every retry.
CREATE TABLE webhook_events (
  id text PRIMARY KEY,
  type text NOT NULL,
  workspace_id text NOT NULL,
  agent_id text,
  session_id text,
  body text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- What one endpoint is owed of one event. `id` orders a session's events: a delivery waits while
-- an earlier one of the same session to the same endpoint is pending.
CREATE TABLE webhook_deliveries (
  id bigserial PRIMARY KEY,
  event_id text NOT NULL REFERENCES webhook_events(id),
  endpoint_id text NOT NULL REFERENCES webhook_endpoints(id),
  session_id text,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  -- The first attempt since it was queued or redelivered (null: none yet). Retries go on until
  -- an attempt fails this long after it (24 h by default), however long it waited its turn.
  retry_from timestamptz,
  leased_until timestamptz,
  lease text,
  last_status_code integer,
  last_error text,
  delivered_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_order ON webhook_deliveries (endpoint_id, session_id, id)
  WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id DESC);

-- The delivery log: every request made, with its outcome.
CREATE TABLE webhook_attempts (
  id bigserial PRIMARY KEY,
  delivery_id bigint NOT NULL REFERENCES webhook_deliveries(id),
  attempted_at timestamptz NOT NULL DEFAULT now(),
  status_code integer,
  error text,
  latency_ms integer NOT NULL,
  -- The first bytes of the receiver's reply (bounded), to show why it refused.
  response_excerpt text
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);

-- Writes an event and a delivery for each live endpoint that wants it; returns the event's id.
-- Called from inside the statement that writes the fact (a CTE referenced by the final select).
CREATE FUNCTION webhook_enqueue(
  p_type text, p_workspace_id text, p_agent_id text, p_session_id text, p_data jsonb
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  v_id text := 'msg_' || replace(gen_random_uuid()::text, '-', '');
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM webhook_endpoints e
    WHERE e.workspace_id = p_workspace_id AND e.deleted_at IS NULL AND e.enabled
      AND (e.agent_id IS NULL OR e.agent_id = p_agent_id)
      AND (cardinality(e.event_types) = 0 OR p_type = ANY (e.event_types))
  ) THEN
    RETURN NULL; -- nobody listens: nothing is written, so a call with no endpoint pays one probe
  END IF;
  INSERT INTO webhook_events (id, type, workspace_id, agent_id, session_id, body)
  VALUES (v_id, p_type, p_workspace_id, p_agent_id, p_session_id,
    jsonb_build_object('type', p_type,
      'timestamp', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'data', p_data)::text);
  INSERT INTO webhook_deliveries (event_id, endpoint_id, session_id)
  SELECT v_id, e.id, p_session_id FROM webhook_endpoints e
  WHERE e.workspace_id = p_workspace_id AND e.deleted_at IS NULL AND e.enabled
    AND (e.agent_id IS NULL OR e.agent_id = p_agent_id)
    AND (cardinality(e.event_types) = 0 OR p_type = ANY (e.event_types));
  RETURN v_id;
END;
$$;
