-- Issue 36: how readily an agent's bot yields to speech over it, and how patiently it waits at
-- the caller's pauses (common/turn_sensitivity.ts). A call's connect config may still choose.
ALTER TABLE agents
  ADD COLUMN interruption_sensitivity text NOT NULL DEFAULT 'medium'
    CHECK (interruption_sensitivity IN ('low', 'medium', 'high')),
  ADD COLUMN turn_patience text NOT NULL DEFAULT 'medium'
    CHECK (turn_patience IN ('low', 'medium', 'high'));
