-- Speech engines per node and usage per engine (issue 9).
-- worker_nodes.serves: what the node's engines serve (common/capabilities.ts ServeMatrix:
-- language → stt engines and persona → tts engines, in routing order). Node choice only picks a
-- node that serves the call's voice and languages; /api/v1/capabilities merges the live ones.
ALTER TABLE worker_nodes ADD COLUMN serves jsonb NOT NULL DEFAULT '{}';
-- usage.by_engine: engine name → {recognised_seconds, synthesized_characters} on that call, so a
-- deployment can bill and compare providers.
ALTER TABLE usage ADD COLUMN by_engine jsonb NOT NULL DEFAULT '{}';
