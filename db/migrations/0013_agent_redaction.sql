-- Redaction per agent (issue 37): which categories of what a customer must not keep (common/
-- redaction.ts) the worker replaces by placeholders before anything of a call is written. A table
-- of its own, keyed by agent: no row, or an empty list, redacts nothing.
CREATE TABLE agent_redaction (
  agent_id text PRIMARY KEY REFERENCES agents(id),
  categories text[] NOT NULL DEFAULT '{}'
    CHECK (categories <@ ARRAY['card', 'account', 'phone', 'email', 'aadhaar', 'pan', 'keypad']),
  updated_at timestamptz NOT NULL DEFAULT now()
);
