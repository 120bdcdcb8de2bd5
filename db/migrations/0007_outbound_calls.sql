-- Outbound calls (issue 34). A trunk that calls out says where its SIP edge is and, when it
-- challenges, the digest credentials to answer with. These must be presented, so unlike the
-- inbound credentials (HA1 hashes) they are kept encrypted (AES-256-GCM, the key from
-- TRUNK_CREDENTIALS_KEY, never in the database): outbound_password_sealed is base64 of
-- iv (12 bytes) || ciphertext || tag.
ALTER TABLE trunks ADD COLUMN outbound_address text;
ALTER TABLE trunks ADD COLUMN outbound_transport text NOT NULL DEFAULT 'udp'
  CHECK (outbound_transport IN ('udp', 'tcp'));
ALTER TABLE trunks ADD COLUMN outbound_username text;
ALTER TABLE trunks ADD COLUMN outbound_password_sealed text;
ALTER TABLE trunks ADD CONSTRAINT trunks_outbound_credentials_whole
  CHECK ((outbound_username IS NULL) = (outbound_password_sealed IS NULL));

-- How far an outbound session's call got (common/dial.ts DialState); null for inbound sessions.
ALTER TABLE sessions ADD COLUMN dial_state text
  CHECK (dial_state IN ('dialing', 'ringing', 'answered'));
ALTER TABLE sessions ADD COLUMN direction text NOT NULL DEFAULT 'inbound'
  CHECK (direction IN ('inbound', 'outbound'));
