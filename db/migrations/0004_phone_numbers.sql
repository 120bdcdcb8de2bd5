-- Phone numbers and SIP trunks (docs/phone-numbers.md). A number (E.164) leads to an agent; a
-- trunk says who may send its calls: source addresses (CIDRs) and/or a digest username whose
-- password is kept only as its HA1 hashes (RFC 7616: H(username:realm:password), MD5 for RFC 2617
-- clients and SHA-256 for RFC 8760 ones). The password itself is never stored.
CREATE TABLE trunks (
  id text PRIMARY KEY,
  name text NOT NULL,
  allowed_sources text[] NOT NULL DEFAULT '{}',
  auth_username text,
  auth_realm text,
  auth_ha1_md5 text,
  auth_ha1_sha256 text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- Credentials come whole or not at all, and a trunk checks something.
  CHECK ((auth_username IS NULL) = (auth_ha1_md5 IS NULL)
    AND (auth_username IS NULL) = (auth_ha1_sha256 IS NULL)
    AND (auth_username IS NULL) = (auth_realm IS NULL)),
  CHECK (auth_username IS NOT NULL OR cardinality(allowed_sources) > 0)
);

CREATE TABLE phone_numbers (
  number text PRIMARY KEY CHECK (number ~ '^\+[0-9]{8,15}$'),
  agent_id text NOT NULL REFERENCES agents(id),
  trunk_id text REFERENCES trunks(id),
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX phone_numbers_agent ON phone_numbers (agent_id);
CREATE INDEX phone_numbers_trunk ON phone_numbers (trunk_id);

-- Where a worker takes SIP calls, when it runs SIP (null: it takes web calls only, and is never
-- chosen for a phone call).
ALTER TABLE worker_nodes ADD COLUMN sip_address text;
ALTER TABLE worker_nodes ADD COLUMN sip_port integer CHECK (sip_port BETWEEN 1 AND 65535);
