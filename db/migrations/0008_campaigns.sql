-- Outbound campaigns (issue 34): a list of numbers an agent calls, a few at a time, inside each
-- contact's local calling window, with retries. Everything the scheduler knows is here, so an API
-- restart resumes a campaign where it was, and every dial is claimed by a row before it is placed
-- (api/campaigns/scheduler.ts): one attempt row per (contact, attempt number), never two.
CREATE TABLE campaigns (
  id text PRIMARY KEY,
  workspace_id text NOT NULL REFERENCES workspaces(id),
  agent_id text NOT NULL REFERENCES agents(id),
  from_number text NOT NULL CHECK (from_number ~ '^\+[1-9][0-9]{7,14}$'),
  trunk_id text REFERENCES trunks(id),
  name text NOT NULL,
  status text NOT NULL DEFAULT 'scheduled'
    CHECK (status IN ('scheduled', 'running', 'paused', 'cancelled', 'done')),
  -- Not before this instant (null: at once); the scheduler turns `scheduled` into `running`.
  starts_at timestamptz,
  concurrency integer NOT NULL DEFAULT 1 CHECK (concurrency BETWEEN 1 AND 1000),
  -- Local wall-clock times, HH:MM, start inclusive, end exclusive, in each contact's time zone.
  -- 09:00-21:00 by default: India's telemarketing hours (TRAI TCCCPR 2018).
  window_start text NOT NULL DEFAULT '09:00' CHECK (window_start ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
  window_end text NOT NULL DEFAULT '21:00' CHECK (window_end ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
  CHECK (window_start < window_end),
  time_zone text NOT NULL DEFAULT 'Asia/Kolkata',
  max_attempts integer NOT NULL DEFAULT 3 CHECK (max_attempts BETWEEN 1 AND 10),
  -- Fixed gap between a retryable outcome and the next attempt.
  retry_backoff_seconds integer NOT NULL DEFAULT 1800
    CHECK (retry_backoff_seconds BETWEEN 0 AND 604800),
  retry_on text[] NOT NULL DEFAULT '{no_answer,busy}',
  ring_timeout_seconds integer NOT NULL DEFAULT 30 CHECK (ring_timeout_seconds BETWEEN 5 AND 120),
  machine_detection text NOT NULL DEFAULT 'off'
    CHECK (machine_detection IN ('off', 'hang_up', 'leave_message')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX campaigns_workspace ON campaigns (workspace_id, created_at DESC, id DESC);
CREATE INDEX campaigns_live ON campaigns (status) WHERE status IN ('scheduled', 'running');

-- A contact is its campaign and its index in the create request (the index a refusal names).
CREATE TABLE campaign_contacts (
  campaign_id text NOT NULL REFERENCES campaigns(id),
  contact_index integer NOT NULL CHECK (contact_index >= 0),
  number text NOT NULL CHECK (number ~ '^\+[1-9][0-9]{7,14}$'),
  -- What the brain is given for this call (the session's agent_input), and its language.
  data jsonb NOT NULL DEFAULT '{}',
  language text,
  time_zone text NOT NULL,
  state text NOT NULL DEFAULT 'pending'
    CHECK (state IN ('pending', 'dialing', 'done', 'failed', 'cancelled')),
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at timestamptz NOT NULL,
  last_outcome text,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (campaign_id, contact_index)
);
CREATE INDEX campaign_contacts_due ON campaign_contacts (campaign_id, next_attempt_at)
  WHERE state = 'pending';

-- One row per dial: written (the claim) in the same transaction that marks its contact `dialing`,
-- before the dial is placed. outcome null: in progress.
CREATE TABLE campaign_attempts (
  campaign_id text NOT NULL,
  contact_index integer NOT NULL,
  attempt integer NOT NULL CHECK (attempt >= 1),
  -- The scheduler that claimed it (campaign_schedulers): its claims without a session are
  -- settled `dial_lost` once it stops being seen.
  claimed_by text NOT NULL,
  session_id text UNIQUE REFERENCES sessions(id),
  outcome text,
  refusal_code text,
  started_at timestamptz NOT NULL,
  ended_at timestamptz,
  PRIMARY KEY (campaign_id, contact_index, attempt),
  FOREIGN KEY (campaign_id, contact_index) REFERENCES campaign_contacts (campaign_id, contact_index)
);
CREATE INDEX campaign_attempts_open ON campaign_attempts (campaign_id) WHERE outcome IS NULL;

-- Each API process's scheduler says it is alive here on every beat.
CREATE TABLE campaign_schedulers (
  id text PRIMARY KEY,
  seen_at timestamptz NOT NULL
);
