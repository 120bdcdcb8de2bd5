-- What keeps a phone call's admission from being replayed or from filling the fleet
-- (docs/security.md "Phone calls"). Both are written by the reservation's own statement, so every
-- API process sharing this database sees them at once.
--
-- Keys an admission may use once: a SIP digest nonce, a carrier's id of the call, a Plivo
-- signature nonce. The primary key is the guard: a replay racing the first admission on another
-- process fails the whole statement (nothing written). Rows go once they expire.
CREATE TABLE admission_keys (
  key text PRIMARY KEY,
  session_id text NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX admission_keys_expiry ON admission_keys (expires_at);

-- The trunk and the source address of a phone session, so the sessions of one trunk or one
-- address that hold a slot before their call starts can be counted (as PENDING_SESSIONS_PER_KEY
-- counts a key's).
ALTER TABLE sessions ADD COLUMN phone_trunk_id text;
ALTER TABLE sessions ADD COLUMN phone_source text;
CREATE INDEX sessions_pending_trunk ON sessions (phone_trunk_id)
  WHERE status = 'created' AND holds_slot;
CREATE INDEX sessions_pending_source ON sessions (phone_source)
  WHERE status = 'created' AND holds_slot;
