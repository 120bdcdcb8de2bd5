-- The brain's own reason for ending a call (its EndSession text, at most 200 characters; the
-- worker cuts it), kept beside the service's status and end_reason (docs/session-record.md).
-- NULL when the brain did not end the call.
ALTER TABLE sessions ADD COLUMN brain_end_reason text
  CHECK (brain_end_reason IS NULL OR char_length(brain_end_reason) <= 200);
