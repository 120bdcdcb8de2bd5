-- Pre-offer hold (docs/security.md). A connect reserves a node slot only until its hold ends
-- (PRE_OFFER_HOLD_SECONDS after the connect) unless the offer has come by then; the token stays
-- valid, and a later offer takes a slot again if the node has room.
-- sessions.holds_slot: whether the session is counted in its node's worker_nodes.active_calls.
-- Every release clears it in the same statement that decrements the counter, and only a session
-- that still holds its slot decrements it, so no slot is ever given back twice.
-- sessions.hold_until: when a `created` session's reservation lapses if no offer has come.
ALTER TABLE sessions ADD COLUMN holds_slot boolean NOT NULL DEFAULT false;
ALTER TABLE sessions ADD COLUMN hold_until timestamptz;
-- Sessions reserved before this migration keep the rule they were made under: their slot is
-- held until the call ends or the token expires unused.
UPDATE sessions SET holds_slot = true,
  hold_until = CASE WHEN status = 'created' THEN token_expires_at END
  WHERE node_id IS NOT NULL AND status IN ('created', 'connecting', 'active');
-- The sweeper's release, and the per-key count of sessions waiting for their offer.
CREATE INDEX sessions_holding ON sessions (hold_until) WHERE status = 'created' AND holds_slot;
CREATE INDEX sessions_pending_by_key ON sessions (key_id, hold_until)
  WHERE status = 'created' AND holds_slot;
